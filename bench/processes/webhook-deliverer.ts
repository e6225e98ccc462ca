/**
 * The delivering process of the webhook-delivery benchmark (bench/webhook-delivery.bench.ts), one per system, so that
 * each one's CPU is measured the same way: process CPU of this process between `start` and `stop`, divided by the
 * deliveries the receiver saw.
 *
 * DELIVERER_KIND chooses what runs here:
 * - `botlink`: our delivery worker (src/webhooks/delivery-worker.ts) on the outbox, woken by NOTIFY
 *   (src/webhooks/outbox-listener.ts) as in the service when the events come from another process.
 * - `graphile`: graphile-worker 0.18 with its documented throughput options (localQueue, batched completions), one
 *   task per event that does the same work: Standard Webhooks signature (src/webhooks/signing.ts), the POST through
 *   the same guarded undici client to the same receiver, and the job marked done by graphile-worker.
 * - `plain`: no queue at all, the same POST in a loop with as many requests in flight: the ceiling of the receiver.
 *
 * Messages (IPC): `start` → `started`; `stop` → `stopped` with the CPU used since `start`; `plain` → `plainDone`.
 */
import { createSecretKey, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Logger as GraphileLogger, run as runGraphile, runMigrations, type Runner, type Task } from 'graphile-worker';
import pg from 'pg';
import { openDatabase } from '../../db/database.ts';
import { webhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import { createLogger } from '../../src/log.ts';
import { GuardedClient } from '../../src/net/guarded-client.ts';
import { createSecretBox } from '../../src/secrets/secret-box.ts';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { DELIVERY_TIMEOUT_MS, RESPONSE_EXCERPT_BYTES, WEBHOOK_USER_AGENT } from '../../src/webhooks/limits.ts';
import { listenForDeliveries, type OutboxListener } from '../../src/webhooks/outbox-listener.ts';
import { encodePayload } from '../../src/webhooks/payload-body.ts';
import { secretKey, webhookHeaders } from '../../src/webhooks/signing.ts';

export type DelivererKind = 'botlink' | 'graphile' | 'plain';

/** What the benchmark hands a deliverer (JSON in DELIVERER_CONFIG). */
export interface DelivererConfig {
  kind: DelivererKind;
  url: string;
  /** Botlink's schema (migrated by the benchmark). */
  schema: string;
  /** graphile-worker's schema (migrated here, once). */
  graphileSchema: string;
  /** The secret box's master key, hex: Botlink opens the sealed endpoint secrets with it. */
  masterKey: string;
  /** The endpoint secret graphile-worker's task signs with (its job carries the URL, the key is configuration). */
  secret: string;
  receiverOrigin: string;
  endpointConcurrency: number;
  inFlight: number;
  /** Connections of the delivering process's pool (both systems alike). */
  poolSize: number;
}

export type DelivererCommand = { type: 'start' } | { type: 'stop' } | { type: 'plain'; seconds: number };
export type DelivererMessage =
  | { type: 'ready' }
  | { type: 'started' }
  | { type: 'stopped'; cpuMicros: number; systemMicros: number }
  | { type: 'plainDone'; perSecond: number; failures: number; cpuMicros: number }
  | { type: 'failed'; message: string };

/** The job graphile-worker runs per event: what it needs to send the same request as our worker. */
export interface GraphileDeliveryJob {
  /** The webhook-id (Standard Webhooks): the event's outbox id. */
  id: string;
  url: string;
  payload: Record<string, unknown>;
}

const tlsDir = new URL('../../test/fixtures/tls/', import.meta.url);

async function main(): Promise<void> {
  const config = JSON.parse(process.env.DELIVERER_CONFIG ?? '') as DelivererConfig;
  const logger = createLogger('warn');
  const http = new GuardedClient({ allow: ['127.0.0.1/32'], ca: readFileSync(new URL('ca.pem', tlsDir), 'utf8'), connectionsPerOrigin: config.inFlight });
  let cpuAtStart = process.cpuUsage();
  let stop: () => Promise<void> = async () => {};
  let start: () => Promise<void> = async () => {};

  if (config.kind === 'botlink') {
    const database = await openDatabase({ url: config.url, schema: config.schema, poolSize: config.poolSize });
    const repository = webhooksRepository(database.db);
    const secrets = createSecretBox(Buffer.from(config.masterKey, 'hex'));
    let worker: DeliveryWorker | undefined;
    let listener: OutboxListener | undefined;
    start = async () => {
      worker = createDeliveryWorker({ repository, secrets, http, logger, endpointConcurrency: config.endpointConcurrency });
      listener = await listenForDeliveries({ url: config.url, db: database.db, logger, onWake: worker.wake });
      worker.start();
    };
    stop = async () => {
      await listener?.close();
      await worker?.stop(5_000);
    };
  } else if (config.kind === 'graphile') {
    const pool = new pg.Pool({ connectionString: config.url, max: config.poolSize });
    // As ours does (db/database.ts): an idle client that loses its server must not end the process.
    pool.on('error', () => {});
    await runMigrations({ pgPool: pool, schema: config.graphileSchema, logger: quietGraphileLogger() });
    // A KeyObject made once, as our worker's signing keys are (src/webhooks/signing-keys.ts).
    const key = createSecretKey(secretKey(config.secret));
    const deliver: Task = async (job) => {
      const { id, url, payload } = job as GraphileDeliveryJob;
      const body = encodePayload(payload);
      const response = await http.request({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json', 'user-agent': WEBHOOK_USER_AGENT, ...webhookHeaders([key], id, Math.floor(Date.now() / 1000), body) },
        body,
        timeoutMs: DELIVERY_TIMEOUT_MS,
        maxBytes: RESPONSE_EXCERPT_BYTES,
      });
      // A failed task is retried by graphile-worker (its own backoff), as a failed attempt is by ours.
      if (response.status < 200 || response.status > 299) throw new Error(`HTTP ${response.status}`);
    };
    let runner: Runner | undefined;
    start = async () => {
      runner = await runGraphile({
        pgPool: pool,
        schema: config.graphileSchema,
        concurrency: config.inFlight,
        noHandleSignals: true,
        logger: quietGraphileLogger(),
        taskList: { deliver },
        // worker.graphile.org/docs/performance: jobs fetched in batches into a local queue, completions batched.
        preset: { worker: { localQueue: { size: 256 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
      });
    };
    stop = async () => {
      await runner?.stop();
    };
  }

  process.on('message', (command: DelivererCommand) => {
    void (async () => {
      try {
        if (command.type === 'start') {
          cpuAtStart = process.cpuUsage();
          await start();
          send({ type: 'started' });
        } else if (command.type === 'stop') {
          const cpu = process.cpuUsage(cpuAtStart);
          await stop();
          send({ type: 'stopped', cpuMicros: cpu.user + cpu.system, systemMicros: cpu.system });
        } else if (command.type === 'plain') {
          send({ type: 'plainDone', ...(await plainLoop(http, config, command.seconds)) });
        }
      } catch (err) {
        send({ type: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      }
    })();
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}

/** The same POST (bytes, headers, client) in a loop, `inFlight` at a time: what the receiver and the client allow. */
async function plainLoop(http: GuardedClient, config: DelivererConfig, seconds: number) {
  const body = encodePayload({ event: 'new_chat', conversation_id: `conv-${randomUUID()}`, visitor_message: 'Hello, do you ship to Belgium and how long does it take?', page_url: 'https://shop.example/products/espresso-machine-deluxe', timestamp: new Date().toISOString(), dashboard_url: 'https://botlink.example/conversations/x' });
  const key = createSecretKey(secretKey(config.secret));
  let done = 0;
  let failures = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: config.inFlight }, async () => {
      while (performance.now() < deadline) {
        const id = `msg_plain${randomUUID()}`;
        const response = await http.request({
          method: 'POST',
          url: `${config.receiverOrigin}/hooks/plain`,
          headers: { 'content-type': 'application/json', 'user-agent': WEBHOOK_USER_AGENT, ...webhookHeaders([key], id, Math.floor(Date.now() / 1000), body) },
          body,
          timeoutMs: DELIVERY_TIMEOUT_MS,
          maxBytes: RESPONSE_EXCERPT_BYTES,
        });
        if (response.status === 200) done++;
        else failures++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  return { perSecond: done / ((performance.now() - started) / 1000), failures, cpuMicros: (cpu.user + cpu.system) / Math.max(1, done) };
}

function quietGraphileLogger() {
  // graphile-worker logs every job at info through its console logger; only errors matter here.
  return new GraphileLogger((scope) => (level, message) => {
    if (level === 'error') process.stderr.write(`  [graphile-worker ${scope.label ?? ''}] ${message}\n`);
  });
}

function send(message: DelivererMessage): void {
  process.send?.(message);
}

main().catch((err: unknown) => {
  send({ type: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exitCode = 1;
});
