// Over 400 lines: the receiver process, the two measurements (throughput, then latency) for two systems, and the result.
/**
 * Outgoing webhooks from a durable queue to a loopback HTTPS receiver, on real PostgreSQL: Botlink's
 * outbox and delivery worker beside graphile-worker 0.18 doing the same work per event, in the same run, on the same
 * database, receiver and concurrency.
 *
 * Processes: this one (the producer and the judge), the receiver, and one delivering process per system
 * (bench/processes/webhook-deliverer.ts), so that the CPU per delivery of each is its own process's CPU, measured alike.
 *
 * Per event, both systems: a durable record committed by the producer (Botlink: recordEvent, the outbox row and its
 * delivery; graphile-worker: `add_job` with the URL and the payload), in transactions of 100 for the throughput rounds
 * and one by one for the latency run; then, in the delivering process, the Standard Webhooks signature, the POST with
 * undici through the same guarded client, and the job marked done (Botlink: the outcome, its attempt row and the
 * endpoint's health; graphile-worker: the job deleted).
 *
 * 1. Throughput: WEBHOOK_BENCH_EVENTS events committed beforehand, then the system's worker starts and drains them.
 *    Deliveries per second = events / (last receipt − start). Rounds alternate (Botlink, then graphile-worker); the
 *    median round counts; CPU per delivery is the delivering process's CPU over the round / events.
 * 2. Commit-to-receipt: events committed one by one at WEBHOOK_BENCH_RATE per second (default 100) while the worker
 *    runs, woken by NOTIFY: from the moment the producer's commit returned to the moment the receiver read the request.
 *
 * Every webhook-id must arrive exactly once: a lost or duplicated delivery, a failed or still pending one makes the
 * run invalid. The receiver answers every POST with 200 `{"ok":true}` and notes when each webhook-id arrived.
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test): schemas of their own, dropped afterwards.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { migrate, openDatabase, type Db } from '../db/database.ts';
import { webhooksRepository } from '../db/repositories/webhooks.repository.ts';
import type { WebhookDeliveryStatus } from '../db/schema.ts';
import { GuardedClient } from '../src/net/guarded-client.ts';
import { createSecretBox } from '../src/secrets/secret-box.ts';
import { dashboardUrl, timestamp, type NewChatPayload } from '../src/webhooks/events.ts';
import { ENDPOINT_CONCURRENCY } from '../src/webhooks/limits.ts';
import { newEventId, recordEvent } from '../src/webhooks/outbox.ts';
import { encodePayload } from '../src/webhooks/payload-body.ts';
import { createWebhookService } from '../src/webhooks/webhook-service.ts';
import type { Metric, RunResult } from './lib/benchmark.ts';
import { envNumber, progress as progressOf } from './lib/benchmark.ts';
import { LatencyRecorder, median, round, summarize } from './lib/stats.ts';
import type { DelivererCommand, DelivererConfig, DelivererKind, DelivererMessage, GraphileDeliveryJob } from './processes/webhook-deliverer.ts';

export const name = 'webhook-delivery';
export const title = 'Webhook delivery: Botlink beside graphile-worker';

/** Commit-to-receipt p99 at the steady rate. */
const TARGET_LATENCY_P99_MS = 20;
const tlsDir = new URL('../test/fixtures/tls/', import.meta.url);

/** Epoch milliseconds with sub-millisecond resolution; comparable across the processes of one machine. */
const clock = () => performance.timeOrigin + performance.now();
const progress = (line: string) => progressOf(name, line);

// The receiver process.

type ReceiverMessage = { type: 'listening'; port: number } | { type: 'receipts'; ids: string[]; times: number[]; total: number };

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

interface Receipts {
  /** webhook-id → first arrival. */
  arrivals: Map<string, number>;
  /** Ids that arrived more than once in this batch. */
  repeated: string[];
}

async function startReceiver() {
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
    /** Receipts since the last call. */
    take(): Promise<Receipts> {
      return new Promise((resolve) => {
        const onMessage = (m: ReceiverMessage) => {
          if (m.type !== 'receipts') return;
          child.off('message', onMessage);
          const arrivals = new Map<string, number>();
          const repeated: string[] = [];
          m.ids.forEach((id, i) => {
            if (arrivals.has(id)) repeated.push(id);
            else arrivals.set(id, m.times[i]!);
          });
          resolve({ arrivals, repeated });
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
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

// The delivering processes.

async function startDeliverer(config: DelivererConfig) {
  const child = fork(new URL('./processes/webhook-deliverer.ts', import.meta.url), [], {
    execPath: process.execPath,
    // WEBHOOK_BENCH_PROFILE=botlink,graphile: a CPU profile of those delivering processes (node --cpu-prof).
    execArgv: (process.env.WEBHOOK_BENCH_PROFILE ?? '').split(',').includes(config.kind) ? ['--cpu-prof', `--cpu-prof-dir=${process.env.WEBHOOK_BENCH_PROFILE_DIR ?? 'bench/results/profiles'}`] : [],
    env: { ...process.env, DELIVERER_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = once(child, 'exit');
  const next = <T extends DelivererMessage['type']>(type: T) =>
    new Promise<Extract<DelivererMessage, { type: T }>>((resolve, reject) => {
      const onMessage = (message: DelivererMessage) => {
        if (message.type !== type && message.type !== 'failed') return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (message.type === 'failed') reject(new Error(`the ${config.kind} deliverer failed: ${message.message}`));
        else resolve(message as Extract<DelivererMessage, { type: T }>);
      };
      const onExit = (code: number | null) => reject(new Error(`the ${config.kind} deliverer exited early (code ${code})`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  await next('ready');
  const ask = <T extends DelivererMessage['type']>(command: DelivererCommand, answer: T) => {
    const reply = next(answer);
    child.send(command);
    return reply;
  };
  return {
    kind: config.kind,
    start: () => ask({ type: 'start' }, 'started'),
    /** Stops the worker; the CPU its process used since `start` (user and system, and system alone), µs. */
    stop: async () => {
      const { cpuMicros, systemMicros } = await ask({ type: 'stop' }, 'stopped');
      return { cpuMicros, systemMicros };
    },
    plain: (seconds: number) => ask({ type: 'plain', seconds }, 'plainDone'),
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.disconnect();
      await exited;
    },
  };
}
type Deliverer = Awaited<ReturnType<typeof startDeliverer>>;

// The benchmark.

interface Parameters {
  endpoints: number;
  concurrencyPerEndpoint: number;
  events: number;
  rounds: number;
  plainSeconds: number;
  latencyRate: number;
  latencySeconds: number;
  poolSize: number;
}

function readParameters(): Parameters {
  return {
    endpoints: envNumber('WEBHOOK_BENCH_ENDPOINTS', 4, { min: 1 }),
    concurrencyPerEndpoint: envNumber('WEBHOOK_BENCH_CONCURRENCY', ENDPOINT_CONCURRENCY, { min: 1 }),
    events: envNumber('WEBHOOK_BENCH_EVENTS', 10_000, { min: 100 }),
    rounds: envNumber('BENCH_ROUNDS', 3, { min: 1 }),
    plainSeconds: envNumber('BENCH_SECONDS', 3, { min: 0.5 }),
    latencyRate: envNumber('WEBHOOK_BENCH_RATE', 100, { min: 1 }),
    latencySeconds: envNumber('WEBHOOK_BENCH_LATENCY_SECONDS', 10, { min: 1 }),
    poolSize: envNumber('WEBHOOK_BENCH_POOL', 16, { min: 2 }),
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

/** How one system's events are committed: one event in the executor (a transaction or the pool); returns its webhook-id. */
type Produce = (executor: Db, n: number) => Promise<string>;

/** Commits `count` events in transactions of 100, four producers side by side; returns their webhook-ids. */
async function fill(db: Db, produce: Produce, count: number, first: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) {
        const start = next;
        const end = Math.min(count, start + 100);
        next = end;
        await db.transaction().execute(async (trx) => {
          for (let n = start; n < end; n++) ids.push(await produce(trx, first + n));
        });
      }
    }),
  );
  return ids;
}

/** What arrived, matched to what was committed: every id once, nothing else. */
class Ledger {
  readonly arrivals = new Map<string, number>();
  readonly duplicates: string[] = [];
  readonly strangers: string[] = [];
  readonly expected: ReadonlySet<string>;

  constructor(expected: ReadonlySet<string>) {
    this.expected = expected;
  }

  add(receipts: Receipts): void {
    this.duplicates.push(...receipts.repeated);
    for (const [id, at] of receipts.arrivals) {
      if (!this.expected.has(id)) this.strangers.push(id);
      else if (this.arrivals.has(id)) this.duplicates.push(id);
      else this.arrivals.set(id, at);
    }
  }

  get missing(): number {
    return this.expected.size - this.arrivals.size;
  }
}

async function collect(receiver: Receiver, ledger: Ledger, timeoutMs: number): Promise<void> {
  const deadline = clock() + timeoutMs;
  while (ledger.missing > 0 && clock() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    ledger.add(await receiver.take());
  }
  // Anything sent twice after the last one arrived shows up here.
  await new Promise((resolve) => setTimeout(resolve, 200));
  ledger.add(await receiver.take());
}

export async function run(): Promise<RunResult> {
  const parameters = readParameters();
  const { endpoints, concurrencyPerEndpoint, events, rounds, plainSeconds, latencyRate, latencySeconds, poolSize } = parameters;
  const inFlight = endpoints * concurrencyPerEndpoint;
  const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const suffix = randomBytes(4).toString('hex');
  const schema = `bench_webhooks_${suffix}`;
  const graphileSchema = `bench_graphile_${suffix}`;
  const admin = await openDatabase({ url, poolSize: 1 });
  await sql`create schema ${sql.id(schema)}`.execute(admin.db);
  const database = await openDatabase({ url, schema, poolSize: 8 });
  const receiver = await startReceiver();
  const masterKey = randomBytes(32);
  const http = new GuardedClient({ allow: ['127.0.0.1/32'], ca: readFileSync(new URL('ca.pem', tlsDir), 'utf8') });
  const deliverers: Deliverer[] = [];
  const invalid: string[] = [];
  const systems = ['botlink', 'graphile'] as const;
  const label: Record<DelivererKind, string> = { botlink: 'Botlink', graphile: 'graphile-worker', plain: 'plain loop' };
  const rates: Record<(typeof systems)[number], number[]> = { botlink: [], graphile: [] };
  const cpus: Record<(typeof systems)[number], number[]> = { botlink: [], graphile: [] };
  const databaseCpus: Record<(typeof systems)[number], number[]> = { botlink: [], graphile: [] };
  const latency = { botlink: new LatencyRecorder(), graphile: new LatencyRecorder() };
  const plainRounds: { perSecond: number; cpuMicros: number }[] = [];

  try {
    await migrate(database.db, schema);
    const db = database.db;
    const worker = { wake() {}, whenRecorded: async () => false };
    const service = createWebhookService({ db, repository: webhooksRepository(db), secrets: createSecretBox(masterKey), http, worker });
    const workspaces: string[] = [];
    let secret = '';
    for (let i = 0; i < endpoints; i++) {
      const id = randomUUID();
      await db.insertInto('workspaces').values({ id, name: `Bench ${i}`, created_at: new Date() }).execute();
      secret = (await service.put(id, 'new_chat', { url: `${receiver.origin}/hooks/${i}` })).secret!;
      workspaces.push(id);
    }
    const config = (kind: DelivererKind): DelivererConfig => ({
      kind,
      url: withApplicationName(url, `${name}-${kind}`),
      schema,
      graphileSchema,
      masterKey: masterKey.toString('hex'),
      secret,
      receiverOrigin: receiver.origin,
      endpointConcurrency: concurrencyPerEndpoint,
      inFlight,
      poolSize,
    });
    // graphile-worker migrates its schema when its deliverer starts.
    for (const kind of [...systems, 'plain'] as const) deliverers.push(await startDeliverer(config(kind)));
    const [botlink, graphile, plain] = deliverers as [Deliverer, Deliverer, Deliverer];

    const produce: Record<(typeof systems)[number], Produce> = {
      botlink: (executor, n) => recordEvent(executor, workspaces[n % workspaces.length]!, chat(n)),
      graphile: async (executor, n) => {
        const id = newEventId();
        const payload = chat(n) as unknown as Record<string, unknown>;
        const job: GraphileDeliveryJob = { id, url: `${receiver.origin}/hooks/${n % workspaces.length}`, payload };
        await sql`select ${sql.id(graphileSchema, 'add_job')}('deliver', ${JSON.stringify(job)}::json)`.execute(executor);
        return id;
      },
    };
    const deliverer = { botlink, graphile };

    /** One throughput round of one system: fill, start, wait for every id, stop. */
    const drain = async (system: (typeof systems)[number], count: number, first: number, note: string) => {
      const ids = await fill(db, produce[system], count, first);
      await receiver.take();
      const ledger = new Ledger(new Set(ids));
      const databaseBefore = await backendCpu(db, `${name}-${system}`);
      const started = clock();
      await deliverer[system].start();
      await collect(receiver, ledger, 120_000);
      const { cpuMicros, systemMicros } = await deliverer[system].stop();
      const databaseMicros = backendCpuSince(databaseBefore, await backendCpu(db, `${name}-${system}`));
      judge(ledger, `${label[system]}, ${note}`);
      const last = Math.max(...ledger.arrivals.values());
      const delivered = Math.max(1, ledger.arrivals.size);
      const perSecond = ledger.arrivals.size / ((last - started) / 1000);
      const databaseCpuPerDelivery = databaseMicros / delivered;
      return { perSecond, cpuPerDelivery: cpuMicros / delivered, systemCpuPerDelivery: systemMicros / delivered, databaseCpuPerDelivery };
    };
    const judge = (ledger: Ledger, what: string) => {
      if (ledger.missing > 0) invalid.push(`${what}: ${ledger.missing} of ${ledger.expected.size} deliveries never arrived.`);
      if (ledger.duplicates.length > 0) invalid.push(`${what}: ${ledger.duplicates.length} deliveries arrived more than once (first: ${ledger.duplicates[0]}).`);
      if (ledger.strangers.length > 0) invalid.push(`${what}: ${ledger.strangers.length} requests carried a webhook-id that was not committed.`);
    };

    let first = 0;
    const warmUp = Math.min(2_000, events);
    progress(`warm-up: plain 1 s, ${warmUp} deliveries each`);
    await plain.plain(1);
    for (const system of systems) {
      await drain(system, warmUp, first, 'warm-up');
      first += warmUp;
    }
    for (let i = 0; i < rounds; i++) {
      plainRounds.push(await plain.plain(plainSeconds));
      const line: string[] = [`plain ${Math.round(plainRounds.at(-1)!.perSecond)}/s`];
      for (const system of systems) {
        const round = await drain(system, events, first, `round ${i + 1}`);
        first += events;
        rates[system].push(round.perSecond);
        cpus[system].push(round.cpuPerDelivery);
        databaseCpus[system].push(round.databaseCpuPerDelivery);
        line.push(
          `${label[system]} ${Math.round(round.perSecond)}/s ${Math.round(round.cpuPerDelivery)} µs ` +
            `(system ${Math.round(round.systemCpuPerDelivery)}) + database ${Math.round(round.databaseCpuPerDelivery)} µs`,
        );
      }
      progress(`round ${i + 1}/${rounds}: ${line.join(', ')}`);
    }
    const pending = await count(db, 'pending');
    const failed = await count(db, 'failed');
    if (pending > 0 || failed > 0) invalid.push(`Botlink: ${pending} deliveries still pending and ${failed} failed after the rounds.`);
    const jobsLeft = Number((await sql<{ n: string }>`select count(*) as n from ${sql.id(graphileSchema, '_private_jobs')}`.execute(db)).rows[0]!.n);
    if (jobsLeft > 0) invalid.push(`graphile-worker: ${jobsLeft} jobs left in its queue after the rounds.`);

    // Commit-to-receipt at a steady rate, each system's worker running and woken by NOTIFY.
    for (const system of systems) {
      progress(`latency, ${label[system]}: ${latencyRate} events/s for ${latencySeconds} s`);
      await deliverer[system].start();
      await new Promise((resolve) => setTimeout(resolve, 500));
      await receiver.take();
      const committed = new Map<string, number>();
      const total = Math.round(latencyRate * latencySeconds);
      const startedAt = performance.now();
      const inserts: Promise<void>[] = [];
      for (let n = 0; n < total; n++) {
        const due = startedAt + (n * 1000) / latencyRate;
        const wait = due - performance.now();
        if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
        inserts.push(produce[system](db, first + n).then((id) => void committed.set(id, clock())));
      }
      first += total;
      await Promise.all(inserts);
      const ledger = new Ledger(new Set(committed.keys()));
      await collect(receiver, ledger, 30_000);
      await deliverer[system].stop();
      judge(ledger, `${label[system]}, latency run`);
      // NOTIFY can wake the worker before the producer's own connection has read the commit's acknowledgement.
      for (const [id, at] of committed) {
        const arrived = ledger.arrivals.get(id);
        if (arrived !== undefined) latency[system].record(Math.max(0, arrived - at));
      }
    }
  } finally {
    await Promise.allSettled(deliverers.map((d) => d.close()));
    await http.close().catch(() => {});
    await receiver.stop();
    await database.close();
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
    await sql`drop schema if exists ${sql.id(graphileSchema)} cascade`.execute(admin.db);
    await admin.close();
  }

  const lat = { botlink: summarize(latency.botlink.values()), graphile: summarize(latency.graphile.values()) };
  const rate = { botlink: median(rates.botlink), graphile: median(rates.graphile) };
  const cpu = { botlink: median(cpus.botlink), graphile: median(cpus.graphile) };
  const metrics: Metric[] = [
    { key: 'botlink_deliveries_per_s', label: 'Botlink: deliveries per second (median round)', unit: '/s', value: rate.botlink, target: { op: '>=', metric: 'graphile_deliveries_per_s' } },
    { key: 'graphile_deliveries_per_s', label: 'graphile-worker: deliveries per second (median round)', unit: '/s', value: rate.graphile },
    { key: 'botlink_cpu_us_per_delivery', label: 'Botlink: CPU per delivery (delivering process)', unit: 'µs', value: cpu.botlink, target: { op: '<=', metric: 'graphile_cpu_us_per_delivery' } },
    { key: 'graphile_cpu_us_per_delivery', label: 'graphile-worker: CPU per delivery (delivering process)', unit: 'µs', value: cpu.graphile },
    {
      key: 'botlink_database_cpu_us_per_delivery',
      label: 'Botlink: database CPU per delivery (its connections’ backends)',
      unit: 'µs',
      value: median(databaseCpus.botlink),
    },
    {
      key: 'graphile_database_cpu_us_per_delivery',
      label: 'graphile-worker: database CPU per delivery (its connections’ backends)',
      unit: 'µs',
      value: median(databaseCpus.graphile),
    },
    { key: 'botlink_commit_to_receipt_p50_ms', label: `Botlink: commit-to-receipt p50 at ${latencyRate}/s`, unit: 'ms', value: lat.botlink.p50 },
    { key: 'botlink_commit_to_receipt_p99_ms', label: `Botlink: commit-to-receipt p99 at ${latencyRate}/s`, unit: 'ms', value: lat.botlink.p99, target: { op: '<=', value: TARGET_LATENCY_P99_MS } },
    { key: 'graphile_commit_to_receipt_p50_ms', label: `graphile-worker: commit-to-receipt p50 at ${latencyRate}/s`, unit: 'ms', value: lat.graphile.p50 },
    { key: 'graphile_commit_to_receipt_p99_ms', label: `graphile-worker: commit-to-receipt p99 at ${latencyRate}/s`, unit: 'ms', value: lat.graphile.p99 },
    { key: 'plain_requests_per_s', label: 'Plain POST loop, no queue (the receiver’s ceiling)', unit: '/s', value: median(plainRounds.map((r) => r.perSecond)) },
  ];
  const body = Buffer.byteLength(encodePayload(chat(0)));
  return {
    metrics,
    invalid,
    setup:
      `Real PostgreSQL; ${endpoints} endpoints × ${concurrencyPerEndpoint} in flight = ${inFlight} requests in flight for each system ` +
      `(graphile-worker: concurrency ${inFlight}, localQueue.size 256, completeJobBatchDelay 0, failJobBatchDelay 0); a pool of ${poolSize} ` +
      `connections in each delivering process; ${body}-byte new_chat body signed with Standard Webhooks and POSTed through the same guarded ` +
      `undici client to one loopback HTTPS receiver (its own process). Each system delivers from its own process, whose CPU is measured; the ` +
      `producer commits in a third. Throughput: ${rounds} rounds per system, alternating, each draining ${events} events committed beforehand ` +
      `(transactions of 100); the median round counts. Latency: ${Math.round(latencyRate * latencySeconds)} events committed one by one at ` +
      `${latencyRate}/s, from the commit's return to the receiver's read, the worker woken by NOTIFY.`,
    parameters: { ...parameters, inFlight, database: 'postgres', graphileWorker: '0.18.0', localQueueSize: 256, completeJobBatchDelay: 0 },
    details: {
      rounds: Object.fromEntries(
        systems.map((s) => [
          s,
          rates[s].map((r, i) => ({
            perSecond: round(r, 0),
            cpuMicrosPerDelivery: round(cpus[s][i]!, 1),
            databaseCpuMicrosPerDelivery: round(databaseCpus[s][i]!, 1),
          })),
        ]),
      ),
      plainRounds: plainRounds.map((r) => ({ perSecond: round(r.perSecond, 0), cpuMicrosPerRequest: round(r.cpuMicros, 1) })),
      commitToReceiptMs: Object.fromEntries(systems.map((s) => [s, Object.fromEntries(Object.entries(lat[s]).map(([k, v]) => [k, round(v)]))])),
    },
  };
}

async function count(db: Db, status: WebhookDeliveryStatus): Promise<number> {
  const row = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<string>().as('n')).where('status', '=', status).executeTakeFirstOrThrow();
  return Number(row.n);
}

function withApplicationName(url: string, applicationName: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', applicationName);
  return parsed.toString();
}

/**
 * CPU of the database backends serving one delivering process (by application_name), µs per backend pid, read from
 * /proc (the database runs on this machine). Empty where /proc cannot be read: the metric is then NaN, not a guess.
 */
async function backendCpu(db: Db, applicationName: string): Promise<Map<number, number>> {
  const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity where application_name = ${applicationName}`.execute(db);
  const ticks = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      // utime and stime, fields 14 and 15 of proc(5), in clock ticks (100 per second on Linux).
      ticks.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100);
    } catch {
      // The backend ended meanwhile.
    }
  }
  return ticks;
}

function backendCpuSince(before: Map<number, number>, after: Map<number, number>): number {
  if (after.size === 0) return Number.NaN;
  let total = 0;
  for (const [pid, micros] of after) total += micros - (before.get(pid) ?? 0);
  return total;
}
