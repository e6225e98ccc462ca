/**
 * The delivery worker on a fake clock (`now` injected, no real waiting), against a real HTTPS receiver and both
 * databases: the retry schedule attempt by attempt, Retry-After, the 5-day rule, a lease that runs out, and the
 * fence that keeps a late worker from overwriting a delivery another one took over.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { webhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import { createLogger } from '../../src/log.ts';
import { GuardedClient } from '../../src/net/guarded-client.ts';
import { createSecretBox } from '../../src/secrets/secret-box.ts';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { timestamp } from '../../src/webhooks/events.ts';
import { AUTO_DISABLE_AFTER_MS, MAX_RETRY_AFTER_MS, RETRY_SCHEDULE_MS } from '../../src/webhooks/limits.ts';
import { LEASE_MS as DELIVERY_LEASE_MS } from '../../src/leases/durations.ts';
import { recordEvent } from '../../src/webhooks/outbox.ts';
import { createWebhookService, type WebhookService } from '../../src/webhooks/webhook-service.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { received, verifyAt } from './receiver.ts';
import { until } from '../channels/whatsapp/fixtures/harness.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describeEachDatabase('webhook delivery on a fake clock', (get) => {
  let receiver: TestHttpsServer;
  let http: GuardedClient;
  let clock = 0;
  let jitter = 0.5;
  let worker: DeliveryWorker;
  let webhooks: WebhookService;
  let workspaceId = '';
  const secrets = createSecretBox(randomBytes(32));
  const logger = createLogger('silent');
  /** Receiver behaviour per path: status and extra headers. */
  let answer: (path: string) => { status: number; headers?: Record<string, string> } = () => ({ status: 200 });

  const repository = () => webhooksRepository(get().db);
  const makeWorker = (instanceId = `worker-${randomUUID()}`) =>
    createDeliveryWorker({ repository: repository(), secrets, http, logger, now: () => clock, random: () => jitter, instanceId });

  async function endpoint(event: 'new_chat' | 'escalation' | 'new_lead', path: string): Promise<string> {
    const saved = await webhooks.put(workspaceId, event, { url: `${receiver.origin}${path}` });
    return saved.secret!;
  }
  const chat = (n: number) =>
    recordEvent(get().db, workspaceId, {
      event: 'new_chat',
      conversation_id: `c${n}`,
      visitor_message: 'Hi',
      page_url: 'https://shop.example/',
      timestamp: timestamp(new Date(clock)),
      dashboard_url: `https://botlink.example/dashboard/conversations/c${n}`,
    });
  const deliveryOf = async (webhookId: string) => (await webhooks.deliveries(workspaceId, { webhookId })).deliveries[0]!;

  beforeAll(async () => {
    receiver = await startHttpsServer((req, res) => {
      const { status, headers } = answer(req.url ?? '/');
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify({ status }));
    });
    http = new GuardedClient({ allow: ['127.0.0.1/32'] });
  });
  afterAll(async () => {
    await http.close();
    await receiver.close();
  });
  beforeEach(async () => {
    // Each test: a workspace of its own and a clock a little ahead of the database's now() (outbox rows are due).
    clock = Date.now() + 1_000;
    jitter = 0.5;
    answer = () => ({ status: 200 });
    workspaceId = randomUUID();
    await get().db.insertInto('workspaces').values({ id: workspaceId, name: 'Fake clock', created_at: new Date() }).execute();
    worker = makeWorker();
    webhooks = createWebhookService({ db: get().db, repository: repository(), secrets, http, worker, now: () => clock });
  });

  it('retries immediately, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then gives up', async () => {
    const secret = await endpoint('new_chat', '/schedule');
    answer = () => ({ status: 500 });
    const id = await chat(1);
    const started: number[] = [];
    for (let attempt = 1; attempt <= 8; attempt++) {
      await worker.runDue();
      const d = await deliveryOf(id);
      expect(d.attempt_count).toBe(attempt);
      started.push(Date.parse(d.attempts.at(-1)!.started_at));
      if (attempt === 8) break;
      expect(d.status).toBe('pending');
      const next = Date.parse(d.next_attempt_at!);
      expect(next - started.at(-1)!).toBe(RETRY_SCHEDULE_MS[attempt]);
      // A moment before it is due nothing is sent.
      clock = next - 1;
      await worker.runDue();
      expect((await deliveryOf(id)).attempt_count).toBe(attempt);
      clock = next;
    }
    const last = await deliveryOf(id);
    expect(last).toMatchObject({ status: 'failed', attempt_count: 8, next_attempt_at: null });
    const gaps = started.slice(1).map((t, i) => t - started[i]!);
    expect(gaps).toEqual(RETRY_SCHEDULE_MS.slice(1));
    expect(started.at(-1)! - started[0]!).toBe(27 * HOUR + 35 * 60_000 + 5_000);

    // Eight requests, one webhook-id, a fresh timestamp each, every one verified by the official library.
    const requests = receiver.requests.filter((r) => r.headers['webhook-id'] === id).map(received);
    expect(requests).toHaveLength(8);
    expect(requests.map((w) => w.timestamp)).toEqual(started.map((t) => Math.floor(t / 1000)));
    for (const w of requests) expect(verifyAt(secret, w)).toMatchObject({ event: 'new_chat', conversation_id: 'c1' });
  });

  it("claims at once what the database queued a moment later than the worker's clock reads (the same millisecond, or an engine's clock a little behind)", async () => {
    await endpoint('new_chat', '/behind');
    const { id: endpointId } = await get().db.selectFrom('webhook_endpoints').select('id').where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
    // The outbox row is due at the database's now(), with microseconds; the worker's clock reads a little earlier. The
    // worker is not started (no poll): only the wake, as a NOTIFY gives it, can make the claim.
    clock = Date.now() - 50;
    const id = await chat(50);
    worker.wake([endpointId]);
    await until(() => receiver.requests.some((r) => r.headers['webhook-id'] === id), 5_000);
    await until(async () => (await deliveryOf(id)).status === 'succeeded', 5_000);
  });

  it('jitters the delays within ±20 %', async () => {
    await endpoint('new_chat', '/jitter');
    answer = () => ({ status: 503 });
    jitter = 0;
    const low = await chat(2);
    await worker.runDue();
    let d = await deliveryOf(low);
    expect(Date.parse(d.next_attempt_at!) - Date.parse(d.attempts[0]!.started_at)).toBe(4_000);
    jitter = 0.9999999;
    clock += 4_000;
    await worker.runDue();
    d = await deliveryOf(low);
    expect(Date.parse(d.next_attempt_at!) - Date.parse(d.attempts[1]!.started_at)).toBe(360_000);
  });

  it("honours Retry-After within bounds: longer than the schedule postpones, past 10 h is capped", async () => {
    await endpoint('new_chat', '/retry-after');
    answer = () => ({ status: 429, headers: { 'retry-after': '600' } });
    const id = await chat(3);
    await worker.runDue();
    let d = await deliveryOf(id);
    expect(Date.parse(d.next_attempt_at!) - Date.parse(d.attempts[0]!.started_at)).toBe(600_000);
    clock += 600_000;
    answer = () => ({ status: 503, headers: { 'retry-after': String(7 * 24 * 3600) } });
    await worker.runDue();
    d = await deliveryOf(id);
    expect(Date.parse(d.next_attempt_at!) - Date.parse(d.attempts[1]!.started_at)).toBe(MAX_RETRY_AFTER_MS);
  });

  it('disables an endpoint that failed for 5 days without a success, and the owner sees why', async () => {
    const secret = await endpoint('new_chat', '/down');
    answer = () => ({ status: 502 });
    const firstFailure = clock;
    let n = 10;
    await chat(n++);
    await worker.runDue();
    // New events keep coming every 12 hours; every attempt fails.
    while (clock < firstFailure + AUTO_DISABLE_AFTER_MS - 12 * HOUR) {
      clock += 12 * HOUR;
      await chat(n++);
      await worker.runDue();
      const [view] = await webhooks.list(workspaceId);
      expect(view).toMatchObject({ enabled: true, failing_since: new Date(firstFailure).toISOString() });
    }
    clock = firstFailure + AUTO_DISABLE_AFTER_MS;
    const last = await chat(n++);
    await worker.runDue();
    const [view] = await webhooks.list(workspaceId);
    expect(view).toMatchObject({ enabled: false, disabled_at: new Date(clock).toISOString() });
    expect(view!.disabled_reason).toContain('5 days without a success');
    expect(view!.disabled_reason).toContain('HTTP 502');
    // Nothing of this endpoint waits any more, and new events are not queued for it.
    const pending = await webhooks.deliveries(workspaceId, { status: 'pending' });
    expect(pending.deliveries).toEqual([]);
    expect((await deliveryOf(last)).status).toBe('failed');
    const after = await chat(n);
    expect((await webhooks.deliveries(workspaceId, { webhookId: after })).deliveries).toEqual([]);
    for (const r of receiver.requests.filter((q) => q.url === '/down')) verifyAt(secret, received(r));
  });

  it('starts the 5 days over after a success', async () => {
    await endpoint('new_chat', '/flaky');
    answer = () => ({ status: 500 });
    const start = clock;
    await chat(30);
    await worker.runDue();
    clock = start + 4 * DAY;
    answer = () => ({ status: 200 });
    await chat(31);
    await worker.runDue();
    let [view] = await webhooks.list(workspaceId);
    expect(view).toMatchObject({ enabled: true, failing_since: null, last_success_at: new Date(clock).toISOString() });
    answer = () => ({ status: 500 });
    clock = start + 6 * DAY;
    await chat(32);
    await worker.runDue();
    [view] = await webhooks.list(workspaceId);
    expect(view).toMatchObject({ enabled: true, failing_since: new Date(clock).toISOString() });
  });

  it('takes over a delivery whose worker died once its lease runs out, with the same webhook-id', async () => {
    const secret = await endpoint('new_chat', '/takeover');
    const id = await chat(40);
    const endpointId = (await repository().listEndpoints(workspaceId))[0]!.id;
    // A worker claims it and dies before sending.
    const dead = await repository().claim({ endpointId, owner: 'dead-worker', now: new Date(clock), leaseUntil: new Date(clock + DELIVERY_LEASE_MS), limit: 10 });
    expect(dead).toHaveLength(1);
    await worker.runDue();
    expect(receiver.requests.filter((r) => r.headers['webhook-id'] === id)).toHaveLength(0);
    clock += DELIVERY_LEASE_MS + 1;
    await worker.runDue();
    const requests = receiver.requests.filter((r) => r.headers['webhook-id'] === id).map(received);
    expect(requests).toHaveLength(1);
    verifyAt(secret, requests[0]!);
    expect((await deliveryOf(id)).status).toBe('succeeded');

    // The dead worker wakes up and reports its attempt: fenced out, nothing is overwritten.
    const late = await repository().recordOutcomes({
      owner: 'dead-worker',
      now: new Date(clock),
      outcomes: [
        { deliveryId: dead[0]!.id, endpointId, kind: 'event', attempt: 1, url: 'https://x', startedAt: new Date(clock), succeeded: false, status: 'failed', nextAttemptAt: null, httpStatus: 500, latencyMs: 1, error: 'late', responseExcerpt: null, goneReason: null },
      ],
    });
    expect(late.has(dead[0]!.id)).toBe(false);
    const d = await deliveryOf(id);
    expect(d).toMatchObject({ status: 'succeeded', attempt_count: 1 });
    expect(d.attempts).toHaveLength(1);
  });

  it('a stopping worker hands its claimed deliveries back at once', async () => {
    await endpoint('new_chat', '/handback');
    const endpointId = (await repository().listEndpoints(workspaceId))[0]!.id;
    await chat(50);
    const stopping = makeWorker('stopping-worker');
    await repository().claim({ endpointId, owner: 'stopping-worker', now: new Date(clock), leaseUntil: new Date(clock + DELIVERY_LEASE_MS), limit: 10 });
    await stopping.stop(0);
    await worker.runDue();
    expect((await webhooks.deliveries(workspaceId, { status: 'succeeded' })).deliveries).toHaveLength(1);
  });
});
