/**
 * The Bot Link client against plain undici, in one run, against one loopback HTTPS integrator (a child process).
 *
 * Both loops keep BENCH_CONCURRENCY requests in flight over the same number of keep-alive connections and send
 * bodies of the same size with the same headers. The plain loop posts one pre-built body with an undici Agent and
 * reads the answer as text. The Bot Link loop does what a channel does per message: builds a fresh channel request,
 * then `send()` encodes and signs it, goes through the guarded client (address policy, deadline, capped read) and
 * interprets the answer (JSON, Ajv schema). Every Bot Link outcome must be an answer; any that is not fails the run.
 *
 * Rounds alternate between the two loops (ABBA order, so neither always runs first) after a warm-up of each.
 * Throughput is the median round's; latency percentiles pool every measured round. Targets: Bot Link
 * throughput at least 85 % of plain, and at most 0.5 ms added p99.
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'undici';
import { buildChannelRequest, encodeChannelRequest, type ChannelRequestInput } from '../src/botlink/channel-request.ts';
import { createBotLinkClient } from '../src/botlink/client.ts';
import { GuardedClient } from '../src/net/guarded-client.ts';
import type { Metric, RunResult } from './lib/benchmark.ts';
import { envNumber, progress as benchProgress } from './lib/benchmark.ts';
import { startIntegratorProcess, type IntegratorProcess } from './lib/integrator-process.ts';
import { LatencyRecorder, median, round, summarize, type LatencySummary } from './lib/stats.ts';

export const name = 'botlink-client';
export const title = 'The Bot Link client against plain undici';

/** Issue target: Bot Link throughput / plain throughput. */
const TARGET_RATIO = 0.85;
/** Issue target: Bot Link p99 − plain p99, milliseconds. */
const TARGET_ADDED_P99_MS = 0.5;

const testCa = readFileSync(new URL('../test/fixtures/tls/ca.pem', import.meta.url), 'utf8');
/** 64 characters, like a generated key (protocol §5.3). */
const key = 'bench-key-'.padEnd(64, '0123456789abcdef');
const path = '/botlink/channel';

/** One request's input; the session id keeps a fixed width so every body has the same size. */
function channelInput(seq: number): ChannelRequestInput {
  return {
    channel: 'whatsapp',
    conversationId: `wa-${String(seq % 100_000_000).padStart(8, '0')}`,
    message: 'Hello, where is my order 1234? I ordered it last Tuesday.',
    language: 'nl-NL',
    customerPhone: '+31612345678',
  };
}

type Mode = 'plain' | 'botlink';
/** One request; true when it succeeded (plain: status 200; Bot Link: an answer). */
type Once = (seq: number) => Promise<boolean>;

interface RoundResult {
  mode: Mode;
  completed: number;
  failures: number;
  wallMs: number;
  throughput: number;
  clientCpuMicros: number;
  serverCpuMicros: number;
  /** TLS handshakes the integrator accepted during the round: 0 when every request reused a warm connection. */
  tlsHandshakes: number;
  latencies: Float64Array;
}

interface Parameters {
  concurrency: number;
  connections: number;
  rounds: number;
  roundSeconds: number;
  warmupSeconds: number;
}

/** Keep `concurrency` requests in flight for `seconds`, then wait for the last ones. */
async function loop(
  mode: Mode,
  once: Once,
  concurrency: number,
  seconds: number,
  integrator: IntegratorProcess,
  onFailure: (err: unknown) => void,
): Promise<RoundResult> {
  const recorder = new LatencyRecorder(Math.ceil(seconds * 20_000));
  let seq = 0;
  let failures = 0;
  const serverBefore = await integrator.stats();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      let ok = false;
      try {
        ok = await once(seq++);
      } catch (err) {
        onFailure(err);
      }
      if (ok) recorder.record(performance.now() - t0);
      else failures++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const serverAfter = await integrator.stats();
  return {
    mode,
    completed: recorder.count,
    failures,
    wallMs,
    throughput: recorder.count / (wallMs / 1000),
    clientCpuMicros: cpu.user + cpu.system,
    serverCpuMicros: serverAfter.cpuMicros - serverBefore.cpuMicros,
    tlsHandshakes: serverAfter.tlsHandshakes - serverBefore.tlsHandshakes,
    latencies: recorder.values(),
  };
}

interface ModeSummary {
  /** Requests per second of the median round. */
  throughput: number;
  roundThroughputs: number[];
  completed: number;
  failures: number;
  latencyMs: LatencySummary;
  /** Client process CPU time per request, microseconds (user + system). */
  clientCpuMicrosPerRequest: number;
  /** Share of one core each process used while the loop ran. */
  clientCpuUse: number;
  serverCpuUse: number;
}

function summarizeMode(rounds: RoundResult[]): ModeSummary {
  const completed = rounds.reduce((n, r) => n + r.completed, 0);
  const wallMs = rounds.reduce((n, r) => n + r.wallMs, 0);
  const clientCpu = rounds.reduce((n, r) => n + r.clientCpuMicros, 0);
  const serverCpu = rounds.reduce((n, r) => n + r.serverCpuMicros, 0);
  return {
    throughput: median(rounds.map((r) => r.throughput)),
    roundThroughputs: rounds.map((r) => round(r.throughput, 0)),
    completed,
    failures: rounds.reduce((n, r) => n + r.failures, 0),
    latencyMs: summarize(...rounds.map((r) => r.latencies)),
    clientCpuMicrosPerRequest: completed === 0 ? Number.NaN : clientCpu / completed,
    clientCpuUse: clientCpu / 1000 / wallMs,
    serverCpuUse: serverCpu / 1000 / wallMs,
  };
}

function readParameters(): Parameters {
  return {
    concurrency: envNumber('BENCH_CONCURRENCY', 64, { min: 1 }),
    connections: envNumber('BENCH_CONNECTIONS', 64, { min: 1 }),
    rounds: envNumber('BENCH_ROUNDS', 5, { min: 1 }),
    roundSeconds: envNumber('BENCH_SECONDS', 4, { min: 0.1 }),
    warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 2, { min: 0 }),
  };
}

export async function run(): Promise<RunResult> {
  const parameters = readParameters();
  const { concurrency, connections, rounds, roundSeconds, warmupSeconds } = parameters;
  const integrator = await startIntegratorProcess();
  const endpointUrl = `${integrator.origin}${path}`;

  const plainAgent = new Agent({ connections, allowH2: false, connect: { ca: testCa } });
  const http = new GuardedClient({ allow: ['127.0.0.1/32'], ca: testCa, connectionsPerOrigin: connections });
  const botlink = createBotLinkClient({ http });

  // The plain loop sends the very bytes and headers a Bot Link request has, built once.
  const prebuilt = encodeChannelRequest(buildChannelRequest(channelInput(0)), key);
  const requestBytes = Buffer.byteLength(prebuilt.body);

  const noAnswers = new Map<string, number>();
  const errors = new Map<string, number>();
  const countError = (err: unknown) => {
    const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    errors.set(text, (errors.get(text) ?? 0) + 1);
  };

  const loops: Record<Mode, Once> = {
    async plain() {
      const { statusCode, body } = await plainAgent.request({
        origin: integrator.origin,
        path,
        method: 'POST',
        headers: prebuilt.headers,
        body: prebuilt.body,
      });
      await body.text();
      return statusCode === 200;
    },
    async botlink(seq) {
      const request = buildChannelRequest(channelInput(seq));
      const exchange = await botlink.send({ endpointUrl, key, request });
      if (exchange.outcome.outcome === 'answer') return true;
      const reason = exchange.outcome.reason;
      noAnswers.set(reason, (noAnswers.get(reason) ?? 0) + 1);
      return false;
    },
  };
  const measure = (mode: Mode, seconds: number) => loop(mode, loops[mode], concurrency, seconds, integrator, countError);

  const measured: RoundResult[] = [];
  let warmupFailures = 0;
  let responseBytes: number;
  try {
    // The response size, for the record (and a first check that the endpoint answers).
    const probe = await botlink.send({ endpointUrl, key, request: buildChannelRequest(channelInput(0)) });
    responseBytes = probe.body.length;
    if (probe.outcome.outcome !== 'answer') {
      throw new Error(`the integrator gave no answer: ${probe.outcome.reason}: ${probe.outcome.message}`);
    }

    if (warmupSeconds > 0) {
      progress(`warm-up: ${warmupSeconds} s each`);
      for (const mode of ['plain', 'botlink'] as const) warmupFailures += (await measure(mode, warmupSeconds)).failures;
    }
    for (let i = 0; i < rounds; i++) {
      // ABBA: plain first in even rounds, Bot Link first in odd ones, so drift over the run hits both alike.
      const order: Mode[] = i % 2 === 0 ? ['plain', 'botlink'] : ['botlink', 'plain'];
      for (const mode of order) {
        const result = await measure(mode, roundSeconds);
        measured.push(result);
        progress(
          `round ${i + 1}/${rounds} ${mode.padEnd(7)} ${Math.round(result.throughput)} req/s, ` +
            `${result.tlsHandshakes} TLS handshakes` +
            (result.failures > 0 ? `, ${result.failures} failed` : ''),
        );
      }
    }
  } finally {
    await Promise.allSettled([http.close(), plainAgent.close()]);
    await integrator.stop();
  }

  const plain = summarizeMode(measured.filter((r) => r.mode === 'plain'));
  const link = summarizeMode(measured.filter((r) => r.mode === 'botlink'));
  const failureNotes = [
    ...[...noAnswers].map(([reason, n]) => `${n} × no answer (${reason})`),
    ...[...errors].map(([message, n]) => `${n} × ${message}`),
  ];
  // A failure during the warm-up invalidates the run too: something is wrong with the set-up.
  const invalid = [
    ...(plain.failures > 0 ? [`${plain.failures} plain undici requests failed in the measured rounds`] : []),
    ...(link.failures > 0 ? [`${link.failures} Bot Link requests got no answer in the measured rounds`] : []),
    ...(warmupFailures > 0 ? [`${warmupFailures} requests failed during the warm-up`] : []),
    ...(failureNotes.length > 0 ? [`the failures were: ${failureNotes.join('; ')}`] : []),
  ];
  const ms = { unit: 'ms', digits: 3 } as const;
  const metrics: Metric[] = [
    { key: 'plain_throughput', label: 'plain undici throughput (median round)', unit: 'req/s', value: plain.throughput },
    { key: 'botlink_throughput', label: 'Bot Link throughput (median round)', unit: 'req/s', value: link.throughput },
    {
      key: 'throughput_ratio',
      label: 'throughput ratio Bot Link / plain',
      unit: '',
      digits: 3,
      value: link.throughput / plain.throughput,
      target: { op: '>=', value: TARGET_RATIO },
    },
    { key: 'plain_p50_ms', label: 'plain latency p50', ...ms, value: plain.latencyMs.p50 },
    { key: 'botlink_p50_ms', label: 'Bot Link latency p50', ...ms, value: link.latencyMs.p50 },
    { key: 'plain_p99_ms', label: 'plain latency p99', ...ms, value: plain.latencyMs.p99 },
    { key: 'botlink_p99_ms', label: 'Bot Link latency p99', ...ms, value: link.latencyMs.p99 },
    { key: 'added_p50_ms', label: 'added p50 (Bot Link − plain)', ...ms, value: link.latencyMs.p50 - plain.latencyMs.p50 },
    {
      key: 'added_p99_ms',
      label: 'added p99 (Bot Link − plain)',
      ...ms,
      value: link.latencyMs.p99 - plain.latencyMs.p99,
      target: { op: '<=', value: TARGET_ADDED_P99_MS },
    },
    { key: 'plain_cpu_per_request_us', label: 'plain client CPU per request', unit: 'µs', value: plain.clientCpuMicrosPerRequest },
    { key: 'botlink_cpu_per_request_us', label: 'Bot Link client CPU per request', unit: 'µs', value: link.clientCpuMicrosPerRequest },
    { key: 'plain_client_cpu_pct', label: 'plain: client CPU use (of one core)', unit: '%', value: plain.clientCpuUse * 100 },
    { key: 'plain_server_cpu_pct', label: 'plain: integrator CPU use (of one core)', unit: '%', value: plain.serverCpuUse * 100 },
    { key: 'botlink_client_cpu_pct', label: 'Bot Link: client CPU use (of one core)', unit: '%', value: link.clientCpuUse * 100 },
    { key: 'botlink_server_cpu_pct', label: 'Bot Link: integrator CPU use (of one core)', unit: '%', value: link.serverCpuUse * 100 },
    { key: 'plain_requests', label: 'plain requests measured', unit: '', value: plain.completed },
    { key: 'botlink_requests', label: 'Bot Link requests measured', unit: '', value: link.completed },
  ];
  const setup =
    `${concurrency} concurrent requests over ${connections} keep-alive HTTPS/1.1 connections to 127.0.0.1 (the integrator ` +
    `a child process), ${requestBytes}-byte request body, ${responseBytes}-byte response; ${warmupSeconds} s warm-up each, ` +
    `then ${rounds} alternating rounds of ${roundSeconds} s each (ABBA order). Round throughputs, req/s: plain ` +
    `${plain.roundThroughputs.join(', ')}; Bot Link ${link.roundThroughputs.join(', ')}.`;

  return {
    metrics,
    invalid,
    setup,
    parameters: { ...parameters, requestBytes, responseBytes, endpoint: 'loopback HTTPS, child process' },
    details: {
      failureDetails: failureNotes,
      plain: jsonMode(plain),
      botlink: jsonMode(link),
      rounds: measured.map((r) => {
        const latency = summarize(r.latencies);
        return {
          mode: r.mode,
          throughputPerSecond: round(r.throughput, 1),
          completed: r.completed,
          failures: r.failures,
          tlsHandshakes: r.tlsHandshakes,
          clientCpuMicrosPerRequest: round(r.clientCpuMicros / Math.max(1, r.completed), 1),
          p50Ms: round(latency.p50),
          p99Ms: round(latency.p99),
        };
      }),
    },
  };
}

function jsonMode(mode: ModeSummary): Record<string, unknown> {
  return {
    throughputPerSecond: round(mode.throughput, 1),
    roundThroughputs: mode.roundThroughputs,
    completed: mode.completed,
    failures: mode.failures,
    latencyMs: Object.fromEntries(Object.entries(mode.latencyMs).map(([k, v]) => [k, round(v)])),
    clientCpuMicrosPerRequest: round(mode.clientCpuMicrosPerRequest, 1),
    clientCpuUse: round(mode.clientCpuUse),
    serverCpuUse: round(mode.serverCpuUse),
  };
}

function progress(line: string): void {
  benchProgress(name, line);
}
