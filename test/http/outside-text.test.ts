/**
 * Outside text at the HTTP edge (docs/reliability.md): U+0000 and lone surrogates in any JSON
 * body, query string or path parameter become U+FFFD where they are parsed, so what we acknowledged is stored, and one
 * bad message never stops the later turns of its conversation from being saved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';
const FFFD = '\uFFFD';

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describeEachDatabase('outside text at the HTTP edge', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';

  beforeAll(async () => {
    service = await startTestService(get(), {}, { webchat: { rateLimit: { burst: 1_000, windowMs: 1_000 } } });
    ws = await seedWorkspace(service, 'Textco');
    widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
    expect((await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } })).status).toBe(200);
  });
  afterAll(async () => {
    await service.stop();
  });

  /** The visitor token of the conversation started last, which its later requests carry. */
  let visitorToken = '';
  const widget = async (path: string, raw: string) => {
    const res = await service.api('POST', path, { raw, headers: { 'content-type': 'application/json', 'x-widget-key': widgetKey, origin: SHOP, 'x-visitor-token': visitorToken } });
    if (typeof res.body?.visitor_token === 'string') visitorToken = res.body.visitor_token;
    return res;
  };

  const webchatTurns = async (conversationId: string) => {
    const session = await get().db.selectFrom('sessions').select(['id', 'turn_count']).where('external_id', '=', conversationId).executeTakeFirst();
    if (!session) return [];
    return get().db.selectFrom('session_turns').select(['customer_message', 'reply']).where('session_id', '=', session.id).orderBy('ordinal').execute();
  };

  describe('website chat', () => {
    it('a U+0000 in the first message is stored as U+FFFD in new_chat, and every later turn of the conversation is saved', async () => {
      const started = await widget('/v1/webchat/conversations', JSON.stringify({ visitor_message: 'where\u0000 is my order', page_url: `${SHOP}/a` }));
      expect(started.status).toBe(201);
      const id = started.body.conversation_id as string;

      const events = await get().db.selectFrom('webhook_events').select(['event', 'payload']).where('workspace_id', '=', ws.workspaceId).execute();
      const newChat = events.find((e) => (e.payload as { conversation_id?: string }).conversation_id === id);
      expect((newChat?.payload as { visitor_message: string }).visitor_message).toBe(`where${FFFD} is my order`);

      // The second and third turns (one with a lone surrogate, sent as the \ud800 escape) are saved too.
      expect((await widget(`/v1/webchat/conversations/${id}/messages`, '{"message":"and a lone \\ud800 half"}')).status).toBe(200);
      expect((await widget(`/v1/webchat/conversations/${id}/messages`, '{"message":"thanks"}')).status).toBe(200);
      const turns = await until(() => webchatTurns(id), (t) => t.length === 3);
      expect(turns.map((t) => t.customer_message)).toEqual([`where${FFFD} is my order`, `and a lone ${FFFD} half`, 'thanks']);
    });

    it('a U+0000 in a lead name and an escalation message is recorded, not a 500', async () => {
      const started = await widget('/v1/webchat/conversations', JSON.stringify({ visitor_message: 'hello', page_url: `${SHOP}/b` }));
      const id = started.body.conversation_id as string;
      const lead = await widget(`/v1/webchat/conversations/${id}/lead`, JSON.stringify({ name: 'Eve\u0000', email: 'eve@example.com' }));
      expect(lead.status).toBe(200);
      expect((await widget(`/v1/webchat/conversations/${id}/escalate`, JSON.stringify({ message: 'a person\u0000 please' }))).status).toBe(200);
      const events = await get().db.selectFrom('webhook_events').select(['event', 'payload']).where('workspace_id', '=', ws.workspaceId).execute();
      const mine = events.filter((e) => (e.payload as { conversation_id?: string }).conversation_id === id);
      expect(mine.find((e) => e.event === 'new_lead')?.payload).toMatchObject({ name: `Eve${FFFD}` });
      expect(mine.find((e) => e.event === 'escalation')?.payload).toMatchObject({ visitor_message: `a person${FFFD} please` });
    });
  });

  describe('dashboard and operator bodies', () => {
    it('a workspace name with U+0000 is created with U+FFFD', async () => {
      const res = await service.api('POST', '/v1/admin/workspaces', { token: TEST_ADMIN_TOKEN, body: { name: 'Bad\u0000Name', owner_email: 'o@bad.example' } });
      expect(res.status).toBe(201);
      expect(res.body.workspace.name).toBe(`Bad${FFFD}Name`);
    });

    it('phone settings with U+0000 in a number or the greeting get a 400 or are saved, never a 500', async () => {
      const number = await service.api('PUT', '/v1/phone', { token: ws.owner, body: { numbers: ['+3120\u00001234567'] } });
      expect(number.status).toBe(400);
      expect(number.body.error.code).toBe('validation_failed');
      const greeting = await service.api('PUT', '/v1/phone', { token: ws.owner, body: { numbers: [], greeting: 'Hello\u0000 there' } });
      expect(greeting.status).toBe(200);
      expect(greeting.body.greeting).toBe(`Hello${FFFD} there`);
    });

    it('a U+0000 in a query string or a path parameter is a 4xx, never a 500', async () => {
      const query = await service.api('GET', '/v1/sessions?channel=%00&status=%00', { token: ws.owner });
      expect(query.status).toBeLessThan(500);
      const param = await service.api('GET', '/v1/sessions/%00', { token: ws.owner });
      expect(param.status).toBe(404);
    });
  });
});
