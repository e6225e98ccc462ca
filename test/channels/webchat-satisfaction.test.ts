/**
 * The lines a web chat visitor sees when a person hands back or closes, and the one satisfaction question after a
 * close (docs/webchat.md, "Typing, satisfaction and email"): asked only after a colleague closed the conversation,
 * answered once, checked (422), shown on the conversation and counted in the Overview; a widget polling another engine
 * gets the question with the closing line.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { phrase } from '../../src/ai/phrases.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';

describeEachDatabase('the satisfaction question after a close, and the lines a visitor sees', (get) => {
  let a: TestService;
  /** A second engine on the same database: the widget's poll may wait on either. */
  let b: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';

  const widget = (method: string, path: string, body?: unknown, token?: string) =>
    a.api(method, path, { headers: { 'x-widget-key': widgetKey, origin: SHOP, ...(token ? { 'x-visitor-token': token } : {}) }, ...(body === undefined ? {} : { body }) });
  const api = (method: string, path: string, token: string, body?: unknown) => a.api(method, path, { token, ...(body === undefined ? {} : { body }) });

  async function takenChat(text: string) {
    const res = await widget('POST', '/v1/webchat/conversations', { visitor_message: text, page_url: `${SHOP}/returns` });
    expect(res.status).toBe(201);
    const conversationId = res.body.conversation_id as string;
    await a.runtime.settled();
    const session = await get().db.selectFrom('sessions').select('id').where('external_id', '=', conversationId).executeTakeFirstOrThrow();
    expect((await api('POST', `/v1/sessions/${session.id}/takeover`, ws.agent)).status).toBe(200);
    const chat = { conversationId, token: res.body.visitor_token as string, sessionId: session.id };
    const poll = async () => (await widget('GET', `/v1/webchat/conversations/${chat.conversationId}/messages`, undefined, chat.token)).body;
    const answer = (body: unknown) => widget('POST', `/v1/webchat/conversations/${chat.conversationId}/satisfaction`, body, chat.token);
    return { ...chat, poll, answer };
  }

  beforeAll(async () => {
    a = await startTestService(get(), {}, { sessions: { instanceId: 'engine-a' } });
    b = await startTestService(get(), {}, { sessions: { instanceId: 'engine-b' } });
    ws = await seedWorkspace(a);
    expect((await api('PUT', '/v1/webchat', ws.owner, { allowed_origins: [SHOP] })).status).toBe(200);
    widgetKey = (await api('GET', '/v1/keys/widget', ws.owner)).body.key as string;
  });
  afterAll(async () => {
    await b.stop();
    await a.stop();
  });

  it('tells the visitor when the person hands the conversation back, and asks nothing then', async () => {
    const chat = await takenChat('Ich möchte meine Bestellung zurückschicken');
    expect((await api('POST', `/v1/sessions/${chat.sessionId}/handback`, ws.agent)).status).toBe(200);
    const after = await chat.poll();
    expect(after.messages.at(-1)).toMatchObject({ from: 'bot', text: phrase('agent_handed_back', 'de').replace('{name}', 'Agent') });
    expect(after.survey).toBeNull();
    const early = await chat.answer({ score: 5 });
    expect(early.status).toBe(409);
  });

  it('after a close: the closing line, the question, one answer kept, on the conversation and in the Overview', async () => {
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const chat = await takenChat('Can I return shoes I wore once?');
    expect((await api('POST', `/v1/sessions/${chat.sessionId}/messages`, ws.agent, { text: 'Yes, within 30 days.' })).status).toBe(201);
    expect((await api('POST', `/v1/sessions/${chat.sessionId}/close`, ws.agent)).status).toBe(200);
    const closed = await chat.poll();
    expect(closed.messages.at(-1)).toMatchObject({ from: 'bot', text: phrase('agent_closed', 'en').replace('{name}', 'Agent') });
    expect(closed.survey).toBe('ask');

    expect((await chat.answer({ score: 6 })).status).toBe(422);
    expect((await chat.answer({ score: 0 })).status).toBe(422);
    expect((await chat.answer({ score: 4, comment: 'x'.repeat(501) })).status).toBe(422);
    // Without the visitor's token: as if the conversation did not exist.
    expect((await widget('POST', `/v1/webchat/conversations/${chat.conversationId}/satisfaction`, { score: 4 })).status).toBe(404);

    const kept = await chat.answer({ score: 4, comment: '  Quick and friendly  ' });
    expect(kept.status).toBe(201);
    expect(kept.body.satisfaction).toMatchObject({ score: 4, comment: 'Quick and friendly' });
    const again = await chat.answer({ score: 1 });
    expect(again.status).toBe(409);
    expect((await chat.poll()).survey).toBe('answered');

    const session = await api('GET', `/v1/sessions/${chat.sessionId}`, ws.agent);
    expect(session.body.satisfaction).toMatchObject({ score: 4, comment: 'Quick and friendly' });
    expect(new Date(session.body.satisfaction.at).getTime()).toBeGreaterThan(Date.now() - 60_000);

    const second = await takenChat('Do you sell gift cards?');
    expect((await api('POST', `/v1/sessions/${second.sessionId}/close`, ws.agent)).status).toBe(200);
    expect((await second.answer({ score: 1 })).status).toBe(201);
    const overview = await api('GET', `/v1/analytics/overview?from=${encodeURIComponent(from)}`, ws.owner);
    expect(overview.status).toBe(200);
    expect(overview.body.satisfaction).toEqual({ responses: 2, average: 2.5 });
    const whatsappOnly = await api('GET', `/v1/analytics/overview?from=${encodeURIComponent(from)}&channel=whatsapp`, ws.owner);
    expect(whatsappOnly.body.satisfaction).toEqual({ responses: 0, average: null });
  });

  it("the poll that brings the closing line brings the question with it (so the widget's next poll does not wait it out)", async () => {
    const chat = await takenChat('Is the Trail 4 waterproof?');
    const known = (await chat.poll()).messages.at(-1).id as string;
    // The widget's long poll, waiting on the other engine as the agent closes.
    const headers = { 'x-widget-key': widgetKey, origin: SHOP, 'x-visitor-token': chat.token };
    const poll = async () => (await b.api('GET', `/v1/webchat/conversations/${chat.conversationId}/messages?after=${known}&wait=10`, { headers })).body;
    const waiting = poll();
    expect((await api('POST', `/v1/sessions/${chat.sessionId}/close`, ws.agent)).status).toBe(200);
    // The question alone may come first (it is put before the line); the answer that brings the line has it too.
    let answered = await waiting;
    while (answered.messages.length === 0) answered = await poll();
    expect(answered.messages.map((m: { text: string }) => m.text)).toEqual([phrase('agent_closed', 'en').replace('{name}', 'Agent')]);
    expect(answered.survey).toBe('ask');
    // Whichever engine reads and when: the question was in place before the line was stored.
    const line = await get().db.selectFrom('session_messages').select('at').where('session_id', '=', chat.sessionId).where('from', '=', 'bot').orderBy('at', 'desc').limit(1).executeTakeFirstOrThrow();
    const asked = await get().db.selectFrom('session_satisfaction').select('asked_at').where('session_id', '=', chat.sessionId).executeTakeFirstOrThrow();
    expect(new Date(asked.asked_at).getTime()).toBeLessThanOrEqual(new Date(line.at).getTime());
  });
});
