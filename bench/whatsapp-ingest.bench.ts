/**
 * WhatsApp webhook ingest: signed Meta events POSTed to the running service, each acknowledged (200) only after its
 * raw body is committed to PostgreSQL. Processing is paused (`whatsapp.processing: false`), so this measures the
 * ingest alone: HTTP, the raw-body parser, the signature check over the raw bytes and the durable INSERT.
 *
 * The service runs in a child process (this same file, started with --whatsapp-ingest-server) so it has a core of
 * its own; the load generator here keeps BENCH_CONCURRENCY requests in flight over keep-alive connections, each a
 * fresh Meta text-message payload (a new message id, a non-ASCII profile name escaped as Meta escapes it) signed with
 * the app secret. After the run, the number of stored rows must equal the number of 200s, or the run is invalid.
 *
 * PostgreSQL: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test); the benchmark creates a schema
 * of its own and drops it afterwards. Target: at least 2,000 acknowledged events per second.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { pino } from 'pino';
import { Agent } from 'undici';
import { migrate, openDatabase } from '../db/database.ts';
import { signWebhookBody } from '../src/channels/whatsapp/signature.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { startService } from '../src/app/service.ts';
import type { Metric, RunResult } from './lib/benchmark.ts';
import { envNumber, progress as benchProgress } from './lib/benchmark.ts';
import { LatencyRecorder, median, round, summarize } from './lib/stats.ts';

export const name = 'whatsapp-ingest';
export const title = 'WhatsApp webhook ingest: events acknowledged only once stored';

/** Issue target: acknowledged (durably stored) events per second. */
const TARGET_EVENTS_PER_SECOND = 2_000;
const SERVER_FLAG = '--whatsapp-ingest-server';
const APP_SECRET = 'bench-app-secret-0123456789abcdef';

/**
 * A text message exactly as Meta writes it (compact, non-ASCII as \u escapes); WAID, MSGID and TS are filled in
 * with fixed-width values so every body has the same size.
 */
const TEMPLATE =
  '{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messaging_product":"whatsapp",' +
  '"metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},"contacts":[{"profile":{"name":"Zo\\u00eb M\\u00fcller"},' +
  '"wa_id":"WAID"}],"messages":[{"from":"WAID","id":"wamid.HBgLMSGID","timestamp":"TS","text":{"body":"Hoi, waar blijft mijn bestelling 1234? ' +
  'Ik heb vorige week dinsdag besteld."},"type":"text"}]},"field":"messages"}]}]}';

function payload(seq: number, runId: string): { body: string; signature: string } {
  const body = TEMPLATE.replaceAll('WAID', `316${String(seq % 100_000_000).padStart(8, '0')}`)
    .replace('MSGID', `${runId}${String(seq).padStart(10, '0')}`)
    .replace('TS', String(Math.floor(Date.now() / 1000)));
  return { body, signature: signWebhookBody(APP_SECRET, body) };
}

interface Parameters {
  concurrency: number;
  rounds: number;
  roundSeconds: number;
  warmupSeconds: number;
  databaseUrl: string;
}

function readParameters(): Parameters {
  return {
    concurrency: envNumber('BENCH_CONCURRENCY', 64, { min: 1 }),
    rounds: envNumber('BENCH_ROUNDS', 5, { min: 1 }),
    roundSeconds: envNumber('BENCH_SECONDS', 4, { min: 0.1 }),
    warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 2, { min: 0 }),
    databaseUrl: process.env.BENCH_DATABASE_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test',
  };
}

type ServerMessage = { type: 'listening'; url: string } | { type: 'cpu'; usage: NodeJS.CpuUsage } | { type: 'failed'; error: string };

interface RoundResult {
  acknowledged: number;
  failures: number;
  wallMs: number;
  throughput: number;
  clientCpuMicros: number;
  serverCpuMicros: number;
  latencies: Float64Array;
}

export async function run(): Promise<RunResult> {
  const parameters = readParameters();
  const { concurrency, rounds, roundSeconds, warmupSeconds, databaseUrl } = parameters;
  const schema = `bench_wa_${randomBytes(5).toString('hex')}`;
  const runId = randomBytes(4).toString('hex').toUpperCase();

  const admin = await openDatabase({ url: databaseUrl, poolSize: 1 });
  await sql`create schema ${sql.id(schema)}`.execute(admin.db);
  const opened = await openDatabase({ url: databaseUrl, schema, poolSize: 1 });
  await migrate(opened.db, schema);

  const child = fork(fileURLToPath(import.meta.url), [SERVER_FLAG], {
    execPath: process.execPath,
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_DATABASE_URL: databaseUrl, BENCH_SCHEMA: schema },
  });
  const exited = once(child, 'exit');
  const errors = new Map<string, number>();
  const countError = (text: string) => errors.set(text, (errors.get(text) ?? 0) + 1);
  let agent: Agent | undefined;
  const measured: RoundResult[] = [];
  let acknowledgedTotal = 0;
  let failuresTotal = 0;
  let stored: number;
  const requestBytes = Buffer.byteLength(payload(0, runId).body);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.on('message', (m: ServerMessage) => {
        if (m.type === 'listening') resolve(m.url);
        if (m.type === 'failed') reject(new Error(`the service did not start: ${m.error}`));
      });
      child.once('exit', (code) => reject(new Error(`the service exited early (code ${code})`)));
    });
    const serverCpu = () =>
      new Promise<number>((resolve) => {
        const onMessage = (m: ServerMessage) => {
          if (m.type !== 'cpu') return;
          child.off('message', onMessage);
          resolve(m.usage.user + m.usage.system);
        };
        child.on('message', onMessage);
        child.send({ type: 'cpu' });
      });

    const origin = new URL(url).origin;
    agent = new Agent({ connections: concurrency, pipelining: 1 });
    let seq = 0;

    const loop = async (seconds: number): Promise<RoundResult> => {
      const recorder = new LatencyRecorder(Math.ceil(seconds * 10_000));
      let failures = 0;
      const serverBefore = await serverCpu();
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      const deadline = started + seconds * 1000;
      const worker = async () => {
        while (performance.now() < deadline) {
          const { body, signature } = payload(seq++, runId);
          const t0 = performance.now();
          try {
            const res = await agent!.request({
              origin,
              path: '/v1/whatsapp/webhook',
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
              body,
            });
            await res.body.dump();
            if (res.statusCode === 200) recorder.record(performance.now() - t0);
            else {
              failures++;
              countError(`HTTP ${res.statusCode}`);
            }
          } catch (err) {
            failures++;
            countError(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
          }
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      const wallMs = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      const serverAfter = await serverCpu();
      acknowledgedTotal += recorder.count;
      failuresTotal += failures;
      return {
        acknowledged: recorder.count,
        failures,
        wallMs,
        throughput: recorder.count / (wallMs / 1000),
        clientCpuMicros: cpu.user + cpu.system,
        serverCpuMicros: serverAfter - serverBefore,
        latencies: recorder.values(),
      };
    };

    if (warmupSeconds > 0) {
      progress(`warm-up: ${warmupSeconds} s`);
      await loop(warmupSeconds);
    }
    for (let i = 0; i < rounds; i++) {
      const result = await loop(roundSeconds);
      measured.push(result);
      progress(`round ${i + 1}/${rounds}: ${Math.round(result.throughput)} events/s` + (result.failures > 0 ? `, ${result.failures} failed` : ''));
    }
  } finally {
    await agent?.close();
    if (child.connected) child.disconnect();
    await exited;
    // Every 200 must stand for a committed row: the service is stopped, so nothing is still being written.
    const counted = await opened.db.selectFrom('whatsapp_webhook_events').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirst();
    stored = Number(counted?.n ?? 0);
    await opened.close();
    await sql`drop schema ${sql.id(schema)} cascade`.execute(admin.db);
    await admin.close();
  }

  const throughput = median(measured.map((r) => r.throughput));
  const latency = summarize(...measured.map((r) => r.latencies));
  const wallMs = measured.reduce((n, r) => n + r.wallMs, 0);
  const acknowledged = measured.reduce((n, r) => n + r.acknowledged, 0);
  const clientCpuUse = measured.reduce((n, r) => n + r.clientCpuMicros, 0) / 1000 / wallMs;
  const serverCpuUse = measured.reduce((n, r) => n + r.serverCpuMicros, 0) / 1000 / wallMs;
  const serverCpuPerEvent = measured.reduce((n, r) => n + r.serverCpuMicros, 0) / Math.max(1, acknowledged);
  const failureNotes = [...errors].map(([text, n]) => `${n} × ${text}`);
  // Rows with no 200 can exist (a request cut off after the commit); 200s with no row cannot.
  const invalid = [
    ...(failuresTotal > 0 ? [`${failuresTotal} requests failed (${failureNotes.join('; ')})`] : []),
    ...(stored < acknowledgedTotal ? [`${acknowledgedTotal - stored} acknowledged events have no stored row (${acknowledgedTotal} acknowledged, ${stored} stored)`] : []),
  ];
  const metrics: Metric[] = [
    {
      key: 'events_per_second',
      label: 'acknowledged events (median round)',
      unit: '/s',
      value: throughput,
      target: { op: '>=', value: TARGET_EVENTS_PER_SECOND },
    },
    { key: 'ack_p50_ms', label: 'ack latency p50', unit: 'ms', value: latency.p50 },
    { key: 'ack_p90_ms', label: 'ack latency p90', unit: 'ms', value: latency.p90 },
    { key: 'ack_p99_ms', label: 'ack latency p99', unit: 'ms', value: latency.p99 },
    { key: 'ack_max_ms', label: 'ack latency max', unit: 'ms', value: latency.max },
    { key: 'service_cpu_per_event_us', label: 'service CPU per event', unit: 'µs', value: serverCpuPerEvent },
    { key: 'load_generator_cpu_pct', label: 'load generator CPU use (of one core)', unit: '%', value: clientCpuUse * 100 },
    { key: 'service_cpu_pct', label: 'service CPU use (of one core)', unit: '%', value: serverCpuUse * 100 },
    { key: 'acknowledged', label: '200s, whole run with the warm-up', unit: '', value: acknowledgedTotal },
    { key: 'stored_rows', label: 'rows stored', unit: '', value: stored },
  ];
  const setup =
    `${concurrency} concurrent signed webhook POSTs (${requestBytes}-byte Meta text-message bodies, a new message id each) over ` +
    `${concurrency} keep-alive HTTP/1.1 connections to the service on 127.0.0.1 (a child process), PostgreSQL on the same ` +
    `machine (pool of 10, synchronous_commit as the server has it); processing paused, so this is the ingest alone; ` +
    `request logs at info to /dev/null; ${warmupSeconds} s warm-up, then ${rounds} rounds of ${roundSeconds} s. Round ` +
    `throughputs, events/s: ${measured.map((r) => Math.round(r.throughput)).join(', ')}.`;

  return {
    metrics,
    invalid,
    setup,
    parameters: { concurrency, rounds, roundSeconds, warmupSeconds, requestBytes, database: 'postgres', processing: 'paused' },
    details: {
      roundThroughputs: measured.map((r) => round(r.throughput, 0)),
      latencyMs: Object.fromEntries(Object.entries(latency).map(([k, v]) => [k, round(v)])),
      failureDetails: failureNotes,
    },
  };
}

function progress(line: string): void {
  benchProgress(name, line);
}

/** The child: the real service on PostgreSQL with WhatsApp processing paused, until the parent disconnects. */
async function serve(): Promise<void> {
  const databaseUrl = process.env.BENCH_DATABASE_URL!;
  const schema = process.env.BENCH_SCHEMA!;
  try {
    const database = await openDatabase({ url: databaseUrl, schema });
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      MASTER_KEY: randomBytes(32).toString('hex'),
      WHATSAPP_APP_SECRET: APP_SECRET,
      WHATSAPP_VERIFY_TOKEN: 'bench-verify-token',
      LOG_LEVEL: 'info',
    });
    // Production logs every request at info; written to /dev/null so the cost is measured without the noise.
    const logger = createLogger(config.logLevel, pino.destination({ dest: '/dev/null', sync: false }));
    const service = await startService({ config, logger, database: { db: database.db, kind: 'postgres', close: () => database.close() }, whatsapp: { processing: false } });
    process.on('message', (m: { type: string }) => {
      if (m.type === 'cpu') process.send!({ type: 'cpu', usage: process.cpuUsage() } satisfies ServerMessage);
    });
    process.once('disconnect', () => {
      void service.stop().then(() => database.close()).then(() => process.exit(0));
    });
    process.send!({ type: 'listening', url: service.url } satisfies ServerMessage);
  } catch (err) {
    process.send!({ type: 'failed', error: err instanceof Error ? err.message : String(err) } satisfies ServerMessage);
    process.exit(1);
  }
}

if (process.argv.includes(SERVER_FLAG) && process.argv[1] === fileURLToPath(import.meta.url)) await serve();
