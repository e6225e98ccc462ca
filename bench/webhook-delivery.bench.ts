// Over 400 lines: one script with its two measurements (throughput, then latency) and the plain undici loop they are compared with.
/**
 * Outgoing webhooks from the outbox to a loopback HTTPS receiver (issue 5), on real PostgreSQL, beside a plain undici
 * POST loop to the same receiver in the same run.
 *
 * 1. Throughput: WEBHOOK_BENCH_EVENTS events are committed to the outbox with recordEvent (no worker running), then
 *    a delivery worker starts and drains them: it claims (FOR UPDATE SKIP LOCKED, leased), signs (Standard Webhooks),
 *    POSTs through the guarded client and writes every outcome. Deliveries per second = events / (last receipt −
 *    start). The plain loop keeps as many requests in flight (endpoints × per-endpoint concurrency) over as many
 *    keep-alive connections, with a pre-built body of the same size and the same headers. Rounds alternate (plain
 *    first, then webhooks); the median round counts. Targets: ≥ 1,000 deliveries/s and ≥ 50 % of the plain loop.
 * 2. Commit-to-receipt latency: events committed one by one at WEBHOOK_BENCH_RATE per second while the worker runs
 *    (woken by NOTIFY and the in-process signal, as in the service): from the moment recordEvent's commit returned
 *    to the moment the receiver read the request, p50 and p99.
 *
 * The receiver is this same file started as a child process (WEBHOOK_BENCH_ROLE=receiver): it answers every POST with
 * 200 `{"ok":true}` and notes when each webhook-id arrived; the benchmark process has one core to itself.
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test): a schema of its own, dropped afterwards.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { Agent } from 'undici';
import { migrate, openDatabase, type Db } from '../db/database.ts';
import { webhooksRepository } from '../db/repositories/webhooks.repository.ts';
import type { WebhookDeliveryStatus } from '../db/schema.ts';
import { createLogger } from '../src/log.ts';
import { GuardedClient } from '../src/net/guarded-client.ts';
import { createSecretBox } from '../src/secrets/secret-box.ts';
import { createDeliveryWorker, type DeliveryWorker } from '../src/webhooks/delivery-worker.ts';
import { dashboardUrl, timestamp, type NewChatPayload } from '../src/webhooks/events.ts';
import { ENDPOINT_CONCURRENCY } from '../src/webhooks/limits.ts';
import { recordEvent } from '../src/webhooks/outbox.ts';
import { listenForDeliveries } from '../src/webhooks/outbox-listener.ts';
import { encodePayload } from '../src/webhooks/payload-body.ts';
import { secretKey, webhookHeaders } from '../src/webhooks/signing.ts';
import { createWebhookService } from '../src/webhooks/webhook-service.ts';
import type { BenchmarkResult, BenchmarkStatus } from './lib/benchmark.ts';
import { envNumber, markdownTable, textTable } from './lib/benchmark.ts';
import { LatencyRecorder, median, round, summarize } from './lib/stats.ts';

export const name = 'webhook-delivery';

const TARGET_PER_SECOND = 1_000;
const TARGET_RATIO = 0.5;
const tlsDir = new URL('../test/fixtures/tls/', import.meta.url);
const testCa = readFileSync(new URL('ca.pem', tlsDir), 'utf8');

/** Epoch milliseconds with sub-millisecond resolution; comparable across the two processes on one machine. */
const clock = () => performance.timeOrigin + performance.now();

// The receiver process.

type ReceiverMessage =
  | { type: 'listening'; port: number }
  | { type: 'receipts'; ids: string[]; times: number[]; total: number };

if (process.env.WEBHOOK_BENCH_ROLE === 'receiver') {
  const answer = Buffer.from('{"ok":true}');
  const headers = { 'content-type': 'application/json', 'content-length': String(answer.length) };
  let ids: string[] = [];
  let times: number[] = [];
  let total = 0;
  const server = createServer({ cert: readFileSync(new URL('server.pem', tlsDir)), key: readFileSync(new URL('server-key.pem', tlsDir)) }, (req, res) => {
    const id = req.headers['webhook-id'];
    req.on('data', () => {});
    req.on('end', () => {
      total++;
      if (typeof id === 'string') {
        ids.push(id);
        times.push(clock());
      }
      res.writeHead(200, headers);
      res.end(answer);
    });
  });
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 130_000;
  server.listen(0, '127.0.0.1', () => process.send?.({ type: 'listening', port: (server.address() as AddressInfo).port } satisfies ReceiverMessage));
  process.on('message', (message: { type?: string }) => {
    if (message.type !== 'receipts') return;
    process.send?.({ type: 'receipts', ids, times, total } satisfies ReceiverMessage);
    ids = [];
    times = [];
    total = 0;
  });
  process.on('disconnect', () => process.exit(0));
}

interface Receiver {
  origin: string;
  /** Receipts since the last call (webhook-id → first arrival), and every request counted. */
  take(): Promise<{ arrivals: Map<string, number>; total: number; duplicates: number }>;
  stop(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const child: ChildProcess = fork(new URL(import.meta.url), [], {
    execPath: process.execPath,
    execArgv: [],
    env: { ...process.env, WEBHOOK_BENCH_ROLE: 'receiver' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [first] = (await once(child, 'message')) as [ReceiverMessage];
  if (first.type !== 'listening') throw new Error('the receiver did not start');
  return {
    origin: `https://127.0.0.1:${first.port}`,
    take() {
      return new Promise((resolve) => {
        const onMessage = (m: ReceiverMessage) => {
          if (m.type !== 'receipts') return;
          child.off('message', onMessage);
          const arrivals = new Map<string, number>();
          let duplicates = 0;
          m.ids.forEach((id, i) => {
            if (arrivals.has(id)) duplicates++;
            else arrivals.set(id, m.times[i]!);
          });
          resolve({ arrivals, total: m.total, duplicates });
        };
        child.on('message', onMessage);
        child.send({ type: 'receipts' });
      });
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
  };
}

// The benchmark.

interface Parameters {
  endpoints: number;
  concurrencyPerEndpoint: number;
  events: number;
  rounds: number;
  plainSeconds: number;
  latencyRate: number;
  latencySeconds: number;
}

function readParameters(): Parameters {
  return {
    endpoints: envNumber('WEBHOOK_BENCH_ENDPOINTS', 4, { min: 1 }),
    concurrencyPerEndpoint: envNumber('WEBHOOK_BENCH_CONCURRENCY', ENDPOINT_CONCURRENCY, { min: 1 }),
    events: envNumber('WEBHOOK_BENCH_EVENTS', 10_000, { min: 100 }),
    rounds: envNumber('BENCH_ROUNDS', 3, { min: 1 }),
    plainSeconds: envNumber('BENCH_SECONDS', 4, { min: 0.5 }),
    latencyRate: envNumber('WEBHOOK_BENCH_RATE', 500, { min: 1 }),
    latencySeconds: envNumber('WEBHOOK_BENCH_LATENCY_SECONDS', 6, { min: 1 }),
  };
}

function chat(n: number): NewChatPayload {
  const id = `conv-${String(n).padStart(8, '0')}`;
  return {
    event: 'new_chat',
    conversation_id: id,
    visitor_message: 'Hello, do you ship to Belgium and how long does it take?',
    page_url: 'https://shop.example/products/espresso-machine-deluxe',
    timestamp: timestamp(new Date()),
    dashboard_url: dashboardUrl('https://botlink.example', id),
  };
}

/** Commits `count` events spread over the workspaces, in transactions of 100 with four producers side by side. */
async function fillOutbox(db: Db, workspaces: readonly string[], count: number, first: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) {
        const start = next;
        const end = Math.min(count, start + 100);
        next = end;
        await db.transaction().execute(async (trx) => {
          for (let n = start; n < end; n++) await recordEvent(trx, workspaces[n % workspaces.length]!, chat(first + n));
        });
      }
    }),
  );
}

async function count(db: Db, status: WebhookDeliveryStatus): Promise<number> {
  const row = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<string>().as('n')).where('status', '=', status).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function run(): Promise<BenchmarkResult> {
  const parameters = readParameters();
  const { endpoints, concurrencyPerEndpoint, events, rounds, plainSeconds, latencyRate, latencySeconds } = parameters;
  const inFlight = endpoints * concurrencyPerEndpoint;
  const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `bench_webhooks_${randomBytes(4).toString('hex')}`;
  const admin = await openDatabase({ url, poolSize: 1 });
  await sql`create schema ${sql.id(schema)}`.execute(admin.db);
  const database = await openDatabase({ url, schema, poolSize: 16 });
  const receiver = await startReceiver();
  const http = new GuardedClient({ allow: ['127.0.0.1/32'], ca: testCa, connectionsPerOrigin: inFlight });
  const plainAgent = new Agent({ connections: inFlight, allowH2: false, connect: { ca: testCa } });
  const logger = createLogger('warn');
  const secrets = createSecretBox(randomBytes(32));
  let worker: DeliveryWorker | undefined;
  let listener: Awaited<ReturnType<typeof listenForDeliveries>> | undefined;

  const plainRounds: number[] = [];
  const webhookRounds: number[] = [];
  const roundNotes: string[] = [];
  let failures = 0;
  let duplicates = 0;
  const latency = new LatencyRecorder(Math.ceil(latencyRate * latencySeconds) + 16);
  let latencyLost = 0;
  let cpuPerDelivery = Number.NaN;

  try {
    await migrate(database.db, schema);
    const db = database.db;
    const repository = webhooksRepository(db);
    const service = createWebhookService({ db, repository, secrets, http, worker: { wake() {}, whenRecorded: async () => false } });
    const workspaces: string[] = [];
    let secret = '';
    for (let i = 0; i < endpoints; i++) {
      const id = randomUUID();
      await db.insertInto('workspaces').values({ id, name: `Bench ${i}`, created_at: new Date() }).execute();
      secret = (await service.put(id, 'new_chat', { url: `${receiver.origin}/hooks/${i}` })).secret!;
      workspaces.push(id);
    }
    const newWorker = () => createDeliveryWorker({ repository, secrets, http, logger, endpointConcurrency: concurrencyPerEndpoint });

    // The plain loop: the very bytes and headers of a delivery, built once.
    const body = encodePayload(chat(0));
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Service-Webhooks/1.0',
      ...webhookHeaders([secretKey(secret)], 'msg_plainloop0000000000000000000000', Math.floor(Date.now() / 1000), body),
    };
    const plainLoop = async (seconds: number): Promise<number> => {
      let done = 0;
      const deadline = performance.now() + seconds * 1000;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (performance.now() < deadline) {
            const { statusCode, body: answer } = await plainAgent.request({ origin: receiver.origin, path: '/hooks/plain', method: 'POST', headers, body });
            await answer.text();
            if (statusCode === 200) done++;
            else failures++;
          }
        }),
      );
      return done / ((performance.now() - started) / 1000);
    };

    const drain = async (first: number): Promise<number> => {
      await fillOutbox(db, workspaces, events, first);
      await receiver.take();
      const cpuBefore = process.cpuUsage();
      const started = clock();
      worker = newWorker();
      worker.start();
      const arrivals = new Map<string, number>();
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const taken = await receiver.take();
        duplicates += taken.duplicates;
        for (const [id, at] of taken.arrivals) {
          if (arrivals.has(id)) duplicates++;
          else arrivals.set(id, at);
        }
        if (arrivals.size >= events) break;
        if (clock() - started > 120_000) throw new Error(`only ${arrivals.size} of ${events} deliveries arrived in 120 s`);
      }
      const last = Math.max(...arrivals.values());
      const cpu = process.cpuUsage(cpuBefore);
      await worker.stop(5_000);
      worker = undefined;
      const rate = events / ((last - started) / 1000);
      cpuPerDelivery = (cpu.user + cpu.system) / events;
      return rate;
    };

    progress(`warm-up: plain 1 s, ${Math.min(2_000, events)} deliveries`);
    await plainLoop(1);
    await fillOutbox(db, workspaces, Math.min(2_000, events), 0);
    worker = newWorker();
    worker.start();
    await worker.runDue();
    await worker.stop(5_000);
    worker = undefined;
    await receiver.take();

    let first = 1_000_000;
    for (let i = 0; i < rounds; i++) {
      const plain = await plainLoop(plainSeconds);
      plainRounds.push(plain);
      const hooks = await drain(first);
      first += events;
      webhookRounds.push(hooks);
      roundNotes.push(`${Math.round(plain)} / ${Math.round(hooks)}`);
      progress(`round ${i + 1}/${rounds}: plain ${Math.round(plain)} req/s, webhooks ${Math.round(hooks)} deliveries/s (${cpuPerDelivery.toFixed(0)} µs CPU each)`);
    }
    failures += await count(db, 'failed');
    const pendingLeft = await count(db, 'pending');
    if (pendingLeft > 0) {
      failures += pendingLeft;
      progress(`${pendingLeft} deliveries still pending after the rounds`);
    }

    // Commit-to-receipt at a steady rate, with the worker running as in the service (NOTIFY and in-process wake-ups).
    progress(`latency: ${latencyRate} events/s for ${latencySeconds} s`);
    worker = newWorker();
    worker.start();
    listener = await listenForDeliveries({ url, db, logger, onWake: worker.wake });
    await receiver.take();
    const committed = new Map<string, number>();
    const total = Math.round(latencyRate * latencySeconds);
    const startedAt = performance.now();
    const inserts: Promise<void>[] = [];
    for (let n = 0; n < total; n++) {
      const due = startedAt + (n * 1000) / latencyRate;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      inserts.push(
        recordEvent(db, workspaces[n % workspaces.length]!, chat(first + n)).then((id) => {
          committed.set(id, clock());
        }),
      );
    }
    await Promise.all(inserts);
    const arrivals = new Map<string, number>();
    const deadline = clock() + 30_000;
    while (arrivals.size < committed.size && clock() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const taken = await receiver.take();
      duplicates += taken.duplicates;
      for (const [id, at] of taken.arrivals) {
        if (arrivals.has(id)) duplicates++;
        else arrivals.set(id, at);
      }
    }
    for (const [id, at] of committed) {
      const arrived = arrivals.get(id);
      if (arrived === undefined) latencyLost++;
      // NOTIFY can wake the worker before the producer's own connection has read the commit's acknowledgement.
      else latency.record(Math.max(0, arrived - at));
    }
    failures += latencyLost;
  } finally {
    await listener?.close();
    await worker?.stop(2_000);
    await Promise.allSettled([http.close(), plainAgent.close()]);
    await receiver.stop();
    await database.close();
    await sql`drop schema ${sql.id(schema)} cascade`.execute(admin.db);
    await admin.close();
  }

  const plain = median(plainRounds);
  const hooks = median(webhookRounds);
  const ratio = hooks / plain;
  const lat = summarize(latency.values());
  const rateMet = hooks >= TARGET_PER_SECOND;
  const ratioMet = ratio >= TARGET_RATIO;
  const status: BenchmarkStatus = failures > 0 ? 'failed' : rateMet && ratioMet ? 'pass' : 'miss';
  const verdict = (met: boolean) => (failures > 0 ? 'invalid' : met ? 'pass' : 'MISS');
  const ms = (v: number) => v.toFixed(1);

  const header = ['', 'plain undici', 'webhook delivery', 'target', 'result'];
  const rows = [
    ['throughput, per second (median round)', plain.toFixed(0), hooks.toFixed(0), `≥ ${TARGET_PER_SECOND}`, verdict(rateMet)],
    ['ratio webhooks / plain', '', ratio.toFixed(3), `≥ ${TARGET_RATIO}`, verdict(ratioMet)],
    ['client CPU per delivery, µs (last round)', '', cpuPerDelivery.toFixed(0), '', ''],
    [`commit-to-receipt p50, ms (${latencyRate}/s)`, '', ms(lat.p50), '', ''],
    [`commit-to-receipt p99, ms (${latencyRate}/s)`, '', ms(lat.p99), '', ''],
    ['commit-to-receipt max, ms', '', ms(lat.max), '', ''],
    ['duplicates / failed or lost', '', `${duplicates} / ${failures}`, '0 / 0', ''],
  ];
  const setup =
    `${endpoints} endpoints × ${concurrencyPerEndpoint} in flight = ${inFlight} requests in flight for both loops, ` +
    `${Buffer.byteLength(encodePayload(chat(0)))}-byte new_chat body, loopback HTTPS receiver in a child process; ` +
    `each webhook round drains ${events} events committed beforehand; plain rounds of ${plainSeconds} s. ` +
    `Round throughputs (plain / webhooks): ${roundNotes.join('; ')}.`;
  const missed = [
    ...(rateMet ? [] : [`${hooks.toFixed(0)} deliveries/s is below ${TARGET_PER_SECOND}`]),
    ...(ratioMet ? [] : [`the ratio ${ratio.toFixed(3)} is below ${TARGET_RATIO}`]),
  ];
  const [word, detail] =
    status === 'failed'
      ? ['FAILED', `${failures} deliveries failed, stayed pending or were lost; the figures are not valid.`]
      : status === 'pass'
        ? ['PASS', 'Both targets met.']
        : ['TARGET MISSED', `${missed.join('; ')}.`];
  const markdown = [markdownTable(header, rows), '', `**${word.charAt(0)}${word.slice(1).toLowerCase()}:** ${detail}`, '', `Setup: ${setup}`].join('\n');
  return {
    status,
    table: `${textTable(header, rows)}\n\n${word}: ${detail}\n${setup}`,
    markdown,
    data: {
      parameters: { ...parameters, inFlight, database: 'postgres' },
      results: {
        targets: { minDeliveriesPerSecond: TARGET_PER_SECOND, minRatio: TARGET_RATIO },
        plainPerSecond: round(plain, 1),
        deliveriesPerSecond: round(hooks, 1),
        ratio: round(ratio),
        plainRounds: plainRounds.map((r) => round(r, 0)),
        webhookRounds: webhookRounds.map((r) => round(r, 0)),
        clientCpuMicrosPerDelivery: round(cpuPerDelivery, 1),
        commitToReceiptMs: Object.fromEntries(Object.entries(lat).map(([k, v]) => [k, round(v)])),
        duplicates,
        failures,
        latencyLost,
      },
    },
  };
}

function progress(line: string): void {
  process.stderr.write(`  [${name}] ${line}\n`);
}
