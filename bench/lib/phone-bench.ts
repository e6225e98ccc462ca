/**
 * The phone channel at scale, shared by bench/phone-calls.bench.ts (one engine) and bench/phone-scale-out.bench.ts
 * (two engines on one PostgreSQL). PHONE_BENCH_CALLS (1 000) concurrent ConversationRelay calls, each sending a final
 * prompt every PHONE_BENCH_INTERVAL_MS (2 s): a fixed rate of calls / interval turns per second, for
 * PHONE_BENCH_WARMUP_SECONDS (5 s) of warm-up and PHONE_BENCH_SECONDS (30 s) measured. A loopback HTTPS integrator
 * answers each in 50 ms, repeating the prompt's reference.
 *
 * Processes, sharing the machine's cores: each engine (`startService`, bench/processes/engine-process.ts), the callers
 * (bench/processes/phone-callers.ts; with two engines call i goes to engine i mod 2, so each call stays on one engine), the
 * integrator (bench/processes/integrator-server.ts), and this one, which only sets up and adds up.
 *
 * Every answer is matched to its prompt by id (`ref p<call>x<n>`, echoed by the integrator): an unanswered prompt, a
 * second answer, an answer to no known prompt, a call that did not connect or dropped makes the run invalid.
 * Measured per prompt, from sending the prompt frame to receiving its answer's text frame, minus the integrator's
 * 50 ms: the overhead of WebSocket, runtime, database and bot link together, split into the session runtime's share
 * (`runtime.handleMessage` in the engine, minus the 50 ms) and the phone channel's (the rest), matched by the same id.
 *
 * Database: BENCH_DATABASE_URL's PostgreSQL (a fresh schema, dropped afterwards; with `pooler`, a fresh database behind
 * pgbouncer); without it the benchmark refuses to run: the embedded default is bench/embedded-capacity.bench.ts's.
 * PHONE_BENCH_CPU_PROFILE_DIR: the engines run under `--cpu-prof` and write their profiles there. PHONE_BENCH_ENGINE_FLAGS:
 * more Node flags for the engines, space-separated (`--trace-gc`).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareBenchDatabase, type BenchDatabase } from './bench-database.ts';
import { crossEngineFigures, startWatchers, type Watchers } from './live-watch.ts';
import type { Metric, RunResult } from './benchmark.ts';
import { envNumber, progress } from './benchmark.ts';
import { startCallersProcess, type CallersProcess } from './callers-process.ts';
import { startEngineProcess, type EngineProcess, type EngineReport } from '../processes/engine-process.ts';
import { startIntegratorProcess, type IntegratorStats } from './integrator-process.ts';
import { round, summarize } from './stats.ts';
import type { CallersResults } from '../processes/phone-callers.ts';

const INTEGRATOR_MS = 50;
const NUMBER = '+31201234567';
/** Statements of the session lease (db/repositories/sessions.repository.ts): a turn's lease and the held leases' renewal. */
const LEASE_STATEMENTS = ['session_lease', 'session_lease_renew'];

export interface PhoneBenchOptions {
  name: string;
  engines: number;
  /** Dashboard streams on one engine watching calls of another (bench/lib/live-watch.ts); default none. */
  watchers?: number;
  /** The engines reach PostgreSQL through pgbouncer in transaction mode, LISTEN over a direct connection. */
  pooler?: boolean;
}

export async function runPhoneBench({ name, engines: engineCount, watchers: watcherCount = 0, pooler = false }: PhoneBenchOptions): Promise<RunResult> {
  const url = process.env.BENCH_DATABASE_URL;
  const parameters = {
    calls: envNumber('PHONE_BENCH_CALLS', 1_000, { min: 1 }),
    seconds: envNumber('PHONE_BENCH_SECONDS', 30, { min: 1 }),
    intervalMs: envNumber('PHONE_BENCH_INTERVAL_MS', 2_000, { min: 100 }),
    warmupSeconds: envNumber('PHONE_BENCH_WARMUP_SECONDS', 5, { min: 1 }),
    engines: engineCount,
    watchers: watcherCount,
    pooler: pooler ? 'pgbouncer, transaction mode' : 'none',
    integratorMs: INTEGRATOR_MS,
    database: url ? 'postgres' : 'pglite',
    poolSizePerEngine: 16,
  };
  if (!url) {
    throw new Error(
      `${name} runs on PostgreSQL: set BENCH_DATABASE_URL (for example postgres://postgres@127.0.0.1:5432/test). Without it, it would run PGlite in memory ` +
        'without the admission control npm start has, a mode nobody deploys; the embedded default (PGlite on disk, admission control on) is measured by ' +
        'the embedded-capacity benchmark (npm run bench -- embedded-capacity).',
    );
  }
  const { calls, seconds, intervalMs, warmupSeconds } = parameters;
  const rate = (calls * 1000) / intervalMs;
  const cpuProfileDir = process.env.PHONE_BENCH_CPU_PROFILE_DIR;
  const load = { start: round(loadavg()[0]!, 2), end: 0 };

  const dataDir = mkdtempSync(join(tmpdir(), 'botlink-bench-phone-'));
  const engines: EngineProcess[] = [];
  let callers: CallersProcess | undefined;
  let watchers: Watchers | undefined;
  let watched: { metrics: Metric[]; invalid: string[] } | undefined;
  const integrator = await startIntegratorProcess({ delayMs: INTEGRATOR_MS, echoRef: true });
  const invalid: string[] = [];
  let results: CallersResults | undefined;
  let reports: EngineReport[];
  /** The integrator's CPU and accepted TLS handshakes over the window: its share of the machine, and reconnections. */
  let integratorAtRecord: Promise<IntegratorStats> | undefined;
  let integratorWindow: { cpuMicros: number; tlsHandshakes: number } | undefined;
  let connectErrors: number;
  let dropped: number;
  let database: BenchDatabase | undefined;
  try {
    if (url) database = await prepareBenchDatabase(url, 'bench_phone', { pooler });
    const bridgeToken = `bench-bridge-${randomBytes(16).toString('hex')}`;
    const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;
    const env = {
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      MASTER_KEY: randomBytes(32).toString('hex'),
      ADMIN_TOKEN: adminToken,
      BRIDGE_TOKEN: bridgeToken,
      OUTBOUND_ALLOW: '127.0.0.1/32',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    };
    for (let i = 0; i < engineCount; i++) {
      engines.push(
        await startEngineProcess({
          env,
          database: database ? database.engine(parameters.poolSizePerEngine) : null,
          instanceId: `bench-engine-${i}`,
          ...(cpuProfileDir ? { cpuProfileDir } : {}),
          nodeFlags: (process.env.PHONE_BENCH_ENGINE_FLAGS ?? '').split(' ').filter((f) => f !== ''),
        }),
      );
    }
    const api = async (method: string, path: string, token: string, body: unknown) => {
      const res = await fetch(engines[0]!.url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };
    const created = await api('POST', '/v1/admin/workspaces', adminToken, { name: 'Bench', owner_email: 'owner@bench.example' });
    const owner = (created.owner as { token: string }).token;
    await api('PUT', '/v1/integration', owner, { endpoint_url: `${integrator.origin}/botlink/channel` });
    await api('PUT', '/v1/phone', owner, { numbers: [NUMBER] });

    progress(name, `connecting ${calls} calls to ${engineCount} engine(s) (callers in a child process)`);
    const urls = engines.map((e) => `${e.url.replace('http', 'ws')}/v1/phone/ws`);
    callers = startCallersProcess({ url: urls[0]!, urls, token: bridgeToken, number: NUMBER, calls, intervalMs, warmupSeconds, seconds, matchIds: true });
    connectErrors = (await callers.next('connected')).connectErrors;
    await new Promise((r) => setTimeout(r, 500)); // the setups are processed (sessions opened)
    if (watcherCount > 0 && database) {
      progress(name, `opening ${watcherCount} session streams, each on another engine than its call`);
      watchers = await startWatchers({ count: watcherCount, engineUrls: engines.map((e) => e.url), owner, db: database.db });
    }

    progress(name, `speaking: ${rate} turns/s (a prompt every ${intervalMs} ms per call), ${warmupSeconds} s warm-up + ${seconds} s`);
    callers.send('start');
    const recordTimer = setTimeout(() => {
      for (const e of engines) e.record();
      watchers?.record();
      integratorAtRecord = integrator.stats();
    }, warmupSeconds * 1000);
    try {
      results = await callers.next('finished');
    } finally {
      clearTimeout(recordTimer);
    }
    const integratorAtEnd = integrator.stats();
    reports = await Promise.all(engines.map((e) => e.report()));
    if (watchers) {
      // The last turns' events are on their way: the bus reads at least once a second.
      await new Promise((r) => setTimeout(r, 2_000));
      watched = crossEngineFigures(watchers, await watchers.report(), results.ids);
    }
    const [from, to] = await Promise.all([integratorAtRecord ?? integratorAtEnd, integratorAtEnd]);
    integratorWindow = { cpuMicros: to.cpuMicros - from.cpuMicros, tlsHandshakes: to.tlsHandshakes - from.tlsHandshakes };
    load.end = round(loadavg()[0]!, 2);
    callers.send('close');
    dropped = (await callers.next('closed')).dropped;
  } finally {
    await callers?.stop();
    for (const e of engines) await e.stop();
    await integrator.stop();
    await watchers?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }

  // ── What made the run invalid, first ──
  if (connectErrors > 0) invalid.push(`${connectErrors} of ${calls} calls could not connect.`);
  if (dropped > 0) invalid.push(`${dropped} calls were dropped (their socket closed before the end).`);
  if (!results || results.answered === 0) invalid.push('No prompt was answered.');
  if (results && results.unanswered > 0) {
    invalid.push(`${results.unanswered} of ${results.prompts} prompts were never answered (first: ${results.unansweredIds.join(', ')}).`);
  }
  if (results && results.duplicates > 0) invalid.push(`${results.duplicates} prompts were answered twice.`);
  if (results && results.mismatched > 0) invalid.push(`${results.mismatched} answers carried no reference of an outstanding prompt.`);

  if (watched) invalid.push(...watched.invalid);

  // ── Figures ──
  const runtimeMs = new Map<string, number>();
  for (const report of reports) for (const [id, ms] of report.runtimeMs) runtimeMs.set(id, ms);
  const overhead: number[] = [];
  const inRuntime: number[] = [];
  const inChannel: number[] = [];
  results?.ids.forEach((id, i) => {
    const total = results!.totalsMs[i]!;
    overhead.push(total - INTEGRATOR_MS);
    const runtimeShare = runtimeMs.get(id);
    if (runtimeShare === undefined) return;
    inRuntime.push(runtimeShare - INTEGRATOR_MS);
    inChannel.push(total - runtimeShare);
  });
  const o = summarize(overhead);
  const r = summarize(inRuntime);
  const c = summarize(inChannel);
  const measuredSeconds = Math.max(...reports.map((e) => e.seconds), 1e-9);
  const answeredPerSecond = (results?.answered ?? 0) / seconds;
  const percentOfCore = (micros: number) => round(micros / 1e4 / measuredSeconds, 0);
  const engineCpu = reports.reduce((n, e) => n + e.cpuMicros, 0);
  const loopP99 = Math.max(...reports.map((e) => e.loopDelayMs.p99));
  const statements = new Map<string, { count: number; totalMs: number }>();
  for (const report of reports) {
    for (const [key, s] of Object.entries(report.statements)) {
      const entry = statements.get(key) ?? { count: 0, totalMs: 0 };
      entry.count += s.count;
      entry.totalMs += s.totalMs;
      statements.set(key, entry);
    }
  }
  const lease = { count: 0, totalMs: 0 };
  for (const key of LEASE_STATEMENTS) {
    lease.count += statements.get(key)?.count ?? 0;
    lease.totalMs += statements.get(key)?.totalMs ?? 0;
  }
  const allStatementsMs = [...statements.values()].reduce((n, s) => n + s.totalMs, 0);
  const turns = results?.answered ?? 0;

  const metrics: Metric[] = [
    { key: 'overhead_p50_ms', label: 'overhead beyond the integrator, p50', unit: 'ms', value: round(o.p50, 2), target: { op: '<=', value: 3 } },
    { key: 'overhead_p90_ms', label: 'overhead beyond the integrator, p90', unit: 'ms', value: round(o.p90, 2) },
    { key: 'overhead_p99_ms', label: 'overhead beyond the integrator, p99', unit: 'ms', value: round(o.p99, 2), target: { op: '<=', value: 25 } },
    { key: 'overhead_max_ms', label: 'overhead beyond the integrator, max', unit: 'ms', value: round(o.max, 2) },
    { key: 'runtime_share_p50_ms', label: 'of which the session runtime, p50', unit: 'ms', value: round(r.p50, 2) },
    { key: 'runtime_share_p99_ms', label: 'of which the session runtime, p99', unit: 'ms', value: round(r.p99, 2) },
    { key: 'channel_share_p50_ms', label: 'of which the phone channel and WebSocket, p50', unit: 'ms', value: round(c.p50, 2) },
    { key: 'channel_share_p99_ms', label: 'of which the phone channel and WebSocket, p99', unit: 'ms', value: round(c.p99, 2) },
    { key: 'event_loop_delay_p99_ms', label: `engine event-loop delay p99${engineCount > 1 ? ' (worst engine)' : ''}`, unit: 'ms', value: loopP99, target: { op: '<=', value: 20 } },
    { key: 'prompts', label: 'prompts sent (measured part)', unit: '', value: results?.prompts ?? 0 },
    { key: 'answered', label: 'prompts answered (matched by id)', unit: '', value: turns },
    { key: 'unanswered', label: 'prompts unanswered', unit: '', value: results?.unanswered ?? 0, target: { op: '=', value: 0 } },
    { key: 'answered_per_second', label: 'answers per second', unit: '/s', value: round(answeredPerSecond, 0) },
    { key: 'engine_cpu_percent', label: `engine CPU, % of a core${engineCount > 1 ? ' (engines summed)' : ''}`, unit: '%', value: percentOfCore(engineCpu) },
    { key: 'engine_cpu_per_turn_us', label: 'engine CPU per answered turn', unit: 'µs', value: turns > 0 ? round(engineCpu / turns, 0) : 0 },
    { key: 'callers_cpu_percent', label: 'callers CPU, % of a core', unit: '%', value: percentOfCore(results?.cpuMicros ?? 0) },
    { key: 'integrator_cpu_percent', label: 'integrator CPU, % of a core', unit: '%', value: percentOfCore(integratorWindow?.cpuMicros ?? 0) },
    {
      key: 'integrator_tls_handshakes',
      label: 'TLS handshakes at the integrator (new bot-link connections; a cancelled request closes one)',
      unit: '',
      value: integratorWindow?.tlsHandshakes ?? 0,
    },
    { key: 'rss_peak_mib', label: `engine RSS peak${engineCount > 1 ? ' (largest engine)' : ''}`, unit: 'MiB', value: Math.max(...reports.map((e) => e.rssMiB.peak), 0) },
  ];
  if (watched) metrics.push(...watched.metrics);
  if (url) {
    metrics.push(
      { key: 'lease_statements_per_turn', label: 'lease statements per turn (take + held-lease renewal)', unit: '', value: turns > 0 ? round(lease.count / turns, 3) : 0, digits: 3 },
      { key: 'lease_ms_per_turn', label: 'lease round-trip time per turn', unit: 'ms', value: turns > 0 ? round(lease.totalMs / turns, 3) : 0, digits: 3 },
      { key: 'lease_share_percent', label: "lease statements' share of the engines' statement time", unit: '%', value: allStatementsMs > 0 ? round((100 * lease.totalMs) / allStatementsMs, 1) : 0, digits: 1 },
    );
  }
  const setup =
    `${calls} concurrent calls over WebSocket (bearer auth) to ${engineCount === 1 ? 'one engine process' : `${engineCount} engine processes (each call on one)`} ` +
    `on ${url ? 'PostgreSQL' : 'PGlite in memory'}${pooler ? ' through pgbouncer in transaction mode (LISTEN over a direct connection)' : ''}, callers and the loopback HTTPS integrator (${INTEGRATOR_MS} ms, handled) in processes of their own; ` +
    `a final prompt every ${intervalMs} ms per call, spread evenly (${rate} turns/s); ${warmupSeconds} s warm-up, then ${seconds} s measured; ` +
    `every answer matched to its prompt by id. ` +
    (watcherCount > 0 ? `${watcherCount} session streams (GET /v1/sessions/{id}/events, a process of their own) each watch a call on another engine than theirs. ` : '') +
    `All processes share the machine's cores (load average ${load.start} at start, ${load.end} at end).`;
  return {
    metrics,
    invalid,
    setup,
    parameters: { ...parameters, turnsPerSecond: rate },
    details: {
      loadAverage1m: load,
      engines: reports.map((e) => ({
        seconds: round(e.seconds, 1),
        cpuPercent: percentOfCore(e.cpuMicros),
        loopDelayMs: e.loopDelayMs,
        rssMiB: e.rssMiB,
        heapMiB: e.heapMiB,
        turns: e.runtimeMs.length,
      })),
      statements: Object.fromEntries(
        [...statements].map(([k, s]) => [k, { count: s.count, meanMs: round(s.totalMs / Math.max(1, s.count), 3), totalMs: round(s.totalMs, 1) }]),
      ),
      fillers: results?.fillers ?? 0,
      connectErrors,
      dropped,
    },
  };
}
