/**
 * A web chat visitor reaches a person, on two engines sharing one database (docs/webchat.md, "A person answers"): the
 * visitor asks for the team, two users take the conversation over at once on two engines and exactly one gets it, the
 * holder's reply reaches the visitor's long poll (on the same engine at once, on the other woken by the live bus),
 * the visitor's messages meanwhile are stored and answered by nobody, a foreign or missing visitor token is a 404, and
 * handed back the bot answers again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phrase } from '../../src/ai/phrases.ts';
import { LIVE_WATCHES_REFRESH_MS } from '../../src/events/live-bus.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';
/** A waiting long poll answers this soon after a message is stored, on either engine (docs/webchat.md, "Long polls"). */
const WOKEN_WITHIN_MS = 1_000;

describeEachDatabase('a web chat visitor reaches a person, on two engines', (get) => {
  let a: TestService;
  let b: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';

  const widget = (service: TestService, method: string, path: string, body?: unknown, token?: string) =>
    service.api(method, path, { headers: { 'x-widget-key': widgetKey, origin: SHOP, ...(token ? { 'x-visitor-token': token } : {}) }, ...(body === undefined ? {} : { body }) });
  const api = (service: TestService, method: string, path: string, token: string, body?: unknown) => service.api(method, path, { token, ...(body === undefined ? {} : { body }) });

  async function startChat(text = 'Do you ship to Belgium?') {
    const res = await widget(a, 'POST', '/v1/webchat/conversations', { visitor_message: text, page_url: `${SHOP}/shipping` });
    expect(res.status).toBe(201);
    const conversationId = res.body.conversation_id as string;
    await a.runtime.settled();
    const session = await get().db.selectFrom('sessions').select('id').where('external_id', '=', conversationId).executeTakeFirstOrThrow();
    return { conversationId, token: res.body.visitor_token as string, sessionId: session.id, reply: res.body.reply as string | null };
  }

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

  it("a long poll from the service's own page (a browser sends no Origin on a same-origin GET) counts as the service's origin", async () => {
    const chat = await startChat('Do you have gift cards?');
    const path = `/v1/webchat/conversations/${chat.conversationId}/messages`;
    const sameOrigin = () => a.api('GET', path, { headers: { 'x-widget-key': widgetKey, 'x-visitor-token': chat.token, 'sec-fetch-site': 'same-origin' } });
    // Not allowed yet: the service's own origin is an origin like any other.
    expect((await sameOrigin()).status).toBe(403);
    expect((await a.api('GET', path, { headers: { 'x-widget-key': widgetKey, 'x-visitor-token': chat.token } })).status).toBe(403);
    expect((await api(a, 'PUT', '/v1/webchat', ws.owner, { allowed_origins: [SHOP, a.url] })).status).toBe(200);
    try {
      const allowed = await sameOrigin();
      expect(allowed.status).toBe(200);
      expect(allowed.body.messages.map((m: { from: string }) => m.from)).toEqual(['customer', 'bot']);
      // Without the browser's word that it is the same origin, still refused; and a POST always needs its Origin.
      expect((await a.api('GET', path, { headers: { 'x-widget-key': widgetKey, 'x-visitor-token': chat.token } })).status).toBe(403);
      const post = await a.api('POST', `/v1/webchat/conversations/${chat.conversationId}/messages`, { headers: { 'x-widget-key': widgetKey, 'x-visitor-token': chat.token, 'sec-fetch-site': 'same-origin' }, body: { message: 'Hello?' } });
      expect(post.status).toBe(403);
    } finally {
      expect((await api(a, 'PUT', '/v1/webchat', ws.owner, { allowed_origins: [SHOP] })).status).toBe(200);
    }
  });

  it('answers a visitor token once, and the messages need it: missing or another conversation\'s is 404', async () => {
    const one = await startChat();
    const two = await startChat('Is shipping free?');
    expect(one.token).toMatch(/^blv_[\w-]{32}$/);
    const stored = await get().db.selectFrom('webchat_conversations').select('visitor_token_hash').where('id', '=', one.conversationId).executeTakeFirstOrThrow();
    expect(stored.visitor_token_hash).not.toContain(one.token);
    const path = `/v1/webchat/conversations/${one.conversationId}/messages`;
    const own = await widget(b, 'GET', path, undefined, one.token);
    expect(own.status).toBe(200);
    expect(own.body).toEqual({
      handled_by: 'bot',
      typing: null,
      survey: null,
      messages: [
        { id: expect.any(String), from: 'customer', text: 'Do you ship to Belgium?', at: expect.any(String) },
        { id: expect.any(String), from: 'bot', text: one.reply, at: expect.any(String) },
      ],
    });
    expect((await widget(b, 'GET', path)).status).toBe(404);
    expect((await widget(b, 'GET', path, undefined, two.token)).status).toBe(404);
    expect((await widget(b, 'GET', `${path}?after=${own.body.messages[0].id}`, undefined, one.token)).body.messages).toHaveLength(1);
    expect((await widget(b, 'GET', `${path}?wait=26`, undefined, one.token)).status).toBe(400);
  });

  it('two users take over at once on two engines: exactly one 200, the other 409 taken', async () => {
    for (let round = 0; round < 3; round++) {
      const chat = await startChat(`Question ${round}`);
      const [first, second] = await Promise.all([
        api(a, 'POST', `/v1/sessions/${chat.sessionId}/takeover`, ws.agent),
        api(b, 'POST', `/v1/sessions/${chat.sessionId}/takeover`, ws.admin),
      ]);
      expect([first.status, second.status].sort()).toEqual([200, 409]);
      const winner = first.status === 200 ? ws.agentId : ws.adminId;
      const loser = first.status === 200 ? second : first;
      expect(loser.body.error).toMatchObject({ code: 'taken', holder: { user_id: winner } });
      const row = await get().db.selectFrom('sessions').select(['handled_by', 'agent_user_id']).where('id', '=', chat.sessionId).executeTakeFirstOrThrow();
      expect(row).toEqual({ handled_by: 'agent', agent_user_id: winner });
    }
  });

  it('GET /v1/inbox/events streams the inbox\'s changes of this engine: the wait, the take-over, a message', async () => {
    const controller = new AbortController();
    const res = await fetch(`${a.url}/v1/inbox/events`, { headers: { authorization: `Bearer ${ws.agent}` }, signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const events: Array<{ id: string; reason: string; handled_by: string; last_message: { from: string } | null }> = [];
    let buffer = '';
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += new TextDecoder().decode(value);
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^event: conversation\ndata: (.*)$/m.exec(block);
          if (data) events.push(JSON.parse(data[1]!));
        }
      }
    })().catch(() => undefined);
    const chat = await startChat('Can I speak to a person please?');
    expect((await api(a, 'POST', `/v1/sessions/${chat.sessionId}/takeover`, ws.admin)).status).toBe(200);
    expect((await api(a, 'POST', `/v1/sessions/${chat.sessionId}/messages`, ws.admin, { text: 'Hello, Admin here.' })).status).toBe(201);
    const deadline = Date.now() + 5_000;
    while (events.filter((e) => e.id === chat.sessionId).length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    await reading;
    const mine = events.filter((e) => e.id === chat.sessionId).map((e) => [e.reason, e.handled_by, e.last_message?.from ?? null]);
    expect(mine).toEqual([
      ['message', 'waiting', 'bot'],
      ['handled_by', 'waiting', null],
      ['handled_by', 'agent', null],
      // The customer is told that a person joined (docs/webchat.md, "Typing, satisfaction and email").
      ['message', 'agent', 'bot'],
      ['message', 'agent', 'agent'],
    ]);
  });

  describe('asked for, taken, answered, handed back', () => {
    let chat: Awaited<ReturnType<typeof startChat>>;
    let lastId = '';
    const path = () => `/v1/webchat/conversations/${chat.conversationId}/messages`;

    it('the visitor asks for the team: the conversation waits, and the inbox lists it', async () => {
      chat = await startChat();
      const escalated = await widget(a, 'POST', `/v1/webchat/conversations/${chat.conversationId}/escalate`, { message: 'I want to talk to someone' }, chat.token);
      expect(escalated.body.reply).toBe(phrase('handoff_waiting_closed', 'en'));
      await a.runtime.settled();
      const waiting = await api(b, 'GET', '/v1/inbox?view=waiting', ws.agent);
      expect((waiting.body.conversations as Array<{ id: string; handled_by: string }>).find((c) => c.id === chat.sessionId)).toMatchObject({ handled_by: 'waiting', channel: 'webchat' });
      const polled = await widget(b, 'GET', path(), undefined, chat.token);
      expect(polled.body.handled_by).toBe('waiting');
      lastId = polled.body.messages.at(-1).id as string;
    });

    it("the visitor's messages are kept for the team and answered by nobody ({reply: null})", async () => {
      expect((await api(a, 'POST', `/v1/sessions/${chat.sessionId}/takeover`, ws.agent)).status).toBe(200);
      const res = await widget(b, 'POST', path(), { message: 'Hello? My order 1001 is late.' }, chat.token);
      expect([res.status, res.body]).toEqual([200, { reply: null }]);
      const polled = await widget(a, 'GET', `${path()}?after=${lastId}`, undefined, chat.token);
      expect(polled.body).toEqual({
        handled_by: 'agent',
        typing: null,
        survey: null,
        messages: [
          { id: expect.any(String), from: 'bot', text: phrase('agent_joined', 'en').replace('{name}', 'Agent'), at: expect.any(String) },
          { id: expect.any(String), from: 'customer', text: 'Hello? My order 1001 is late.', at: expect.any(String) },
        ],
      });
      lastId = polled.body.messages.at(-1).id as string;
    });

    it("the long poll on the same engine answers as soon as the agent's reply is stored", async () => {
      const started = performance.now();
      const poll = widget(a, 'GET', `${path()}?after=${lastId}&wait=10`, undefined, chat.token);
      await new Promise((r) => setTimeout(r, 150));
      const sent = await api(a, 'POST', `/v1/sessions/${chat.sessionId}/messages`, ws.agent, { text: 'Hi, Agent here: it leaves today.' });
      expect([sent.status, sent.body.message.status]).toEqual([201, 'sent']);
      const answer = await poll;
      expect(answer.body.messages).toEqual([{ id: sent.body.message.id, from: 'agent', text: 'Hi, Agent here: it leaves today.', at: expect.any(String), agent_name: 'Agent' }]);
      // Woken in this process as the message was stored.
      expect(performance.now() - started).toBeLessThan(150 + WOKEN_WITHIN_MS);
      lastId = sent.body.message.id as string;
    });

    it("the long poll on the other engine is woken by the live bus when the agent's reply is stored", async () => {
      const poll = widget(b, 'GET', `${path()}?after=${lastId}&wait=10`, undefined, chat.token);
      // The poll's new watch has reached engine a (a reads the watches at their NOTIFY, and every second anyway).
      await new Promise((r) => setTimeout(r, LIVE_WATCHES_REFRESH_MS + 200));
      const started = performance.now();
      const sent = await api(a, 'POST', `/v1/sessions/${chat.sessionId}/messages`, ws.agent, { text: 'And here is your tracking code.' });
      const answer = await poll;
      expect(answer.body.messages.map((m: { text: string }) => m.text)).toEqual(['And here is your tracking code.']);
      expect(performance.now() - started).toBeLessThan(WOKEN_WITHIN_MS + 500);
      lastId = sent.body.message.id as string;
      // Nothing newer: a poll without wait answers at once, empty.
      expect((await widget(b, 'GET', `${path()}?after=${lastId}`, undefined, chat.token)).body.messages).toEqual([]);
    });

    it('an agent message is only for the holder, and at most 2,000 characters on web chat', async () => {
      expect((await api(b, 'POST', `/v1/sessions/${chat.sessionId}/messages`, ws.owner, { text: 'Hi' })).status).toBe(409);
      const long = await api(b, 'POST', `/v1/sessions/${chat.sessionId}/messages`, ws.agent, { text: 'x'.repeat(2_001) });
      expect([long.status, long.body.error.code]).toEqual([422, 'invalid_message']);
      expect((await api(b, 'POST', `/v1/sessions/${chat.sessionId}/handback`, ws.admin)).status).toBe(200);
      // Taken back by the agent for the next steps.
      expect((await api(b, 'POST', `/v1/sessions/${chat.sessionId}/takeover`, ws.agent)).status).toBe(200);
    });

    it('handed back on one engine, the bot answers the next message on the other', async () => {
      expect((await api(b, 'POST', `/v1/sessions/${chat.sessionId}/handback`, ws.agent)).body).toEqual({ handled_by: 'bot' });
      const res = await widget(a, 'POST', path(), { message: 'Do you sell gift cards?' }, chat.token);
      // No knowledge pages here: the bot's honest answer, not null.
      expect(res.body.reply).toBe(phrase('dont_know', 'en'));
      // The reply is answered before its turn is written (group commit); the written messages are read here.
      await a.runtime.settled();
      const session = await api(a, 'GET', `/v1/sessions/${chat.sessionId}`, ws.agent);
      expect(session.body).toMatchObject({ handled_by: 'bot', agent: null });
      // The bot's lines: a person joined (twice), handed back (twice).
      expect((session.body.messages as Array<{ from: string }>).map((m) => m.from)).toEqual([
        'customer', 'bot', 'customer', 'bot', 'bot', 'customer', 'agent', 'agent', 'bot', 'bot', 'bot', 'customer', 'bot',
      ]);
    });

    it('closed, it leaves the open inbox; the next visitor message opens it again and the bot answers', async () => {
      expect((await api(a, 'POST', `/v1/sessions/${chat.sessionId}/close`, ws.agent)).body).toEqual({ handled_by: 'bot', status: 'ended' });
      const open = async () => ((await api(b, 'GET', '/v1/inbox?view=open', ws.agent)).body.conversations as Array<{ id: string }>).map((c) => c.id);
      expect(await open()).not.toContain(chat.sessionId);
      const res = await widget(b, 'POST', path(), { message: 'One more question' }, chat.token);
      expect(res.body.reply).toBe(phrase('dont_know', 'en'));
      await b.runtime.settled();
      expect(await open()).toContain(chat.sessionId);
    });
  });
});
