/**
 * Live events across engines: the phone benchmark's load (PHONE_BENCH_CALLS, 1,000 calls, 500 turns/s) on two engines
 * on one PostgreSQL (BENCH_DATABASE_URL, required), and LIVE_EVENTS_WATCHERS (40) dashboard streams, each opened on
 * the other engine than the call it watches. Measured: from an event's publishing on one engine (its `at`) to its
 * arrival on a stream of the other, for every turn of a watched call (matched by the prompt's id: a turn whose event
 * never arrives makes the run invalid). Target: p99 ≤ 250 ms. How the bus carries it: src/events/live-bus.ts (a
 * NOTIFY, and a poll every second as the backstop). bench/live-events-pooler.bench.ts runs the same through pgbouncer.
 */
import type { RunResult } from './lib/benchmark.ts';
import { envNumber } from './lib/benchmark.ts';
import { runPhoneBench } from './lib/phone-bench.ts';

export const name = 'live-events';
export const title = 'Live events across engines: a turn on one engine on a stream of another';

export function run(): Promise<RunResult> {
  if (!process.env.BENCH_DATABASE_URL) throw new Error(`${name}: two engines need one PostgreSQL; set BENCH_DATABASE_URL.`);
  return runPhoneBench({ name, engines: 2, watchers: envNumber('LIVE_EVENTS_WATCHERS', 40, { min: 1 }) });
}
