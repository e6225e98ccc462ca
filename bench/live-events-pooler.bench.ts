/**
 * bench/live-events.bench.ts through a transaction pooler: both engines reach PostgreSQL through Debian's pgbouncer
 * in transaction mode (started for the run, as the postgres user, 20 server connections), as DATABASE_URL would point
 * at a managed pooled URL, and LISTEN goes over a direct connection (DATABASE_DIRECT_URL's role). Same load, same
 * target: an event published on one engine is on a stream of the other within 250 ms, p99.
 */
import type { RunResult } from './lib/benchmark.ts';
import { envNumber } from './lib/benchmark.ts';
import { runPhoneBench } from './lib/phone-bench.ts';

export const name = 'live-events-pooler';
export const title = 'Live events across engines, through pgbouncer in transaction mode';

export function run(): Promise<RunResult> {
  if (!process.env.BENCH_DATABASE_URL) throw new Error(`${name}: two engines need one PostgreSQL; set BENCH_DATABASE_URL.`);
  return runPhoneBench({ name, engines: 2, watchers: envNumber('LIVE_EVENTS_WATCHERS', 40, { min: 1 }), pooler: true });
}
