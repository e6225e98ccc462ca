/**
 * Conversations named by their customer or first words (docs/interfaces.md, "Going live"): the sessions list, the
 * inbox rows, the notifications and the Overview's unanswered questions name each conversation by the customer's name,
 * else email or number, else the first words of their first message; the unanswered questions keep `session_ids` and
 * add `sessions: [{id, label}]` in the same order.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';
const LONG = 'My order 1001 arrived broken, the box was crushed and the shoes are scratched';

describeEachDatabase('conversations named by their customer or first words', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';
  const api = (method: string, path: string, token: string, body?: unknown) => service.api(method, path, { token, ...(body === undefined ? {} : { body }) });
  const widget = (method: string, path: string, body?: unknown, token?: string) =>
    service.api(method, path, { headers: { 'x-widget-key': widgetKey, origin: SHOP, ...(token ? { 'x-visitor-token': token } : {}) }, ...(body === undefined ? {} : { body }) });

  async function chat(text: string) {
    const res = await widget('POST', '/v1/webchat/conversations', { visitor_message: text, page_url: SHOP });
    expect(res.status).toBe(201);
    await service.runtime.settled();
    const id = (await get().db.selectFrom('sessions').select('id').where('external_id', '=', res.body.conversation_id).executeTakeFirstOrThrow()).id;
    return { id, conversationId: res.body.conversation_id as string, token: res.body.visitor_token as string };
  }
  const labelIn = async (path: string, key: string, id: string) =>
    ((await api('GET', path, ws.owner)).body[key] as { id: string; label: string }[]).find((s) => s.id === id)?.label;

  beforeAll(async () => {
    service = await startTestService(get());
    ws = await seedWorkspace(service);
    expect((await api('PUT', '/v1/webchat', ws.owner, { allowed_origins: [SHOP] })).status).toBe(200);
    widgetKey = (await api('GET', '/v1/keys/widget', ws.owner)).body.key as string;
  });
  afterAll(() => service.stop());

  it('a chat with no details is named by its first words, cut at a word; then by the name the visitor leaves', async () => {
    const c = await chat(LONG);
    // The visitor writes more; the first message still names it.
    await widget('POST', `/v1/webchat/conversations/${c.conversationId}/messages`, { message: 'Hello?' }, c.token);
    await service.runtime.settled();
    expect(await labelIn('/v1/sessions', 'sessions', c.id)).toBe('My order 1001 arrived broken, the box…');
    await widget('POST', `/v1/webchat/conversations/${c.conversationId}/escalate`, { message: 'A person please' }, c.token);
    await service.runtime.settled();
    expect(await labelIn('/v1/inbox?view=waiting', 'conversations', c.id)).toBe('My order 1001 arrived broken, the box…');
    const lead = await widget('POST', `/v1/webchat/conversations/${c.conversationId}/lead`, { name: 'Sam Jansen', email: 'sam@example.org' }, c.token);
    expect(lead.status).toBeLessThan(300);
    expect(await labelIn('/v1/sessions', 'sessions', c.id)).toBe('Sam Jansen');
    expect(await labelIn('/v1/inbox?view=waiting', 'conversations', c.id)).toBe('Sam Jansen');
  });

  it("a customer's words are a label as they are, markup and all (the dashboard shows it as text)", async () => {
    const c = await chat('<b onclick="x()">hi</b> any tents?');
    expect(await labelIn('/v1/sessions', 'sessions', c.id)).toBe('<b onclick="x()">hi</b> any tents?');
  });

  it('notifications about a conversation name it', async () => {
    const c = await chat('Is the Ridge tent waterproof?');
    expect((await api('POST', `/v1/sessions/${c.id}/notes`, ws.owner, { text: '@Agent can you look?' })).status).toBe(201);
    const rows = (await api('GET', '/v1/notifications', ws.agent)).body.notifications as { session_id: string | null; label: string | null }[];
    expect(rows.find((n) => n.session_id === c.id)?.label).toBe('Is the Ridge tent waterproof?');
  });

  describe('the questions the bot could not answer', () => {
    /**
     * A conversation of the workspace whose last turn the fallback answered, an hour ago; `first`: what the customer
     * said in an answered turn before it.
     */
    async function unansweredIn(customer: { name?: string; phone?: string }, message: string, first?: string) {
      const id = randomUUID();
      const at = new Date(Date.now() - 3_600_000).toISOString();
      await get().db.insertInto('sessions').values({
        id, workspace_id: ws.workspaceId, channel: 'phone', external_id: `label-${id}`, machine_version: 1,
        customer_phone: customer.phone ?? null, customer_email: null, customer_name: customer.name ?? null, created_at: at, updated_at: at,
      }).execute();
      const turn = (ordinal: number, text: string, source: string, started: string) => ({
        id: randomUUID(), session_id: id, ordinal, status: 'completed' as const, language: 'en', customer_message: text, reply: 'A reply.', source,
        botlink: null, knowledge: null, tool_rounds: '[]', handoff: null, timings: '{}', errors: '[]', started_at: started, ended_at: started,
      });
      if (first) await get().db.insertInto('session_turns').values(turn(1, first, 'knowledge_base', new Date(Date.parse(at) - 60_000).toISOString())).execute();
      await get().db.insertInto('session_turns').values(turn(first ? 2 : 1, message, 'fallback', at)).execute();
      return id;
    }

    it('keep session_ids and name each of them in sessions, in the same order', async () => {
      const byName = await unansweredIn({ name: 'Noor' }, 'Do you repair bicycles?');
      const byPhone = await unansweredIn({ phone: '+31612345678' }, 'Do you repair bicycles?');
      const byWords = await unansweredIn({}, 'Do you repair bicycles?', 'Hello, I have a question about my very old bicycle from 1972');
      const from = new Date(Date.now() - 24 * 3_600_000).toISOString();
      const res = await api('GET', `/v1/analytics/unanswered?from=${from}`, ws.agent);
      expect(res.status).toBe(200);
      const question = (res.body.questions as { text: string; session_ids: string[]; sessions: { id: string; label: string }[] }[]).find((q) => q.session_ids.includes(byName))!;
      expect(question.session_ids).toHaveLength(3);
      expect(question.sessions.map((s) => s.id)).toEqual(question.session_ids);
      const labels = new Map(question.sessions.map((s) => [s.id, s.label]));
      expect([labels.get(byName), labels.get(byPhone), labels.get(byWords)]).toEqual(['Noor', '+31612345678', 'Hello, I have a question about my very…']);
    });
  });
});
