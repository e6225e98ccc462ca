/**
 * The embedded default under load: the service as `npm start` runs it without DATABASE_URL (PGlite
 * on disk in DATA_DIR) in a process of its own (bench/processes/embedded-engine.ts), phone callers in another
 * (bench/processes/phone-callers.ts), the integrator in a third (50 ms, echoing each prompt's reference so every answer is matched to its
 * prompt by id).
 *
 * 1. Ramp: short steps of rising turn rates (each call speaks every 2 s, so N turns/s is 2N calls), each with a
 *    warm-up. The capacity is the highest rate whose step answered every prompt with p99 overhead ≤ 50 ms.
 * 2. Overload: EMBEDDED_BENCH_OVERLOAD turns/s (1,000: twice the phone bench's default, well past the engine's
 *    bound) for EMBEDDED_BENCH_OVERLOAD_SECONDS.
 *    The engine admits what it can and turns the other calls away with a spoken refusal (docs/operations.md,
 *    "Overload"). Every prompt of an admitted call must be answered (else the run is invalid); measured: the engine's
 *    RSS peak against the documented ceiling, calls refused, event-loop delay, overhead of the admitted turns.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { EMBEDDED_RSS_CEILING_MIB } from '../src/admission/limits.ts';
import { envNumber, progress, type Metric, type RunResult } from './lib/benchmark.ts';
import { startCallersProcess } from './lib/callers-process.ts';
import { startIntegratorProcess, type IntegratorProcess } from './lib/integrator-process.ts';
import { round, summarize } from './lib/stats.ts';
import type { EngineConfig, EngineMessage, EngineStats } from './processes/embedded-engine.ts';
import type { CallersResults } from './processes/phone-callers.ts';
import { nextMessage } from './lib/child-message.ts';

export const name = 'embedded-capacity';
export const title = 'The embedded default (PGlite on disk): capacity and overload';

const INTEGRATOR_MS = 50;
const INTERVAL_MS = 2_000;
const NUMBER = '+31201234567';
/** The capacity's definition: the highest rate with p99 overhead at most this, nothing unanswered. */
const CAPACITY_P99_MS = 50;

interface Step {
  turnsPerSecond: number;
  calls: number;
  prompts: number;
  answered: number;
  unanswered: number;
  mismatched: number;
  duplicates: number;
  refused: number;
  dropped: number;
  overheadMs: { p50: number; p99: number; max: number };
  engine: Omit<EngineStats, 'type'>;
  /** The load generator's CPU over the measured part, % of a core (it must not be the bottleneck). */
  callersCpuPercent: number;
  /** The integrator's CPU over the warm-up and the measured part, % of a core, and the TLS handshakes it accepted. */
  integratorCpuPercent: number;
  integratorTlsHandshakes: number;
}

export async function run(): Promise<RunResult> {
  const ramp = (process.env.EMBEDDED_BENCH_RAMP ?? '100,200,300,400,500,600,800')
    .split(',')
    .map((v) => Number(v.trim()))
    .filter((v) => v > 0);
  const parameters = {
    ramp,
    stepSeconds: envNumber('EMBEDDED_BENCH_STEP_SECONDS', 10, { min: 1 }),
    warmupSeconds: envNumber('EMBEDDED_BENCH_WARMUP_SECONDS', 3, { min: 0 }),
    overloadTurnsPerSecond: envNumber('EMBEDDED_BENCH_OVERLOAD', 1_000, { min: 1 }),
    overloadSeconds: envNumber('EMBEDDED_BENCH_OVERLOAD_SECONDS', 30, { min: 1 }),
    intervalMs: INTERVAL_MS,
    integratorMs: INTEGRATOR_MS,
    database: 'pglite on disk',
  };
  const loadBefore = loadavg();
  const integrator = await startIntegratorProcess({ delayMs: INTEGRATOR_MS, echoRef: true });
  const invalid: string[] = [];
  const steps: Step[] = [];
  let overload: Step | undefined;
  const rssAtReadyMiB: number[] = [];
  try {
    // The ramp measures the engine without admission control (what it can do); the overload runs with the defaults.
    {
      const engine = await startEngine(integrator.origin, true);
      rssAtReadyMiB.push(engine.rssAtReadyMiB);
      try {
        for (const rate of ramp) {
          const step = await runStep(engine, integrator, rate, parameters.stepSeconds, parameters.warmupSeconds, invalid);
          steps.push(step);
          // The ramp stops at the first rate past capacity: the next ones only collapse further.
          if (!withinCapacity(step)) break;
        }
      } finally {
        await engine.stop();
      }
    }
    const engine = await startEngine(integrator.origin, false);
    rssAtReadyMiB.push(engine.rssAtReadyMiB);
    try {
      overload = await runStep(engine, integrator, parameters.overloadTurnsPerSecond, parameters.overloadSeconds, parameters.warmupSeconds, invalid);
    } finally {
      await engine.stop();
    }
  } finally {
    await integrator.stop();
  }

  // Every prompt of an admitted call is answered, in the ramp and in the overload; answers carry their prompt's id.
  for (const s of [...steps, ...(overload ? [overload] : [])]) {
    if (s.unanswered > 0) invalid.push(`${s.turnsPerSecond} turns/s: ${s.unanswered} of ${s.prompts} prompts of admitted calls were never answered.`);
    if (s.mismatched > 0) invalid.push(`${s.turnsPerSecond} turns/s: ${s.mismatched} answers carried another prompt's id.`);
    if (s.duplicates > 0) invalid.push(`${s.turnsPerSecond} turns/s: ${s.duplicates} prompts were answered twice.`);
    if (s.dropped > 0) invalid.push(`${s.turnsPerSecond} turns/s: ${s.dropped} admitted calls were dropped.`);
  }
  if (overload && overload.answered === 0) invalid.push('overload: no prompt was answered.');

  const capacity = Math.max(0, ...steps.filter(withinCapacity).map((s) => s.turnsPerSecond));
  const o = overload;
  const metrics: Metric[] = [
    { key: 'capacity_turns_per_s', label: `capacity: highest turn rate with p99 overhead ≤ ${CAPACITY_P99_MS} ms and nothing unanswered or refused`, unit: '/s', value: capacity },
    ...(o
      ? [
          { key: 'overload_admitted_calls', label: `overload (${o.turnsPerSecond} turns/s, ${o.calls} calls): calls admitted`, unit: '', value: o.calls - o.refused },
          { key: 'overload_refused_calls', label: 'overload: calls refused with the spoken apology', unit: '', value: o.refused },
          { key: 'overload_answered_per_s', label: 'overload: prompts answered per second', unit: '/s', value: round(o.answered / parameters.overloadSeconds, 0) },
          { key: 'overload_unanswered', label: 'overload: prompts of admitted calls unanswered', unit: '', value: o.unanswered, target: { op: '=' as const, value: 0 } },
          { key: 'overload_overhead_p50_ms', label: 'overload: overhead of admitted turns, p50', unit: 'ms', value: o.overheadMs.p50 },
          { key: 'overload_overhead_p99_ms', label: 'overload: overhead of admitted turns, p99', unit: 'ms', value: o.overheadMs.p99, target: { op: '<=' as const, value: CAPACITY_P99_MS } },
          { key: 'overload_rss_peak_mib', label: 'overload: engine RSS peak', unit: 'MiB', value: round(o.engine.rssPeakMiB, 0), target: { op: '<=' as const, value: EMBEDDED_RSS_CEILING_MIB } },
          { key: 'overload_loop_delay_p99_ms', label: 'overload: engine event-loop delay p99', unit: 'ms', value: round(o.engine.loopDelayP99Ms, 2) },
          { key: 'overload_engine_cpu_percent', label: 'overload: engine CPU, % of a core', unit: '%', value: round(o.engine.cpuMicros / 1e4 / o.engine.seconds, 0) },
        ]
      : []),
  ];
  const setup =
    `One engine process on PGlite on disk (DATA_DIR, as \`npm start\` without DATABASE_URL), phone callers over WebSocket in a ` +
    `child process (a final prompt every ${INTERVAL_MS} ms per call, each with its own id, answers matched by id), a loopback ` +
    `HTTPS integrator in another child answering in ${INTEGRATOR_MS} ms with the prompt's reference echoed. Ramp ${ramp.join(', ')} turns/s ` +
    `(${parameters.warmupSeconds} s warm-up + ${parameters.stepSeconds} s each, stopping at the first step past capacity), then ` +
    `${parameters.overloadTurnsPerSecond} turns/s for ${parameters.overloadSeconds} s. Load average at start ${loadBefore.map((l) => l.toFixed(2)).join(' ')}.`;
  return { metrics, invalid, setup, parameters, details: { rssAtReadyMiB, steps, overload, loadAverageAtStart: loadBefore, loadAverageAtEnd: loadavg() } };
}

interface Engine {
  url: string;
  rssAtReadyMiB: number;
  bridgeToken: string;
  send(message: { type: 'phase' | 'stats' }): void;
  next<T extends EngineMessage['type']>(type: T): Promise<Extract<EngineMessage, { type: T }>>;
  stop(): Promise<void>;
}

/** A fresh engine (fresh DATA_DIR) in a process of its own; `unbounded`: admission control off. */
async function startEngine(integratorOrigin: string, unbounded: boolean): Promise<Engine> {
  const config: EngineConfig = { integratorOrigin, number: NUMBER, unbounded };
  const child = fork(new URL('./processes/embedded-engine.ts', import.meta.url), [], {
    execPath: process.execPath,
    // EMBEDDED_ENGINE_ARGS: flags for the engine only (`--cpu-prof --cpu-prof-dir=…` to profile it).
    execArgv: (process.env.EMBEDDED_ENGINE_ARGS ?? '').split(' ').filter(Boolean),
    // The engine's log (stdout) goes to stderr with the progress lines.
    stdio: ['ignore', 2, 'inherit', 'ipc'],
    env: { ...process.env, EMBEDDED_ENGINE_CONFIG: JSON.stringify(config) },
  });
  const exited = once(child, 'exit');
  const next = <T extends EngineMessage['type']>(type: T) => nextMessage<EngineMessage, T>(child, type, 'the engine');
  const ready = await next('ready');
  return {
    url: `${ready.url.replace('http', 'ws')}/v1/phone/ws`,
    rssAtReadyMiB: round(ready.rssMiB, 0),
    bridgeToken: ready.bridgeToken,
    send: (message) => child.send(message),
    next,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.disconnect();
      await exited;
    },
  };
}

/** One step: `turnsPerSecond` × 2 s calls speaking for a warm-up and `seconds`, then closed (their sessions end). */
async function runStep(
  engine: Engine,
  integrator: IntegratorProcess,
  turnsPerSecond: number,
  seconds: number,
  warmupSeconds: number,
  invalid: string[],
): Promise<Step> {
  const calls = Math.round((turnsPerSecond * INTERVAL_MS) / 1000);
  progress(name, `${turnsPerSecond} turns/s: ${calls} calls, ${warmupSeconds} s warm-up + ${seconds} s`);
  const { url, bridgeToken: token } = engine;
  const callers = startCallersProcess({ url, token, number: NUMBER, calls, intervalMs: INTERVAL_MS, warmupSeconds, seconds, matchIds: true });
  try {
    const { connectErrors } = await callers.next('connected');
    if (connectErrors > 0) invalid.push(`${turnsPerSecond} turns/s: ${connectErrors} of ${calls} calls could not connect.`);
    await new Promise((r) => setTimeout(r, 500)); // the setups are processed (sessions opened, or calls refused)
    const integratorBefore = await integrator.stats();
    const startedAt = performance.now();
    callers.send('start');
    const phase = setTimeout(() => engine.send({ type: 'phase' }), warmupSeconds * 1000);
    const results: CallersResults = await callers.next('finished');
    clearTimeout(phase);
    const integratorAfter = await integrator.stats();
    const integratorCpu = integratorAfter.cpuMicros - integratorBefore.cpuMicros;
    const integratorTlsHandshakes = integratorAfter.tlsHandshakes - integratorBefore.tlsHandshakes;
    const integratorCpuPercent = round(integratorCpu / 10 / (performance.now() - startedAt), 0);
    engine.send({ type: 'stats' });
    const { type: _type, ...stats } = await engine.next('stats');
    callers.send('close');
    const { dropped } = await callers.next('closed');
    const o = summarize(Float64Array.from(results.totalsMs.map((ms) => ms - INTEGRATOR_MS)));
    const step: Step = {
      turnsPerSecond,
      calls,
      prompts: results.prompts,
      answered: results.answered,
      unanswered: results.unanswered,
      mismatched: results.mismatched,
      duplicates: results.duplicates,
      refused: results.refused,
      dropped,
      overheadMs: { p50: round(o.p50, 2), p99: round(o.p99, 2), max: round(o.max, 2) },
      engine: stats,
      callersCpuPercent: round(results.cpuMicros / 1e4 / seconds, 0),
      integratorCpuPercent,
      integratorTlsHandshakes,
    };
    progress(
      name,
      `  p50 ${step.overheadMs.p50} ms, p99 ${step.overheadMs.p99} ms, answered ${step.answered}/${step.prompts}, refused ${step.refused} calls, ` +
        `RSS peak ${round(stats.rssPeakMiB, 0)} MiB, loop delay p99 ${round(stats.loopDelayP99Ms, 0)} ms, ` +
        `CPU engine ${round(stats.cpuMicros / 1e4 / stats.seconds, 0)} % / callers ${step.callersCpuPercent} % / integrator ${integratorCpuPercent} % (${integratorTlsHandshakes} TLS handshakes), ` +
        `runtime share p50 / p99 ${round(stats.runtimeMs.p50 - INTEGRATOR_MS, 1)} / ${round(stats.runtimeMs.p99 - INTEGRATOR_MS, 1)} ms, ` +
        `bot link p50 / p99 ${stats.botlinkMs.p50} / ${stats.botlinkMs.p99} ms, endpoint decisions ${JSON.stringify(stats.decisions)}`,
    );
    return step;
  } finally {
    await callers.stop();
    // The calls' sessions end and are written before the next step.
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

function withinCapacity(step: Step): boolean {
  const clean = step.unanswered === 0 && step.mismatched === 0 && step.duplicates === 0 && step.refused === 0 && step.dropped === 0;
  return clean && step.answered > 0 && step.overheadMs.p99 <= CAPACITY_P99_MS;
}
