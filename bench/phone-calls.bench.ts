/**
 * The phone channel at scale: PHONE_BENCH_CALLS (1 000) concurrent ConversationRelay calls against
 * one engine process, a prompt every 2 s per call (500 turns/s), each answered by a loopback HTTPS integrator in 50 ms.
 * PHONE_BENCH_ENGINES (1) runs more engines on one PostgreSQL (bench/phone-scale-out.bench.ts runs two). Targets
 * (on PostgreSQL): overhead beyond the integrator p50 ≤ 3 ms, p99 ≤ 25 ms, the engine's event-loop delay
 * p99 ≤ 20 ms, no prompt unanswered. How it runs and what it measures: bench/lib/phone-bench.ts.
 */
import { envNumber } from './lib/benchmark.ts';
import type { RunResult } from './lib/benchmark.ts';
import { runPhoneBench } from './lib/phone-bench.ts';

export const name = 'phone-calls';
export const title = 'Phone calls: 1,000 live calls on one engine';

export function run(): Promise<RunResult> {
  return runPhoneBench({ name, engines: envNumber('PHONE_BENCH_ENGINES', 1, { min: 1 }) });
}
