/**
 * The phone channel at scale (issue 4): PHONE_BENCH_CALLS (1 000) concurrent ConversationRelay calls in one process
 * against the real service (startService: HTTP, the WebSocket endpoint, the session runtime, the database), each
 * sending a final prompt every PHONE_BENCH_INTERVAL_MS (2 s) for PHONE_BENCH_SECONDS (60 s), answered by a loopback
 * HTTPS integrator in a child process that takes 50 ms.
 *
 * Measured per prompt: from sending the prompt frame to receiving the answer's text frame (last:true), minus the
 * integrator's 50 ms: the overhead of WebSocket, runtime, database and bot link together (targets p50 ≤ 2 ms,
 * p99 ≤ 10 ms). It is split in two: the session runtime's share (`runtime.handleMessage`, timed around the call, minus
 * the 50 ms) and the phone channel's share (the rest: WebSocket frames both ways, parsing, the call's bookkeeping).
 * Also: the bot link exchange as the turn recorded it, calls dropped (a socket closed before the end; target 0),
 * prompts left unanswered (the next prompt came first, target 0), RSS and heap every 5 s, the event loop's delay.
 *
 * The callers (1 000 `ws` clients, bench/phone-callers.ts) run in a child process, like the integrator, so the
 * service's event loop, heap and RSS are the service's own; all processes share the machine's cores.
 * Database: PGlite in memory, or with BENCH_DATABASE_URL a fresh schema on that PostgreSQL, dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { sql } from 'kysely';
import { migrate, openDatabase, type OpenedDatabase } from '../db/database.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { startService, type RunningService } from '../src/service.ts';
import type { BenchmarkResult, BenchmarkStatus } from './lib/benchmark.ts';
import { envNumber, markdownTable, textTable } from './lib/benchmark.ts';
import { startIntegratorProcess } from './lib/integrator-process.ts';
import { callSid, type CallersResults } from './phone-callers.ts';
import { LatencyRecorder, round, summarize, type LatencySummary } from './lib/stats.ts';
import { startCallersProcess, type CallersProcess } from './lib/callers-process.ts';

export const name = 'phone-calls';

const INTEGRATOR_MS = 50;
const targets = { overheadP50Ms: 2, overheadP99Ms: 10, droppedCalls: 0 };
const BRIDGE_TOKEN = `bench-bridge-${randomBytes(16).toString('hex')}`;
const ADMIN_TOKEN = `bench-admin-${randomBytes(16).toString('hex')}`;
const NUMBER = '+31201234567';
const RSS_SAMPLE_MS = 5_000;

interface Parameters {
  calls: number;
  seconds: number;
  intervalMs: number;
  warmupSeconds: number;
  database: 'pglite' | 'postgres';
}


async function openBenchDatabase(url: string | undefined): Promise<{ database: OpenedDatabase; drop: () => Promise<void> }> {
  if (!url) {
    const database = await openDatabase({});
    await migrate(database.db);
    return { database, drop: () => database.close() };
  }
  const schema = `bench_phone_${randomBytes(4).toString('hex')}`;
  const admin = await openDatabase({ url, poolSize: 1 });
  await sql`create schema ${sql.id(schema)}`.execute(admin.db);
  const database = await openDatabase({ url, schema, poolSize: 16 });
  await migrate(database.db, schema);
  return {
    database,
    async drop() {
      await database.close();
      await sql`drop schema ${sql.id(schema)} cascade`.execute(admin.db);
      await admin.close();
    },
  };
}

export async function run(): Promise<BenchmarkResult> {
  const parameters: Parameters = {
    calls: envNumber('PHONE_BENCH_CALLS', 1_000, { min: 1 }),
    seconds: envNumber('PHONE_BENCH_SECONDS', 60, { min: 1 }),
    intervalMs: envNumber('PHONE_BENCH_INTERVAL_MS', 2_000, { min: 100 }),
    warmupSeconds: envNumber('PHONE_BENCH_WARMUP_SECONDS', 4, { min: 0 }),
    database: process.env.BENCH_DATABASE_URL ? 'postgres' : 'pglite',
  };
  const { calls: callCount, seconds, intervalMs, warmupSeconds } = parameters;

  // The service's guarded client trusts the test CA the way production trusts a custom CA (NODE_EXTRA_CA_CERTS):
  // added to the process's default store, since the service is started in this process.
  const testCa = readFileSync(new URL('../test/fixtures/tls/ca.pem', import.meta.url), 'utf8');
  setDefaultCACertificates([...getCACertificates('default'), testCa]);

  const integrator = await startIntegratorProcess({ delayMs: INTEGRATOR_MS });
  const { database, drop } = await openBenchDatabase(process.env.BENCH_DATABASE_URL);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'botlink-bench-phone-')),
    MASTER_KEY: randomBytes(32).toString('hex'),
    ADMIN_TOKEN,
    BRIDGE_TOKEN,
    OUTBOUND_ALLOW: '127.0.0.1/32',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
  });
  let service: RunningService | undefined;
  let callers: CallersProcess | undefined;
  let results: CallersResults | undefined;
  /** runtime.handleMessage's duration per prompt id (`<call index>:<n>`, the n-th turn of that call). */
  const runtimeMs = new Map<string, number>();
  const botlinkMs: number[] = [];
  const rss: { atSeconds: number; rssMiB: number; heapMiB: number }[] = [];
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  /** Set as the run goes (an object, so that a run that throws half-way still reads well). */
  const measured = { connectErrors: 0, dropped: 0, serviceCpuMicros: 0, seconds: 0 };
  const timers: NodeJS.Timeout[] = [];
  try {
    service = await startService({ config, logger: createLogger(config.logLevel), database, drainMs: 5_000 });
    const api = async (method: string, path: string, token: string, body: unknown) => {
      const res = await fetch(service!.url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };
    const created = await api('POST', '/v1/admin/workspaces', ADMIN_TOKEN, { name: 'Bench', owner_email: 'owner@bench.example' });
    const owner = (created.owner as { token: string }).token;
    await api('PUT', '/v1/integration', owner, { endpoint_url: `${integrator.origin}/botlink/channel` });
    await api('PUT', '/v1/phone', owner, { numbers: [NUMBER] });

    // The runtime's share of each turn: the channel calls this very object (the service's `runtime`).
    const runtime = service.runtime;
    const handleMessage = runtime.handleMessage.bind(runtime);
    const turnsOf = new Map<string, number>();
    const indexOf = new Map(Array.from({ length: callCount }, (_, i) => [callSid(i), i]));
    runtime.handleMessage = async (message) => {
      const n = (turnsOf.get(message.externalId) ?? 0) + 1;
      turnsOf.set(message.externalId, n);
      const t0 = performance.now();
      const result = await handleMessage(message);
      runtimeMs.set(`${indexOf.get(message.externalId)}:${n}`, performance.now() - t0);
      return result;
    };

    progress(`connecting ${callCount} calls (callers in a child process)`);
    callers = await startCallersProcess({ url: `${service.url.replace('http', 'ws')}/v1/phone/ws`, token: BRIDGE_TOKEN, number: NUMBER, calls: callCount, intervalMs, warmupSeconds, seconds });
    measured.connectErrors = (await callers.next('connected')).connectErrors;
    await new Promise((r) => setTimeout(r, 500)); // the setups are processed (sessions opened)

    const started = performance.now();
    const sample = () => {
      const m = process.memoryUsage();
      if (rss.at(-1)?.atSeconds === Math.round((performance.now() - started) / 1000)) return;
      rss.push({ atSeconds: Math.round((performance.now() - started) / 1000), rssMiB: round(m.rss / 2 ** 20, 1), heapMiB: round(m.heapUsed / 2 ** 20, 1) });
    };
    sample();
    timers.push(setInterval(sample, RSS_SAMPLE_MS));
    // The event loop and the CPU are taken over the measured part only (after the warm-up).
    timers.push(
      setTimeout(() => {
        loopDelay.enable();
        cpuAtRecord = process.cpuUsage();
        recordStarted = performance.now();
        recordStartedAt = new Date();
      }, warmupSeconds * 1000),
    );
    let cpuAtRecord = process.cpuUsage();
    let recordStarted = performance.now();
    let recordStartedAt = new Date();
    progress(`speaking: a prompt every ${intervalMs} ms per call for ${warmupSeconds} s warm-up + ${seconds} s`);
    callers.send('start');
    results = await callers.next('finished');
    loopDelay.disable();
    const cpu = process.cpuUsage(cpuAtRecord);
    measured.serviceCpuMicros = cpu.user + cpu.system;
    measured.seconds = (performance.now() - recordStarted) / 1000;
    sample();
    await service.runtime.settled();
    // The bot link exchange as each completed turn of the measured part recorded it (whole milliseconds); the
    // warm-up's turns, which open the TLS connections to the integrator, are left out like their overhead is.
    const turns = await database.db.selectFrom('session_turns').select('timings').where('status', '=', 'completed').where('started_at', '>=', recordStartedAt).execute();
    for (const t of turns) {
      const ms = (t.timings as { botlink?: number }).botlink;
      if (typeof ms === 'number') botlinkMs.push(ms);
    }
    callers.send('close');
    measured.dropped = (await callers.next('closed')).dropped;
  } finally {
    for (const t of timers) clearInterval(t);
    await callers?.stop();
    await service?.stop();
    await integrator.stop();
    await drop();
  }

  const overhead = new LatencyRecorder(results?.totalsMs.length ?? 16);
  const inRuntime = new LatencyRecorder(results?.totalsMs.length ?? 16);
  const inChannel = new LatencyRecorder(results?.totalsMs.length ?? 16);
  results?.ids.forEach((id, i) => {
    const total = results!.totalsMs[i]!;
    overhead.record(total - INTEGRATOR_MS);
    const runtimeShare = runtimeMs.get(id);
    if (runtimeShare === undefined) return;
    inRuntime.record(runtimeShare - INTEGRATOR_MS);
    inChannel.record(total - runtimeShare);
  });
  const totals = { prompts: results?.prompts ?? 0, answered: results?.answered ?? 0, unanswered: results?.unanswered ?? 0, fillers: results?.fillers ?? 0 };
  const cpuShare = (micros: number) => (measured.seconds > 0 ? Math.round(micros / 1e4 / measured.seconds) : 0);
  const { connectErrors, dropped, serviceCpuMicros } = measured;
  const o = summarize(overhead.values());
  const runtimeSummary = summarize(inRuntime.values());
  const channelSummary = summarize(inChannel.values());
  const botlink = summarize(Float64Array.from(botlinkMs));
  const checks = {
    p50: o.p50 <= targets.overheadP50Ms,
    p99: o.p99 <= targets.overheadP99Ms,
    dropped: dropped <= targets.droppedCalls,
    unanswered: totals.unanswered === 0,
  };
  // Calls that could not even connect mean the set-up is broken: no valid measurement. Prompts the service could not
  // answer before the caller spoke again are a result (overload), reported as a missed target.
  const failures = connectErrors + (totals.answered === 0 ? 1 : 0);
  const status: BenchmarkStatus = failures > 0 ? 'failed' : Object.values(checks).every(Boolean) ? 'pass' : 'miss';
  const verdict = (ok: boolean) => (failures > 0 ? 'invalid' : ok ? 'pass' : 'MISS');
  const rssPeak = Math.max(...rss.map((s) => s.rssMiB));
  const ms = (v: number) => v.toFixed(2);
  const header = ['measure', 'value', 'target', 'result'];
  const rows = [
    ['overhead beyond the integrator, p50, ms', ms(o.p50), `≤ ${targets.overheadP50Ms}`, verdict(checks.p50)],
    ['overhead, p90, ms', ms(o.p90), '', ''],
    ['overhead, p99, ms', ms(o.p99), `≤ ${targets.overheadP99Ms}`, verdict(checks.p99)],
    ['overhead, max, ms', ms(o.max), '', ''],
    ['… of it in the session runtime, p50 / p99, ms', `${ms(runtimeSummary.p50)} / ${ms(runtimeSummary.p99)}`, '', ''],
    ['… of it in the phone channel and WebSocket, p50 / p99, ms', `${ms(channelSummary.p50)} / ${ms(channelSummary.p99)}`, '', ''],
    ['bot link exchange (integrator 50 ms), p50 / p99, ms', `${botlink.p50} / ${botlink.p99}`, '', ''],
    ['calls dropped', String(dropped), `${targets.droppedCalls}`, verdict(checks.dropped)],
    ['prompts answered / unanswered', `${totals.answered} / ${totals.unanswered}`, 'all / 0', verdict(checks.unanswered)],
    ['fillers spoken', String(totals.fillers), '', ''],
    ['answers spoken per second', (totals.answered / seconds).toFixed(0), '', ''],
    ['service event loop delay p99, ms', ms(loopDelay.percentile(99) / 1e6), '', ''],
    ['CPU use, % of a core: service / callers', `${cpuShare(serviceCpuMicros)} / ${cpuShare(results?.cpuMicros ?? 0)}`, '', ''],
    ['RSS at start / peak / end, MiB', `${rss[0]?.rssMiB ?? 0} / ${rssPeak} / ${rss.at(-1)?.rssMiB ?? 0}`, '', ''],
  ];
  const setup =
    `${callCount} concurrent calls over WebSocket (bearer auth) to one service process (${parameters.database}), callers in a child process, ` +
    `a final prompt every ${intervalMs} ms per call, spread evenly; ${warmupSeconds} s warm-up, then ${seconds} s measured; ` +
    `loopback HTTPS integrator in a child process answering in ${INTEGRATOR_MS} ms (handled).`;
  const [word, detail] =
    status === 'failed'
      ? ['Failed', `${connectErrors} calls did not connect${totals.answered === 0 ? ' and no prompt was answered' : ''}, so the figures are not valid.`]
      : status === 'pass'
        ? ['Pass', 'All targets met.']
        : ['Target missed', [!checks.p50 && `p50 ${ms(o.p50)} ms > ${targets.overheadP50Ms} ms`, !checks.p99 && `p99 ${ms(o.p99)} ms > ${targets.overheadP99Ms} ms`, !checks.dropped && `${dropped} calls dropped`, !checks.unanswered && `${totals.unanswered} prompts unanswered before the next one`].filter(Boolean).join('; ') + '.'];
  const rssLine = `RSS over time (s: MiB): ${rss.map((s) => `${s.atSeconds}: ${s.rssMiB}`).join(', ')}.`;
  return {
    status,
    table: `${textTable(header, rows)}\n\n${word.toUpperCase()}: ${detail}\n${setup}\n${rssLine}`,
    markdown: [markdownTable(header, rows), '', `**${word}:** ${detail}`, '', `Setup: ${setup}`, '', rssLine].join('\n'),
    data: {
      parameters: { ...parameters, integratorMs: INTEGRATOR_MS },
      results: {
        targets,
        overheadMs: roundAll(o),
        runtimeShareMs: roundAll(runtimeSummary),
        channelShareMs: roundAll(channelSummary),
        cpuPercentOfCore: { service: cpuShare(serviceCpuMicros), callers: cpuShare(results?.cpuMicros ?? 0) },
        botlinkExchangeMs: roundAll(botlink),
        droppedCalls: dropped,
        connectErrors,
        ...totals,
        answersPerSecond: round(totals.answered / seconds, 1),
        eventLoopDelayMs: { p50: round(loopDelay.percentile(50) / 1e6), p99: round(loopDelay.percentile(99) / 1e6), max: round(loopDelay.max / 1e6) },
        rss,
        checks,
      },
    },
  };
}

function roundAll(summary: LatencySummary): Record<string, number> {
  return Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, round(v)]));
}

function progress(line: string): void {
  process.stderr.write(`  [${name}] ${line}\n`);
}
