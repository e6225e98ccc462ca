/**
 * At-least-once across crashes and processes. Engines are real child processes
 * (test/webhooks/worker-process.ts on `process.execPath`) delivering to a real HTTPS receiver that verifies every
 * request with the official `standardwebhooks` library.
 *
 * - A worker killed with SIGKILL in the middle of deliveries, then restarted: every event arrives at least once, and
 *   a repeated delivery carries the same webhook-id. On PostgreSQL when TEST_DATABASE_URL is set, and always on an
 *   embedded PGlite data directory.
 * - Two engine processes on one PostgreSQL share 1,000 events: none lost, duplicates counted (none in the normal
 *   case). On PGlite, which one process owns, two workers in one process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase, type Db } from '../../db/database.ts';
import { webhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import { createLogger } from '../../src/log.ts';
import { GuardedClient } from '../../src/net/guarded-client.ts';
import { createSecretBox, type SecretBox } from '../../src/secrets/secret-box.ts';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { timestamp } from '../../src/webhooks/events.ts';
import { recordEvent } from '../../src/webhooks/outbox.ts';
import { createWebhookService } from '../../src/webhooks/webhook-service.ts';
import { openTestDatabase } from '../helpers/db.ts';
import { startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { until } from './receiver.ts';

const WORKER_SCRIPT = fileURLToPath(new URL('./worker-process.ts', import.meta.url));
const postgresUrl = process.env.TEST_DATABASE_URL;
const masterKey = randomBytes(32);
const secrets = createSecretBox(masterKey);

interface Receipts {
  /** webhook-id → times received. */
  counts: Map<string, number>;
  total: number;
  unverified: number;
}

let receiver: TestHttpsServer;
let receipts: Receipts;
let secret = '';
let answerDelayMs = 0;

beforeAll(async () => {
  receiver = await startHttpsServer(async (req, res, body) => {
    const id = String(req.headers['webhook-id']);
    try {
      new Webhook(secret).verify(body.toString('utf8'), {
        'webhook-id': id,
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      });
    } catch {
      receipts.unverified++;
    }
    receipts.total++;
    receipts.counts.set(id, (receipts.counts.get(id) ?? 0) + 1);
    if (answerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, answerDelayMs));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
});
afterAll(async () => {
  await receiver.close();
});

function resetReceipts(): void {
  receipts = { counts: new Map(), total: 0, unverified: 0 };
}

/** A workspace with a new_chat webhook pointing at the receiver; sets the secret the receiver verifies with. */
async function seed(db: Db): Promise<string> {
  const workspaceId = randomUUID();
  await db.insertInto('workspaces').values({ id: workspaceId, name: 'Crash test', created_at: new Date() }).execute();
  const http = new GuardedClient({ allow: ['127.0.0.1/32'] });
  const service = createWebhookService({ db, repository: webhooksRepository(db), secrets, http, worker: { wake() {}, whenRecorded: async () => false } });
  const saved = await service.put(workspaceId, 'new_chat', { url: `${receiver.origin}/hooks` });
  await http.close();
  secret = saved.secret!;
  return workspaceId;
}

/** `count` new_chat events, committed in transactions of 100 as a busy website would. */
async function emit(db: Db, workspaceId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 100) {
    await db.transaction().execute(async (trx) => {
      for (let n = start; n < Math.min(count, start + 100); n++) {
        ids.push(
          await recordEvent(trx, workspaceId, {
            event: 'new_chat',
            conversation_id: `conv-${n}`,
            visitor_message: 'Is this in stock?',
            page_url: 'https://shop.example/p/1',
            timestamp: timestamp(new Date()),
            dashboard_url: `https://botlink.example/dashboard/conversations/conv-${n}`,
          }),
        );
      }
    });
  }
  return ids;
}

interface WorkerChild {
  child: ChildProcess;
  exited: Promise<unknown>;
  stats(): Promise<number>;
  /** SIGTERM: a graceful stop (in-flight attempts finish, outcomes are written). */
  stop(): Promise<void>;
}

async function startWorker(env: Record<string, string>): Promise<WorkerChild> {
  const child = spawn(process.execPath, [WORKER_SCRIPT], {
    env: { ...process.env, MASTER_KEY: masterKey.toString('hex'), ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = once(child, 'exit');
  await new Promise<void>((resolve, reject) => {
    const early = (code: number | null, signal: string | null) => reject(new Error(`the worker process exited early (${code ?? signal})`));
    child.once('exit', early);
    child.on('message', (m: { type?: string }) => {
      if (m.type !== 'ready') return;
      child.off('exit', early);
      resolve();
    });
  });
  return {
    child,
    exited,
    stats: () =>
      new Promise((resolve) => {
        const onMessage = (m: { type?: string; attempts?: number }) => {
          if (m.type !== 'stats') return;
          child.off('message', onMessage);
          resolve(m.attempts ?? 0);
        };
        child.on('message', onMessage);
        child.send({ type: 'stats' });
      }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function succeeded(db: Db): Promise<number> {
  const row = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<string>().as('n')).where('status', '=', 'succeeded').executeTakeFirstOrThrow();
  return Number(row.n);
}

function report(label: string, ids: readonly string[]): { lost: string[]; duplicates: number } {
  const lost = ids.filter((id) => !receipts.counts.has(id));
  const duplicates = receipts.total - receipts.counts.size;
  console.info(`[webhooks] ${label}: ${ids.length} events, ${receipts.total} requests received, ${lost.length} lost, ${duplicates} duplicates (same webhook-id), ${receipts.unverified} failed verification`);
  return { lost, duplicates };
}

describe('a worker killed with SIGKILL in the middle of deliveries, then restarted', () => {
  const N = 400;
  // A short lease so the restarted worker takes over the dead one's claims within the test; the time-out stays below it.
  const crashEnv = { WORKER_LEASE_MS: '1500', WORKER_TIMEOUT_MS: '1000', WORKER_POLL_MS: '200', WORKER_CONCURRENCY: '16' };

  async function crashAndRestart(env: Record<string, string>, ids: string[]): Promise<WorkerChild> {
    const first = await startWorker({ ...crashEnv, ...env });
    await until(() => receipts.total >= N / 3, 20_000, 'a third of the deliveries');
    first.child.kill('SIGKILL');
    await first.exited;
    expect(receipts.counts.size).toBeLessThan(ids.length);
    const second = await startWorker({ ...crashEnv, ...env });
    await until(() => ids.every((id) => receipts.counts.has(id)), 30_000, 'every event after the restart');
    return second;
  }

  it.runIf(postgresUrl)('loses no event on PostgreSQL; repeats carry the same webhook-id', async () => {
    resetReceipts();
    answerDelayMs = 20;
    const database = await openTestDatabase('postgres');
    try {
      const workspaceId = await seed(database.db);
      const ids = await emit(database.db, workspaceId, N);
      const second = await crashAndRestart({ WORKER_DATABASE_URL: database.url! }, ids);
      await until(async () => (await succeeded(database.db)) === N, 10_000, 'every outcome written');
      await second.stop();
      const { lost, duplicates } = report('crash on PostgreSQL', ids);
      expect(lost).toEqual([]);
      expect(receipts.unverified).toBe(0);
      expect(duplicates).toBeGreaterThanOrEqual(0);
      // Only ids of recorded events arrive: a repeat is the same webhook-id, never a new one.
      expect([...receipts.counts.keys()].every((id) => ids.includes(id))).toBe(true);
    } finally {
      await database.close();
    }
  });

  it('loses no event on an embedded PGlite data directory; repeats carry the same webhook-id', async () => {
    resetReceipts();
    answerDelayMs = 20;
    const dir = mkdtempSync(join(tmpdir(), 'botlink-webhooks-crash-'));
    try {
      const seeding = await openDatabase({ dataDir: dir });
      await migrate(seeding.db);
      const workspaceId = await seed(seeding.db);
      const ids = await emit(seeding.db, workspaceId, N);
      await seeding.close();

      const second = await crashAndRestart({ WORKER_DATA_DIR: dir }, ids);
      // One process owns a PGlite directory: the outcomes are read after the worker stopped gracefully.
      await second.stop();
      const reading = await openDatabase({ dataDir: dir });
      try {
        expect(await succeeded(reading.db)).toBe(N);
      } finally {
        await reading.close();
      }
      const { lost } = report('crash on PGlite', ids);
      expect(lost).toEqual([]);
      expect(receipts.unverified).toBe(0);
      expect([...receipts.counts.keys()].every((id) => ids.includes(id))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000); // two process starts on the embedded database: on a busy machine they alone take most of 20 s
});

describe('several engines on one database share the deliveries', () => {
  const N = 1_000;

  it.runIf(postgresUrl)('two processes on PostgreSQL: 1,000 events, none lost, no duplicates, woken by NOTIFY', async () => {
    resetReceipts();
    answerDelayMs = 0;
    const database = await openTestDatabase('postgres');
    const env = {
      WORKER_DATABASE_URL: database.url!,
      // Polls far apart: the events are committed after both started, so NOTIFY is what wakes them.
      WORKER_POLL_MS: '60000',
    };
    const children: WorkerChild[] = [];
    try {
      const workspaceId = await seed(database.db);
      children.push(await startWorker(env), await startWorker(env));
      const ids = await emit(database.db, workspaceId, N);
      await until(() => ids.every((id) => receipts.counts.has(id)), 30_000, 'every event');
      await until(async () => (await succeeded(database.db)) === N, 10_000, 'every outcome written');
      // A process counts an attempt once its outcome's write has returned to it, a moment after the commit is visible.
      let shares: number[] = [];
      await until(async () => (shares = await Promise.all(children.map((c) => c.stats()))).reduce((a, b) => a + b, 0) >= N, 5_000, 'every attempt counted');
      console.info(`[webhooks] two processes: attempts per process ${shares.join(' + ')}`);
      const { lost, duplicates } = report('two processes on PostgreSQL', ids);
      expect(lost).toEqual([]);
      expect(duplicates).toBe(0);
      expect(receipts.unverified).toBe(0);
      expect(shares.reduce((a, b) => a + b, 0)).toBe(N);
      expect(shares.every((s) => s > 0)).toBe(true);
    } finally {
      await Promise.all(children.map((c) => c.stop()));
      await database.close();
    }
  }, 60_000); // its own waits allow 30 s for the events: more than the default test timeout

  it('two workers in one process on PGlite: 1,000 events, none lost, no duplicates', async () => {
    resetReceipts();
    answerDelayMs = 0;
    const database = await openTestDatabase('pglite');
    const http = new GuardedClient({ allow: ['127.0.0.1/32'] });
    const logger = createLogger('silent');
    const workers = [0, 1].map(() => createDeliveryWorker({ repository: webhooksRepository(database.db), secrets: secrets as SecretBox, http, logger }));
    try {
      const workspaceId = await seed(database.db);
      for (const w of workers) w.start();
      const ids = await emit(database.db, workspaceId, N);
      await until(() => ids.every((id) => receipts.counts.has(id)), 30_000, 'every event');
      await until(async () => (await succeeded(database.db)) === N, 10_000, 'every outcome written');
      const { lost, duplicates } = report('two workers on PGlite', ids);
      expect(lost).toEqual([]);
      expect(duplicates).toBe(0);
      expect(receipts.unverified).toBe(0);
    } finally {
      await Promise.all(workers.map((w) => w.stop(1_000)));
      await http.close();
      await database.close();
    }
  }, 60_000); // its own waits allow 30 s for the events: more than the default test timeout
});
