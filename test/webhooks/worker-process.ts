/**
 * An engine process that only delivers webhooks, for the crash and multi-process tests: started with
 * `process.execPath`, it opens the database named in its environment, runs WORKERS delivery workers (and LISTEN on
 * PostgreSQL) until it is killed, or stops gracefully on SIGTERM. It reports `{type:'ready'}` over IPC and answers
 * `{type:'stats'}` with the attempts it made.
 *
 * Environment: WORKER_DATABASE_URL (PostgreSQL: the test's own database) or WORKER_DATA_DIR (PGlite), MASTER_KEY (hex),
 * WORKERS, WORKER_LEASE_MS, WORKER_TIMEOUT_MS, WORKER_POLL_MS, WORKER_CONCURRENCY.
 */
import { openDatabase } from '../../db/database.ts';
import { webhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import { createLogger } from '../../src/log.ts';
import { createMetrics } from '../../src/metrics.ts';
import { GuardedClient } from '../../src/net/guarded-client.ts';
import { createSecretBox } from '../../src/secrets/secret-box.ts';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { listenForDeliveries, type OutboxListener } from '../../src/webhooks/outbox-listener.ts';

const env = process.env;
const number = (name: string, fallback: number) => (env[name] ? Number(env[name]) : fallback);

const url = env.WORKER_DATABASE_URL;
const opened = url
  ? await openDatabase({ url, poolSize: 6 })
  : await openDatabase({ dataDir: env.WORKER_DATA_DIR! });
const logger = createLogger(env.WORKER_LOG_LEVEL ?? 'silent');
const metrics = createMetrics({ defaultMetrics: false });
const secrets = createSecretBox(Buffer.from(env.MASTER_KEY!, 'hex'));
const http = new GuardedClient({ allow: ['127.0.0.1/32'] });
const repository = webhooksRepository(opened.db);
const workers = Array.from({ length: number('WORKERS', 1) }, () =>
  createDeliveryWorker({
    repository,
    secrets,
    http,
    logger,
    metrics,
    leaseMs: number('WORKER_LEASE_MS', 60_000),
    timeoutMs: number('WORKER_TIMEOUT_MS', 15_000),
    pollIntervalMs: number('WORKER_POLL_MS', 1_000),
    endpointConcurrency: number('WORKER_CONCURRENCY', 16),
  }),
);
for (const worker of workers) worker.start();
let listener: OutboxListener | undefined;
if (url) listener = await listenForDeliveries({ url, db: opened.db, logger, onWake: (ids) => workers.forEach((w) => w.wake(ids)) });

process.on('message', async (message: { type?: string }) => {
  if (message.type !== 'stats') return;
  const counted = await metrics.webhookAttempts.get();
  process.send?.({ type: 'stats', attempts: counted.values.reduce((n, v) => n + v.value, 0) });
});
process.on('SIGTERM', async () => {
  await listener?.close();
  await Promise.all(workers.map((w) => w.stop(5_000)));
  await http.close();
  await opened.close();
  process.exit(0);
});
// An orphan (its test runner gone) must not deliver on.
process.on('disconnect', () => process.exit(1));
process.send?.({ type: 'ready' });
