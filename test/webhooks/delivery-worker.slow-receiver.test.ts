/**
 * One slow receiver starves nobody: each endpoint has its own delivery actor with its own slots,
 * so a receiver that takes its time holds at most `endpointConcurrency` attempts while other endpoints' deliveries
 * go out at once.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { webhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import { createLogger } from '../../src/log.ts';
import { GuardedClient } from '../../src/net/guarded-client.ts';
import { createSecretBox } from '../../src/secrets/secret-box.ts';
import { createDeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { timestamp } from '../../src/webhooks/events.ts';
import { recordEvent } from '../../src/webhooks/outbox.ts';
import { createWebhookService } from '../../src/webhooks/webhook-service.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { received, until, verify } from './receiver.ts';

// Long enough that the fast deliveries' bound (half of it) holds on a loaded CI machine.
const SLOW_MS = 3_000;
const CONCURRENCY = 4;

describeEachDatabase('a slow receiver and a fast one', (get) => {
  let receiver: TestHttpsServer;
  let http: GuardedClient;
  /** Requests being answered and the most at once, per slow path (each run has its own). */
  const open = new Map<string, number>();
  const mostOpen = new Map<string, number>();

  beforeAll(async () => {
    receiver = await startHttpsServer(async (req, res) => {
      const path = req.url ?? '';
      if (path.startsWith('/slow/')) {
        open.set(path, (open.get(path) ?? 0) + 1);
        mostOpen.set(path, Math.max(mostOpen.get(path) ?? 0, open.get(path)!));
        await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
        open.set(path, open.get(path)! - 1);
      }
      res.end('ok');
    });
    http = new GuardedClient({ allow: ['127.0.0.1/32'] });
  });
  afterAll(async () => {
    await http.close();
    await receiver.close();
  });

  it('delivers the fast endpoint at once while the slow one holds only its own slots', async () => {
    const { db } = get();
    const secrets = createSecretBox(randomBytes(32));
    const repository = webhooksRepository(db);
    const worker = createDeliveryWorker({ repository, secrets, http, logger: createLogger('silent'), endpointConcurrency: CONCURRENCY });
    const webhooks = createWebhookService({ db, repository, secrets, http, worker });
    const workspaceId = randomUUID();
    await db.insertInto('workspaces').values({ id: workspaceId, name: 'Two receivers', created_at: new Date() }).execute();
    const slow = `/slow/${workspaceId}`;
    await webhooks.put(workspaceId, 'new_chat', { url: `${receiver.origin}${slow}` });
    const fast = await webhooks.put(workspaceId, 'escalation', { url: `${receiver.origin}/fast` });
    worker.start();
    try {
      const at = timestamp(new Date());
      for (let n = 0; n < 12; n++) {
        await recordEvent(db, workspaceId, { event: 'new_chat', conversation_id: `s${n}`, visitor_message: 'Hi', page_url: 'https://shop.example/', timestamp: at, dashboard_url: 'https://botlink.example/d' });
      }
      await until(() => open.get(slow) === CONCURRENCY, 5_000, 'the slow receiver to fill its slots');
      const started = Date.now();
      const fastIds: string[] = [];
      for (let n = 0; n < 5; n++) {
        fastIds.push(await recordEvent(db, workspaceId, { event: 'escalation', conversation_id: `f${n}`, type: 'requested', visitor_message: 'A person, please', timestamp: at }));
      }
      await until(() => fastIds.every((id) => receiver.requests.some((r) => r.headers['webhook-id'] === id)), 5_000, 'the fast deliveries');
      // Well before the slow receiver frees a single slot.
      expect(Date.now() - started).toBeLessThan(SLOW_MS / 2);
      for (const id of fastIds) verify(fast.secret!, received(receiver.requests.find((r) => r.headers['webhook-id'] === id)!));
      expect(mostOpen.get(slow)).toBe(CONCURRENCY);
    } finally {
      await worker.stop(0);
    }
  });
});
