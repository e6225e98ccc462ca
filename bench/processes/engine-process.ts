/**
 * One engine (the service, `startService`) in a child process of its own, for the phone benchmarks: the engine's
 * event loop, heap, RSS and CPU are its own, apart from the load generator's and the integrator's. The parent starts
 * it with `startEngineProcess(config)`; this same file is the child's script.
 *
 * The child opens the database itself: PGlite in memory (migrated here; one engine only), or PostgreSQL at `url` in
 * `schema`, which the parent created and migrated. Over IPC it measures a window the parent names: `record` starts
 * it (event-loop delay, CPU), `report` ends it and answers with the loop's delay, CPU, RSS and every turn's runtime
 * share (`runtime.handleMessage`'s duration) keyed by the prompt's id, read from the prompt's reference
 * (`ref p<call>x<n>`, bench/processes/phone-callers.ts) so no answer is matched by counting.
 *
 * With `cpuProfileDir`, the child runs under `--cpu-prof` and writes its profile there when it stops.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { migrate, openDatabase } from '../../db/database.ts';
import { PreparingClient } from '../../db/prepared.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startService } from '../../src/app/service.ts';
import { nextMessage } from '../lib/child-message.ts';

export interface EngineConfig {
  /** The service's settings, as loadConfig reads them from the environment (PORT, MASTER_KEY, …). */
  env: Record<string, string>;
  /**
   * PostgreSQL; without it PGlite in memory. `schema` isolates a run (absent: the database's own); through a
   * transaction pooler (`pooler`) a run has a database of its own instead, since pgbouncer does not pass the schema
   * on, and LISTEN goes over `directUrl`.
   */
  database: { url: string; schema?: string; poolSize: number; pooler?: 'transaction'; directUrl?: string } | null;
  /** A distinct lease owner per engine on one database. */
  instanceId: string;
  /** Run under `--cpu-prof`, writing the profile into this directory at stop. */
  cpuProfileDir?: string;
  /** More Node flags for the engine (`--trace-gc`, `--max-semi-space-size=…`), for investigations. */
  nodeFlags?: string[];
}

export interface EngineReport {
  type: 'report';
  seconds: number;
  cpuMicros: number;
  loopDelayMs: { p50: number; p99: number; max: number };
  rssMiB: { start: number; peak: number; end: number };
  heapMiB: number;
  /** `[prompt id, ms]`: runtime.handleMessage's duration for each prompt handled in the window. */
  runtimeMs: [string, number][];
  /**
   * PostgreSQL only: the statements run in the window, by name (a marked one's `prepared('name')`, db/prepared.ts;
   * others by verb and first table): how many, and their round-trip time summed (ms, from sending to the result, as
   * the engine waited for them).
   */
  statements: Record<string, { count: number; totalMs: number }>;
}

type ToChild = { type: 'record' } | { type: 'report' } | { type: 'stop' };
type FromChild = { type: 'listening'; url: string } | EngineReport | { type: 'stopped' };

const CONFIG_VARIABLE = 'BENCH_ENGINE_CONFIG';
const RSS_SAMPLE_MS = 1_000;
const REF = /ref p(\d+)x(\d+)\)/;

export type EngineProcess = Awaited<ReturnType<typeof startEngineProcess>>;

export async function startEngineProcess(config: EngineConfig) {
  const child = fork(new URL(import.meta.url), [], {
    execPath: process.execPath,
    execArgv: [...(config.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${config.cpuProfileDir}`] : []), ...(config.nodeFlags ?? [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [CONFIG_VARIABLE]: JSON.stringify(config) },
  });
  const exited = once(child, 'exit');
  const next = <T extends FromChild['type']>(type: T) => nextMessage<FromChild, T>(child, type, 'the engine process');
  const { url } = await next('listening');
  const send = (message: ToChild) => child.send(message);
  return {
    url,
    pid: child.pid!,
    /** Starts the measured window. */
    record: () => send({ type: 'record' }),
    /** Ends the measured window (after the engine's turns settled) and returns what it measured. */
    report: () => {
      const reply = next('report');
      send({ type: 'report' });
      return reply;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const stopped = next('stopped').catch(() => undefined);
      send({ type: 'stop' });
      await stopped;
      await exited;
    },
  };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env[CONFIG_VARIABLE] ?? '{}') as EngineConfig;
  // The service's guarded client trusts the test CA the way production trusts a custom CA (NODE_EXTRA_CA_CERTS).
  const testCa = readFileSync(new URL('../../test/fixtures/tls/ca.pem', import.meta.url), 'utf8');
  setDefaultCACertificates([...getCACertificates('default'), testCa]);

  const database = config.database ? await openDatabase(config.database) : await openDatabase({});
  if (!config.database) await migrate(database.db);
  const serviceConfig = loadConfig(config.env);
  const service = await startService({
    config: serviceConfig,
    logger: createLogger(serviceConfig.logLevel),
    database,
    drainMs: 5_000,
    sessions: { instanceId: config.instanceId },
  });

  // The runtime's share of each turn: the phone channel calls this very object.
  const runtime = service.runtime;
  const handleMessage = runtime.handleMessage.bind(runtime);
  let recording = false;
  let runtimeMs: [string, number][] = [];
  runtime.handleMessage = async (message) => {
    const t0 = performance.now();
    const result = await handleMessage(message);
    if (recording) {
      const ref = REF.exec(message.text);
      if (ref) runtimeMs.push([`${ref[1]}:${ref[2]}`, performance.now() - t0]);
    }
    return result;
  };

  // Every statement's round trip, timed in the pool's client class (the lease rounds and renewals among them).
  let statements: Record<string, { count: number; totalMs: number }> = {};
  const query = PreparingClient.prototype.query;
  const MARK = /\/\* prepare:([a-z0-9_]+) \*\//;
  // An unmarked statement is named by its verb and first table (`select integrations`).
  const VERB_TABLE = /^\s*(select|insert|update|delete|with)\b[\s\S]*?\b(?:from|into|update)\s+"?([a-z_]+)"?/i;
  const statementName = (text: string): string => {
    const mark = MARK.exec(text);
    if (mark) return mark[1]!;
    const verb = VERB_TABLE.exec(text);
    return verb ? `${verb[1]!.toLowerCase()} ${verb[2]}` : 'other';
  };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  PreparingClient.prototype.query = function timedQuery(this: PreparingClient, config: any, values?: any, callback?: any): any {
    const name = recording && typeof config === 'string' && callback === undefined ? statementName(config) : null;
    const t0 = performance.now();
    const result = query.call(this, config, values, callback) as unknown;
    if (name && result instanceof Promise) {
      const done = () => {
        const entry = (statements[name] ??= { count: 0, totalMs: 0 });
        entry.count++;
        entry.totalMs += performance.now() - t0;
      };
      result.then(done, done);
    }
    return result;
  };

  // A 1 ms timer: each sample is the time between two of its ticks, so an idle loop reads about 1 ms (with the 10 ms
  // resolution, every figure would carry 10 ms of timer period).
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  let cpuAt = process.cpuUsage();
  let startedAt = performance.now();
  const rss = { start: 0, peak: 0, end: 0 };
  const sampleRss = () => {
    const now = process.memoryUsage.rss() / 2 ** 20;
    rss.peak = Math.max(rss.peak, now);
    return now;
  };
  const sampler = setInterval(sampleRss, RSS_SAMPLE_MS);
  sampler.unref();

  // BENCH_ENGINE_HEAP_PROFILE=<file>: a sampling heap profile over the measured window that keeps the objects a
  // major GC collected (those that outlived the young generation: what promotion and mark-compact pauses are made of).
  const heapProfile = process.env.BENCH_ENGINE_HEAP_PROFILE;
  const inspector = heapProfile ? new Session() : null;
  inspector?.connect();

  process.on('message', (message: ToChild) => {
    void (async () => {
      if (message.type === 'record' && inspector) {
        await inspector.post('HeapProfiler.startSampling', { samplingInterval: 32_768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false });
      }
      if (message.type === 'report' && inspector && heapProfile) {
        const { profile } = await inspector.post('HeapProfiler.stopSampling');
        writeFileSync(heapProfile, JSON.stringify(profile));
      }
      if (message.type === 'record') {
        recording = true;
        runtimeMs = [];
        statements = {};
        loopDelay.reset();
        loopDelay.enable();
        cpuAt = process.cpuUsage();
        startedAt = performance.now();
        rss.start = rss.peak = sampleRss();
      } else if (message.type === 'report') {
        loopDelay.disable();
        const cpu = process.cpuUsage(cpuAt);
        const seconds = (performance.now() - startedAt) / 1000;
        rss.end = sampleRss();
        recording = false;
        await runtime.settled();
        const ms = (ns: number) => Math.round(ns / 1e4) / 100;
        process.send!({
          type: 'report',
          seconds,
          cpuMicros: cpu.user + cpu.system,
          loopDelayMs: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) },
          rssMiB: { start: Math.round(rss.start), peak: Math.round(rss.peak), end: Math.round(rss.end) },
          heapMiB: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
          runtimeMs,
          statements,
        } satisfies EngineReport);
      } else if (message.type === 'stop') {
        await service.stop();
        await database.close();
        process.send!({ type: 'stopped' });
        process.disconnect();
        // A normal exit, so that --cpu-prof writes its profile.
        process.exit(0);
      }
    })().catch((err: unknown) => {
      process.stderr.write(`engine failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    });
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ type: 'listening', url: service.url });
}

if (process.send && process.env[CONFIG_VARIABLE]) {
  main().catch((err: unknown) => {
    process.stderr.write(`engine process failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
