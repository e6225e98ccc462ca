/**
 * Scale-out: the phone-calls benchmark with two engine processes on one PostgreSQL
 * (BENCH_DATABASE_URL, required), the callers split between them (call i on engine i mod 2, each call staying on its
 * engine, as a call's socket pins it to one process). Reports the same figures as phone-calls plus the per-session
 * lease overhead: the lease statements per turn, their round-trip time per turn, and their share of the engines'
 * statement time. Both engines, the callers and the integrator share this machine's cores, so two engines here do not
 * get twice the CPU of one. How it runs: bench/lib/phone-bench.ts.
 */
import type { RunResult } from './lib/benchmark.ts';
import { envNumber } from './lib/benchmark.ts';
import { runPhoneBench } from './lib/phone-bench.ts';

export const name = 'phone-scale-out';
export const title = 'Phone calls: two engines on one PostgreSQL';

export function run(): Promise<RunResult> {
  return runPhoneBench({ name, engines: envNumber('PHONE_SCALE_OUT_ENGINES', 2, { min: 2 }) });
}
