/**
 * Typing both ways in a web chat, on two engines sharing one database (docs/webchat.md, "Typing, satisfaction and
 * email"): the holder's typing wakes the widget's long poll on the other engine with `typing: "agent"`, and it ends
 * with their message; the visitor's typing reaches the agent's live stream on the other engine; a person joining is
 * told to the visitor in their language.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { phrase } from '../../src/ai/phrases.ts';
import { LIVE_WATCHES_REFRESH_MS } from '../../src/events/live-bus.ts';
import type { SessionStreamEvent } from '../../src/sessions/runtime-types.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';
/** A waiting long poll answers this soon after the agent's typing, on the other engine (the live bus's read interval). */
const WOKEN_WITHIN_MS = 1_500;

describeEachDatabase('typing both ways in a web chat, on two engines', (get) => {
  let a: TestService;
  let b: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';

  const widget = (service: TestService, method: string, path: string, body?: unknown, token?: string) =>
    service.api(method, path, { headers: { 'x-widget-key': widgetKey, origin: SHOP, ...(token ? { 'x-visitor-token': token } : {}) }, ...(body === undefined ? {} : { body }) });
  const api = (service: TestService, method: string, path: string, token: string, body?: unknown) => service.api(method, path, { token, ...(body === undefined ? {} : { body }) });

  async function takenChat(text: string) {
    const res = await widget(a, 'POST', '/v1/webchat/conversations', { visitor_message: text, page_url: `${SHOP}/shipping` });
    expect(res.status).toBe(201);
    const conversationId = res.body.conversation_id as string;
    await a.runtime.settled();
    const session = await get().db.selectFrom('sessions').select('id').where('external_id', '=', conversationId).executeTakeFirstOrThrow();
    expect((await api(a, 'POST', `/v1/sessions/${session.id}/takeover`, ws.agent)).status).toBe(200);
    return { conversationId, token: res.body.visitor_token as string, sessionId: session.id };
  }

  const poll = (service: TestService, chat: { conversationId: string; token: string }, after: string | null, wait: number) =>
    widget(service, 'GET', `/v1/webchat/conversations/${chat.conversationId}/messages?wait=${wait}${after ? `&after=${after}` : ''}`, undefined, chat.token);

  beforeAll(async () => {
    a = await startTestService(get(), {}, { sessions: { instanceId: 'engine-a' } });
    b = await startTestService(get(), {}, { sessions: { instanceId: 'engine-b' } });
    ws = await seedWorkspace(a);
    expect((await api(a, 'PUT', '/v1/webchat', ws.owner, { allowed_origins: [SHOP] })).status).toBe(200);
    widgetKey = (await api(a, 'GET', '/v1/keys/widget', ws.owner)).body.key as string;
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
  });

  it('tells the visitor in their language that a person joined', async () => {
    const chat = await takenChat('Kunt u mij helpen met mijn bestelling?');
    const all = await poll(b, chat, null, 0);
    expect(all.status).toBe(200);
    expect(all.body.handled_by).toBe('agent');
    const line = phrase('agent_joined', 'nl').replace('{name}', 'Agent');
    expect(all.body.messages.map((m: { from: string; text: string }) => [m.from, m.text])).toContainEqual(['bot', line]);
    expect(all.body.typing).toBeNull();
  });

  it("the holder's typing wakes the widget's poll on the other engine, and ends with their message", async () => {
    const chat = await takenChat('Where is my parcel?');
    const first = await poll(b, chat, null, 0);
    const after = first.body.messages.at(-1).id as string;
    // The poll's watch must have reached engine a before a sign written there can wake it.
    const waiting = poll(b, chat, after, 20);
    await new Promise((r) => setTimeout(r, LIVE_WATCHES_REFRESH_MS * 2 + 200));
    const typedAt = Date.now();
    expect((await api(a, 'POST', `/v1/sessions/${chat.sessionId}/typing`, ws.agent)).status).toBe(204);
    const woken = await waiting;
    expect(woken.status).toBe(200);
    expect(woken.body.typing).toBe('agent');
    expect(woken.body.messages).toEqual([]);
    expect(Date.now() - typedAt).toBeLessThan(WOKEN_WITHIN_MS);

    // While it lasts, a new poll waits (it does not answer the same again at once); the message answers it with typing over.
    const next = poll(b, chat, after, 20);
    await new Promise((r) => setTimeout(r, 300));
    expect((await api(a, 'POST', `/v1/sessions/${chat.sessionId}/messages`, ws.agent, { text: 'It left our warehouse today.' })).status).toBe(201);
    const answered = await next;
    expect(answered.body.messages.map((m: { text: string }) => m.text)).toEqual(['It left our warehouse today.']);
    expect(answered.body.typing).toBeNull();
  });

  it("the visitor's typing reaches the agent's live stream on the other engine, at most one sign per throttle", async () => {
    const chat = await takenChat('I have a question about returns');
    const events: SessionStreamEvent[] = [];
    const stop = a.runtime.subscribe(chat.sessionId, (e) => events.push(e));
    try {
      await new Promise((r) => setTimeout(r, LIVE_WATCHES_REFRESH_MS * 2 + 200));
      expect((await widget(b, 'POST', `/v1/webchat/conversations/${chat.conversationId}/typing`, {}, chat.token)).status).toBe(204);
      expect((await widget(b, 'POST', `/v1/webchat/conversations/${chat.conversationId}/typing`, {}, chat.token)).status).toBe(204);
      await expect.poll(() => events.filter((e) => e.type === 'typing').length, { timeout: WOKEN_WITHIN_MS }).toBe(1);
      const sign = events.find((e) => e.type === 'typing') as Extract<SessionStreamEvent, { type: 'typing' }>;
      expect(sign.from).toBe('visitor');
      expect(new Date(sign.until).getTime()).toBeGreaterThan(Date.now());
      await new Promise((r) => setTimeout(r, 300));
      expect(events.filter((e) => e.type === 'typing')).toHaveLength(1);
      // The visitor sends what they typed and types again at once: that sign is not held back by the throttle.
      expect((await widget(b, 'POST', `/v1/webchat/conversations/${chat.conversationId}/messages`, { message: 'It is about order 1234' }, chat.token)).status).toBe(200);
      expect((await widget(b, 'POST', `/v1/webchat/conversations/${chat.conversationId}/typing`, {}, chat.token)).status).toBe(204);
      await expect.poll(() => events.filter((e) => e.type === 'typing').length, { timeout: WOKEN_WITHIN_MS }).toBe(2);
    } finally {
      stop();
    }
  });

  it('refuses typing from whoever may not: no visitor token (404), a user who does not hold the conversation (409)', async () => {
    const chat = await takenChat('Can I change my address?');
    expect((await widget(a, 'POST', `/v1/webchat/conversations/${chat.conversationId}/typing`, {})).status).toBe(404);
    const notHolder = await api(a, 'POST', `/v1/sessions/${chat.sessionId}/typing`, ws.admin);
    expect(notHolder.status).toBe(409);
    expect(notHolder.body.error.code).toBe('not_holder');
  });
});
