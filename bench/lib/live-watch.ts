/**
 * The live-events part of the phone benchmark (bench/live-events.bench.ts): dashboard streams on one engine watching
 * calls another engine handles (bench/processes/live-watchers.ts), and what they saw. Each watched call's turns are
 * known by id from the callers' results, so a turn whose event never reached the other engine's stream is counted.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Metric } from './benchmark.ts';
import { nextMessage } from './child-message.ts';
import { round, summarize } from './stats.ts';
import type { WatchersConfig, WatchersReport } from '../processes/live-watchers.ts';
import { callSid } from '../processes/phone-callers.ts';

/** A user may hold this many streams (MAX_STREAMS_PER_USER is 8); the watchers use several users. */
const STREAMS_PER_USER = 6;
/** Cross-engine target: an event published on one engine is on another's stream within this, p99 (ms). */
const TARGET_P99_MS = 250;

type FromWatchers = { type: 'open'; failed: string[] } | WatchersReport;

export type Watchers = Awaited<ReturnType<typeof startWatchers>>;

async function api(base: string, method: string, path: string, token: string | null, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/**
 * Streams for calls 0..count-1, each on the engine after the one its call is on (call i is on engine i mod n), opened
 * by agents added to the workspace (their own sign-in through an invite).
 */
export async function startWatchers(options: { count: number; engineUrls: string[]; owner: string; db: Db }) {
  const { count, engineUrls, owner, db } = options;
  const base = engineUrls[0]!;
  const tokens: string[] = [];
  for (let u = 0; u < Math.ceil(count / STREAMS_PER_USER); u++) {
    const email = `watcher${u}-${Date.now().toString(36)}@bench.example`;
    const made = await api(base, 'POST', '/v1/users', owner, { email, role: 'agent' });
    const invite = new URL(made.invite_url as string).hash.slice(1);
    tokens.push((await api(base, 'POST', '/v1/auth/password', null, { invite, password: `bench-watcher-password-${u}` })).token as string);
  }
  const sids = Array.from({ length: count }, (_v, i) => callSid(i));
  const { rows } = await sql<{ id: string; external_id: string }>`select id, external_id from sessions where channel = 'phone' and external_id in (${sql.join(sids)})`.execute(db);
  const idOf = new Map(rows.map((r) => [r.external_id, r.id]));
  const streams: WatchersConfig['streams'] = [];
  sids.forEach((sid, call) => {
    const sessionId = idOf.get(sid);
    if (sessionId) streams.push({ url: engineUrls[(call + 1) % engineUrls.length]!, token: tokens[Math.floor(call / STREAMS_PER_USER)]!, sessionId, call });
  });
  const child = fork(new URL('../processes/live-watchers.ts', import.meta.url), [], {
    execPath: process.execPath,
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, LIVE_WATCHERS_CONFIG: JSON.stringify({ streams } satisfies WatchersConfig) },
  });
  const exited = once(child, 'exit');
  const next = <T extends FromWatchers['type']>(type: T) => nextMessage<FromWatchers, T>(child, type, 'the live watchers');
  const { failed } = await next('open');
  return {
    /** Calls watched (their session existed and a stream was asked for). */
    calls: new Set(streams.map((s) => s.call)),
    failed: [...(streams.length < count ? [`${count - streams.length} watched calls had no session`] : []), ...failed],
    record: () => child.send({ type: 'record' }),
    report: () => {
      const reply = next('report');
      child.send({ type: 'report' });
      return reply;
    },
    async stop() {
      if (child.connected) child.disconnect();
      await exited;
    },
  };
}

/**
 * The figures: the latency over every event seen, and the measured turns of watched calls whose event no stream
 * showed (`answered`: the callers' answered prompt ids, `<call>:<n>`).
 */
export function crossEngineFigures(watchers: Watchers, report: WatchersReport, answered: readonly string[]): { metrics: Metric[]; invalid: string[] } {
  const seen = new Set(report.seen);
  const expected = answered.filter((id) => watchers.calls.has(Number(id.split(':')[0])));
  const missing = expected.filter((id) => !seen.has(id));
  const latency = summarize(report.latenciesMs);
  const invalid = [
    ...watchers.failed.map((f) => `A watcher's stream could not be opened: ${f}.`),
    ...report.broken.map((b) => `A watcher's stream broke: ${b}.`),
    ...(missing.length > 0 ? [`${missing.length} of ${expected.length} turns of watched calls never showed on the other engine's stream (first: ${missing.slice(0, 10).join(', ')}).`] : []),
    ...(report.latenciesMs.length === 0 ? ['No cross-engine event was seen.'] : []),
  ];
  const metrics: Metric[] = [
    { key: 'cross_engine_p50_ms', label: 'event published on one engine → on a stream of the other, p50', unit: 'ms', value: round(latency.p50, 1), digits: 1 },
    { key: 'cross_engine_p99_ms', label: 'event published on one engine → on a stream of the other, p99', unit: 'ms', value: round(latency.p99, 1), digits: 1, target: { op: '<=', value: TARGET_P99_MS } },
    { key: 'cross_engine_max_ms', label: 'event published on one engine → on a stream of the other, max', unit: 'ms', value: round(latency.max, 1), digits: 1 },
    { key: 'cross_engine_events', label: 'cross-engine events seen (measured part)', unit: '', value: report.latenciesMs.length },
    { key: 'cross_engine_missing', label: 'turns of watched calls never on the other stream', unit: '', value: missing.length, target: { op: '=', value: 0 } },
  ];
  return { metrics, invalid };
}
