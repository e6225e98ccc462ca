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
 * Throughput is the median round's; latency percentiles pool every measured round. Targets (issue): Bot Link
 * throughput at least 85 % of plain, and at most 0.5 ms added p99.
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'undici';
import { buildChannelRequest, encodeChannelRequest, type ChannelRequestInput } from '../src/botlink/channel-request.ts';
import { createBotLinkClient } from '../src/botlink/client.ts';
import { GuardedClient } from '../src/net/guarded-client.ts';
import type { BenchmarkResult, BenchmarkStatus } from './lib/benchmark.ts';
import { envNumber, markdownTable, textTable } from './lib/benchmark.ts';
import { startIntegratorProcess, type IntegratorProcess } from './lib/integrator-process.ts';
import { LatencyRecorder, median, round, summarize, type LatencySummary } from './lib/stats.ts';

export const name = 'botlink-client';

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
    sessionId: `wa-${String(seq % 100_000_000).padStart(8, '0')}`,
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

export async function run(): Promise<BenchmarkResult> {
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
  const ratio = link.throughput / plain.throughput;
  const addedP50 = link.latencyMs.p50 - plain.latencyMs.p50;
  const addedP99 = link.latencyMs.p99 - plain.latencyMs.p99;
  const ratioMet = ratio >= TARGET_RATIO;
  const p99Met = addedP99 <= TARGET_ADDED_P99_MS;
  // A failure during the warm-up invalidates the run too: something is wrong with the set-up.
  const failures = plain.failures + link.failures + warmupFailures;
  const status: BenchmarkStatus = failures > 0 ? 'failed' : ratioMet && p99Met ? 'pass' : 'miss';

  const verdict = (met: boolean) => (failures > 0 ? 'invalid' : met ? 'pass' : 'MISS');
  const ms = (v: number) => v.toFixed(3);
  const signedMs = (v: number) => `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(3)}`;
  const header = ['', 'plain undici', 'Bot Link client', 'target', 'result'];
  const rows = [
    ['throughput, req/s (median round)', plain.throughput.toFixed(0), link.throughput.toFixed(0), '', ''],
    ['throughput ratio Bot Link / plain', '', ratio.toFixed(3), `≥ ${TARGET_RATIO}`, verdict(ratioMet)],
    ['latency p50, ms', ms(plain.latencyMs.p50), ms(link.latencyMs.p50), '', ''],
    ['latency p90, ms', ms(plain.latencyMs.p90), ms(link.latencyMs.p90), '', ''],
    ['latency p99, ms', ms(plain.latencyMs.p99), ms(link.latencyMs.p99), '', ''],
    ['added p50, ms', '', signedMs(addedP50), '', ''],
    ['added p99, ms', '', signedMs(addedP99), `≤ ${TARGET_ADDED_P99_MS}`, verdict(p99Met)],
    [
      'client CPU per request, µs',
      plain.clientCpuMicrosPerRequest.toFixed(0),
      link.clientCpuMicrosPerRequest.toFixed(0),
      '',
      '',
    ],
    ['client / server CPU use, % of a core', cpuPair(plain), cpuPair(link), '', ''],
    ['requests measured (failed)', `${plain.completed} (${plain.failures})`, `${link.completed} (${link.failures})`, '', ''],
  ];

  const missed = [
    ...(ratioMet ? [] : [`throughput ratio ${ratio.toFixed(3)} is below ${TARGET_RATIO}`]),
    ...(p99Met ? [] : [`added p99 ${addedP99.toFixed(3)} ms is above ${TARGET_ADDED_P99_MS} ms`]),
  ];
  const failureNotes = [
    ...[...noAnswers].map(([reason, n]) => `${n} × no answer (${reason})`),
    ...[...errors].map(([message, n]) => `${n} × ${message}`),
  ];
  const [verdictWord, detail] =
    status === 'failed'
      ? ['FAILED', `${failures} requests failed, so these figures are not valid (${failureNotes.join('; ')}).`]
      : status === 'pass'
        ? ['PASS', 'Both targets met.']
        : ['TARGET MISSED', `${missed.join('; ')}.`];
  const setup =
    `${concurrency} concurrent requests over ${connections} keep-alive HTTPS/1.1 connections to 127.0.0.1, ` +
    `${requestBytes}-byte request body, ${responseBytes}-byte response; ${warmupSeconds} s warm-up each, then ` +
    `${rounds} alternating rounds of ${roundSeconds} s each (ABBA order).`;

  const markdown = [
    markdownTable(header, rows),
    '',
    `**${verdictWord.charAt(0)}${verdictWord.slice(1).toLowerCase()}:** ${detail}`,
    '',
    `Setup: ${setup} Round throughputs, req/s: plain ${plain.roundThroughputs.join(', ')}; ` +
      `Bot Link ${link.roundThroughputs.join(', ')}.`,
  ].join('\n');

  return {
    status,
    table: `${textTable(header, rows)}\n\n${verdictWord}: ${detail}\n${setup}`,
    markdown,
    data: {
      parameters: { ...parameters, requestBytes, responseBytes, endpoint: 'loopback HTTPS, child process' },
      results: {
        targets: { minThroughputRatio: TARGET_RATIO, maxAddedP99Ms: TARGET_ADDED_P99_MS },
        throughputRatio: round(ratio),
        addedP50Ms: round(addedP50),
        addedP99Ms: round(addedP99),
        ratioMet,
        addedP99Met: p99Met,
        failures,
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
    },
  };
}

function cpuPair(mode: ModeSummary): string {
  return `${Math.round(mode.clientCpuUse * 100)} / ${Math.round(mode.serverCpuUse * 100)}`;
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
  process.stderr.write(`  [${name}] ${line}\n`);
}
