/**
 * A turn's channel request under each health state (src/botlink/health-aware-send.ts): every state but down waits the
 * whole deadline; a down endpoint's request runs on to its own deadline and feeds the health after the turn went on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BotLinkClient, BotLinkExchange, SendChannelRequest } from '../../src/botlink/client.ts';
import { createEndpointHealthTracker, type EndpointHealthTracker } from '../../src/botlink/endpoint-health-tracker.ts';
import { sendWithHealth } from '../../src/botlink/health-aware-send.ts';
import { buildChannelRequest } from '../../src/botlink/channel-request.ts';
import { createLogger } from '../../src/log.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';

const URL = 'https://shop.example/botlink/channel';
const WORKSPACE = '00000000-0000-4000-8000-0000000000a1';

function answer(latencyMs: number): BotLinkExchange {
  return { outcome: { outcome: 'answer', answer: { reply: 'From the shop', handled: true, handoff: null, customer: {} }, problems: [] }, httpStatus: 200, latencyMs, firstByteMs: latencyMs, body: Buffer.from('{}') };
}
const timeout = (ms: number): BotLinkExchange => ({ outcome: { outcome: 'no_answer', reason: 'timeout', message: 'timeout', problems: [] }, httpStatus: null, latencyMs: ms, firstByteMs: null, body: Buffer.alloc(0) });

/** A client whose next answers are scripted: [delay before the outcome, outcome]. Records whether each was cancelled. */
function scripted(script: Array<[number, BotLinkExchange]>) {
  const seen: { cancelled: boolean; finished: boolean }[] = [];
  const client = {
    send(input: SendChannelRequest): Promise<BotLinkExchange> {
      const [delay, outcome] = script.shift()!;
      const record = { cancelled: false, finished: false };
      seen.push(record);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          record.finished = true;
          resolve(outcome);
        }, delay);
        input.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          record.cancelled = true;
          resolve({ ...timeout(0), outcome: { outcome: 'no_answer', reason: 'aborted', message: 'aborted', problems: [] } });
        });
      });
    },
  } as unknown as BotLinkClient;
  return { client, seen };
}

describe('sending a channel request the way the endpoint health says', () => {
  let database: TestDatabase;
  let health: EndpointHealthTracker;
  // Each request is sent 5 s after the previous one (so a timeout's request was sent after the answers before it).
  let clock = Date.now();
  const request = buildChannelRequest({ channel: 'phone', conversationId: 'CA1', message: 'Where is my order?', language: 'en', customerPhone: null, now: new Date() });
  const send = (client: BotLinkClient, signal = new AbortController().signal) => {
    clock += 5_000;
    return sendWithHealth({ botlink: client, health }, WORKSPACE, { endpointUrl: URL, key: 'k'.repeat(32), request, timeoutMs: 3500, signal });
  };

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    await database.db.insertInto('workspaces').values({ id: WORKSPACE, name: 'Health', created_at: new Date() }).execute();
    health = createEndpointHealthTracker({ db: database.db, logger: createLogger('silent'), now: () => clock, flushMs: 10 });
  });
  afterAll(async () => {
    await health.stop();
    await database.close();
  });

  it('healthy: waits for the answer, and a barge-in cancels the request', async () => {
    const { client, seen } = scripted([[50, answer(50)], [5_000, answer(5_000)]]);
    const first = await send(client);
    expect(first).toMatchObject({ exchange: { outcome: { outcome: 'answer' } }, wait: { state: 'healthy', decision: 'wait', waitMs: 3500 } });
    const controller = new AbortController();
    const pending = send(client, controller.signal);
    setTimeout(() => controller.abort(), 20);
    expect((await pending).exchange?.outcome).toMatchObject({ reason: 'aborted' });
    expect(seen[1]).toMatchObject({ cancelled: true });
  });

  it('degraded after fast answers: the turn still waits the whole deadline, and a 2.5 s answer is used', async () => {
    // Nine quick answers and a timeout: degraded, with a p99 of 50 ms.
    const { client: warm } = scripted([...Array.from({ length: 9 }, () => [1, answer(50)] as [number, BotLinkExchange]), [1, timeout(3500)]]);
    for (let i = 0; i < 10; i++) await send(warm);
    expect((await health.current(WORKSPACE, URL)).state).toBe('degraded');

    const { client, seen } = scripted([[2_500, answer(2_500)]]);
    const started = performance.now();
    const result = await send(client);
    expect(result).toMatchObject({ exchange: { outcome: { outcome: 'answer', answer: { reply: 'From the shop' } } }, wait: { state: 'degraded', decision: 'wait', waitMs: 3500 } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(2_400);
    expect(seen[0]).toMatchObject({ cancelled: false, finished: true });
    expect((await health.current(WORKSPACE, URL)).recent.at(-1)).toMatchObject({ kind: 'answer', latencyMs: 2_500 });
  });

  it('a request that gave up waiting for a free connection was never sent: however many, the health does not move', async () => {
    const before = await health.current(WORKSPACE, URL);
    const queued: BotLinkExchange = { ...timeout(3500), neverSent: true };
    const { client } = scripted(Array.from({ length: 5 }, () => [1, queued] as [number, BotLinkExchange]));
    for (let i = 0; i < 5; i++) expect((await send(client)).exchange?.outcome).toMatchObject({ reason: 'timeout' });
    const after = await health.current(WORKSPACE, URL);
    expect(after.state).toBe(before.state);
    expect(after.consecutiveFailures).toBe(before.consecutiveFailures);
    expect(after.recent).toEqual(before.recent);
  });

  it('a timeout counts before the turn goes on: the third in a row has the endpoint down when the call returns', async () => {
    const { client } = scripted([[1, timeout(3500)], [1, timeout(3500)], [1, timeout(3500)]]);
    const states: string[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await send(client);
      expect(result.exchange?.outcome).toMatchObject({ reason: 'timeout' });
      // No flush, no background read: what the next message sees, synchronously after this one's outcome.
      states.push((await health.current(WORKSPACE, URL)).state);
    }
    expect(states).toEqual(['degraded', 'degraded', 'down']);
    // The endpoint answers again (a probe, say): recovering, as before this test.
    const { client: back } = scripted([[1, answer(20)], [1, answer(20)], [1, answer(20)]]);
    health.record(WORKSPACE, URL, 'answer', 20);
    for (let i = 0; i < 3; i++) await send(back);
    expect((await health.current(WORKSPACE, URL)).state).toBe('healthy');
  });

  it('down: the turn does not wait at all, the request is still sent and finishes on its own', async () => {
    const { client: failing } = scripted([[1, timeout(3500)], [1, timeout(3500)], [1, timeout(3500)]]);
    for (let i = 0; i < 3; i++) await send(failing);
    expect((await health.current(WORKSPACE, URL)).state).toBe('down');
    const { client, seen } = scripted([[1_500, answer(1_500)]]);
    const started = performance.now();
    const result = await send(client);
    expect(result).toMatchObject({ exchange: null, wait: { state: 'down', decision: 'not_waited', waitMs: 0 } });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(seen).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1_800));
    expect(seen[0]).toMatchObject({ finished: true, cancelled: false });
    // That answer starts the recovery.
    expect((await health.current(WORKSPACE, URL)).state).toBe('probing');
  });

  it('the shared row holds what this process saw, for the other processes', async () => {
    await health.flush();
    const row = await database.db.selectFrom('endpoint_health').selectAll().where('workspace_id', '=', WORKSPACE).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ endpoint_url: URL, state: 'probing', consecutive_responses: 1 });
  });
});
