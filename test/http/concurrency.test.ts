/**
 * "At most one" rules under concurrency, two service processes on one database as behind a load balancer (the
 * last owner and one email per user are in accounts-guarantees.test.ts): a phone number belongs to
 * one workspace, and a conversation runs one turn at a time, each saved once with its own ordinal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';

describeEachDatabase('at most one, under concurrency', (get) => {
  let a: TestService;
  let b: TestService;

  beforeAll(async () => {
    const webchat = { rateLimit: { burst: 1_000, windowMs: 1_000 } };
    a = await startTestService(get(), {}, { webchat });
    b = await startTestService(get(), {}, { webchat });
  });
  afterAll(async () => {
    await b.stop();
    await a.stop();
  });

  describe('one workspace per phone number', () => {
    it('two workspaces claiming the same number at once: one 200, one 409, and the number has one owner; five times', async () => {
      const first = await seedWorkspace(a, 'NumA');
      const second = await seedWorkspace(a, 'NumB');
      for (let round = 0; round < 5; round++) {
        const number = `+3120555000${round}`;
        const [x, y] = await Promise.all([
          a.api('PUT', '/v1/phone', { token: first.owner, body: { numbers: [number] } }),
          b.api('PUT', '/v1/phone', { token: second.owner, body: { numbers: [number] } }),
        ]);
        expect([x.status, y.status].sort()).toEqual([200, 409]);
        const owners = await get().db.selectFrom('phone_numbers').select('workspace_id').where('number', '=', number).execute();
        expect(owners).toHaveLength(1);
      }
    });
  });

  describe('one turn at a time per conversation', () => {
    it('messages of one web chat sent at once through two processes: each is one turn, numbered 1..n without a gap or a repeat', async () => {
      const ws = await seedWorkspace(a, 'Turns');
      const widgetKey = (await a.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
      await a.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } });
      const headers = { 'x-widget-key': widgetKey, origin: SHOP };
      const started = await a.api('POST', '/v1/webchat/conversations', { headers, body: { visitor_message: 'hello', page_url: `${SHOP}/` } });
      expect(started.status).toBe(201);
      const id = started.body.conversation_id as string;

      const visitor = { ...headers, 'x-visitor-token': started.body.visitor_token as string };
      const sends = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).api('POST', `/v1/webchat/conversations/${id}/messages`, { headers: visitor, body: { message: `question ${i}` } }));
      const results = await Promise.all(sends);
      expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
      // A message a newer one replaced answers reply: null (docs/webchat.md); the newer request carries the answer.
      const answered = results.filter((r) => typeof r.body.reply === 'string').length;
      expect(answered).toBeGreaterThanOrEqual(1);

      const session = await get().db.selectFrom('sessions').select(['id', 'turn_count']).where('external_id', '=', id).executeTakeFirstOrThrow();
      const deadline = Date.now() + 5_000;
      let turns: { ordinal: number; status: string; customer_message: string | null }[] = [];
      while (Date.now() < deadline) {
        turns = await get().db.selectFrom('session_turns').select(['ordinal', 'status', 'customer_message']).where('session_id', '=', session.id).orderBy('ordinal').execute();
        if (turns.length >= 9) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Every message is recorded, once.
      expect(turns.map((t) => t.customer_message).sort()).toEqual(['hello', ...Array.from({ length: 8 }, (_, i) => `question ${i}`)].sort());
      // A turn a newer message replaced is kept as cancelled, with its own ordinal: ordinals count started turns.
      expect(turns.map((t) => t.ordinal)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(turns.filter((t) => t.status === 'completed').length).toBe(answered + 1);
      const final = await get().db.selectFrom('sessions').select('turn_count').where('id', '=', session.id).executeTakeFirstOrThrow();
      expect(final.turn_count).toBe(9);
    });
  });
});
