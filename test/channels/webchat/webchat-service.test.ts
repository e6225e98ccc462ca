/**
 * Website chat end to end (protocol §1.3, §6; docs/interfaces.md: Channels → Website chat): the real service on loopback, real
 * HTTP with Origin headers as a browser sends them, the knowledge base seeded through the sync API, and the events
 * read straight from the outbox (`webhook_events`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phrase } from '../../../src/ai/phrases.ts';
import { MAX_EMAIL_CHARS, MAX_MESSAGE_CHARS, MAX_NAME_CHARS, MAX_PAGE_URL_CHARS } from '../../../src/channels/webchat/limits.ts';
import { describeEachDatabase, type TestDatabase } from '../../helpers/db.ts';
import { postFrom, seedWorkspace, startTestService, type ApiResponse, type TestService } from '../../helpers/service.ts';
import { WEBCHAT_RATE_BURST } from '../../../src/channels/webchat/limits.ts';

const SHOP = 'https://shop.example';
const PUBLIC_URL = 'https://botlink.example';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Shop {
  workspaceId: string;
  owner: string;
  agent: string;
  syncKey: string;
  widgetKey: string;
}

/** A workspace with a sync key, a page or two in its knowledge base, its widget key and SHOP as allowed origin. */
async function seedShop(service: TestService, name: string, pages: Record<string, { title: string; body: string; language: string }>): Promise<Shop> {
  const ws = await seedWorkspace(service, name);
  const syncKey = (await service.api('POST', '/v1/keys/sync', { token: ws.owner })).body.key as string;
  for (const [id, page] of Object.entries(pages)) {
    const put = await service.api('PUT', `/v1/sync/pages/${id}`, { headers: { 'x-sync-key': syncKey }, body: page });
    if (put.status !== 201) throw new Error(`seeding the page failed: ${put.text}`);
  }
  const widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
  const origins = await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } });
  if (origins.status !== 200) throw new Error(`setting the origins failed: ${origins.text}`);
  return { workspaceId: ws.workspaceId, owner: ws.owner, agent: ws.agent, syncKey, widgetKey };
}

async function outbox(database: TestDatabase, workspaceId: string, conversationId?: string) {
  const rows = await database.db.selectFrom('webhook_events').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').execute();
  return rows
    .map((r) => ({ id: r.id, event: r.event, payload: r.payload as Record<string, unknown> }))
    .filter((r) => conversationId === undefined || r.payload.conversation_id === conversationId);
}

describeEachDatabase('website chat', (get) => {
  let service: TestService;
  let acme: Shop;
  let globex: Shop;

  beforeAll(async () => {
    // The main suite makes many requests with one key; the rate limit has its own suite below.
    service = await startTestService(get(), { PUBLIC_URL }, { webchat: { rateLimit: { burst: 1_000, windowMs: 1_000 } } });
    acme = await seedShop(service, 'Acme', {
      shipping: { title: 'Shipping', language: 'en', body: 'We ship every order within two working days. Shipping is free above 50 euro.' },
      verzending: { title: 'Verzending', language: 'nl', body: 'Wij verzenden elke bestelling binnen twee werkdagen. Verzending is gratis boven 50 euro.' },
    });
    globex = await seedShop(service, 'Globex', {});
  });
  afterAll(async () => {
    await service.stop();
  });

  /** Each conversation's visitor token, answered by its start. */
  const visitorTokens = new Map<string, string>();
  /**
   * A widget request as the browser sends it: the widget key, JSON, the page's Origin, and the visitor token of the
   * conversation the path names (`visitorToken`: another, or null for none).
   */
  const widget = async (
    path: string,
    body: unknown,
    options: { key?: string | null; origin?: string | null; visitorToken?: string | null; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> => {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? acme.widgetKey : options.key;
    const origin = options.origin === undefined ? SHOP : options.origin;
    const visitorToken = options.visitorToken === undefined ? visitorTokens.get(/^\/v1\/webchat\/conversations\/([^/]+)\//.exec(path)?.[1] ?? '') : options.visitorToken;
    if (key !== null) headers['x-widget-key'] = key;
    if (origin !== null) headers.origin = origin;
    if (visitorToken != null) headers['x-visitor-token'] = visitorToken;
    const res = await service.api('POST', path, { body, headers });
    if (typeof res.body?.conversation_id === 'string') visitorTokens.set(res.body.conversation_id, res.body.visitor_token);
    return res;
  };
  const start = (visitorMessage: string, options: Parameters<typeof widget>[2] = {}) =>
    widget('/v1/webchat/conversations', { visitor_message: visitorMessage, page_url: `${SHOP}/products/bike?ref=ad` }, options);

  describe('a conversation', () => {
    let conversationId = '';

    it('starts with new_chat in the outbox, with exactly the protocol §6 fields, and answers from the knowledge base', async () => {
      const res = await start('How fast do you ship my order?', { headers: { 'accept-language': 'en-GB,en;q=0.9' } });
      expect(res.status).toBe(201);
      expect(res.body.conversation_id).toMatch(UUID);
      expect(res.body.reply).toContain('two working days');
      expect(res.headers.get('access-control-allow-origin')).toBe(SHOP);
      expect(res.headers.get('vary')).toMatch(/origin/i);
      conversationId = res.body.conversation_id;

      const events = await outbox(get(), acme.workspaceId, conversationId);
      expect(events.map((e) => e.event)).toEqual(['new_chat']);
      const payload = events[0]!.payload;
      expect(Object.keys(payload).sort()).toEqual(['conversation_id', 'dashboard_url', 'event', 'page_url', 'timestamp', 'visitor_message']);
      expect(payload).toMatchObject({
        event: 'new_chat',
        conversation_id: conversationId,
        visitor_message: 'How fast do you ship my order?',
        // Without its query string (tokens, order numbers, campaign ids stay out of the store and the webhooks).
        page_url: `${SHOP}/products/bike`,
      });
      // The dashboard opens a conversation by its session id (docs/interfaces.md): the session made with the conversation.
      const session = await get().db.selectFrom('sessions').select('id').where('channel', '=', 'webchat').where('external_id', '=', conversationId).executeTakeFirstOrThrow();
      expect(payload.dashboard_url).toBe(`${PUBLIC_URL}/dashboard/conversations/${session.id}`);
      expect(payload.timestamp).toMatch(ISO_MS);
      expect(Math.abs(Date.parse(payload.timestamp as string) - Date.now())).toBeLessThan(60_000);
      expect(events[0]!.id).toMatch(/^msg_/);
    });

    it('the conversation is a webchat session whose external id is the conversation id', async () => {
      await service.runtime.settled();
      const session = await get().db.selectFrom('sessions').selectAll().where('workspace_id', '=', acme.workspaceId).where('external_id', '=', conversationId).executeTakeFirstOrThrow();
      expect(session).toMatchObject({ channel: 'webchat', turn_count: 1 });
    });

    it('a follow-up message is answered in the same session (knowledge base only)', async () => {
      const res = await widget(`/v1/webchat/conversations/${conversationId}/messages`, { message: 'Is shipping free?', language: 'en' });
      expect(res.status).toBe(200);
      expect(res.body.reply).toContain('free above 50 euro');
      await service.runtime.settled();
      const session = await get().db.selectFrom('sessions').select(['turn_count', 'id']).where('external_id', '=', conversationId).executeTakeFirstOrThrow();
      expect(session.turn_count).toBe(2);
      const turns = await get().db.selectFrom('session_turns').select(['source', 'botlink']).where('session_id', '=', session.id).execute();
      expect(turns.every((t) => t.botlink === null && t.source !== 'integrator')).toBe(true);
      // A message emits no event of its own.
      expect((await outbox(get(), acme.workspaceId, conversationId)).map((e) => e.event)).toEqual(['new_chat']);
    });

    it('a lead is saved on the conversation and emits new_lead with an empty phone when none was given', async () => {
      const res = await widget(`/v1/webchat/conversations/${conversationId}/lead`, { name: ' Jan Jansen ', email: 'jan@example.nl' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ recorded: true });
      const leads = (await outbox(get(), acme.workspaceId, conversationId)).filter((e) => e.event === 'new_lead');
      expect(leads).toHaveLength(1);
      expect(Object.keys(leads[0]!.payload).sort()).toEqual(['conversation_id', 'email', 'event', 'name', 'phone', 'timestamp']);
      expect(leads[0]!.payload).toMatchObject({ event: 'new_lead', conversation_id: conversationId, name: 'Jan Jansen', email: 'jan@example.nl', phone: '' });
      expect(leads[0]!.payload.timestamp).toMatch(ISO_MS);
      const row = await get().db.selectFrom('webchat_conversations').selectAll().where('id', '=', conversationId).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ visitor_name: 'Jan Jansen', visitor_email: 'jan@example.nl', visitor_phone: '' });
    });

    it('the same details again record nothing; changed details emit new_lead again', async () => {
      const same = await widget(`/v1/webchat/conversations/${conversationId}/lead`, { name: 'Jan Jansen', email: 'jan@example.nl', phone: '' });
      expect(same.body).toEqual({ recorded: false });
      const changed = await widget(`/v1/webchat/conversations/${conversationId}/lead`, { name: 'Jan Jansen', email: 'jan@example.nl', phone: '+31 6 1234 5678' });
      expect(changed.body).toEqual({ recorded: true });
      const leads = (await outbox(get(), acme.workspaceId, conversationId)).filter((e) => e.event === 'new_lead');
      expect(leads.map((e) => e.payload.phone)).toEqual(['', '+31 6 1234 5678']);
    });

    it('a lead needs a valid email and a name within the protocol §8 lengths (400 naming the field)', async () => {
      const path = `/v1/webchat/conversations/${conversationId}/lead`;
      const badEmail = await widget(path, { name: 'Jan', email: 'not-an-email' });
      expect(badEmail.status).toBe(400);
      expect(badEmail.body.error.code).toBe('validation_failed');
      expect(badEmail.body.error.details[0].field).toBe('email');
      expect(badEmail.headers.get('access-control-allow-origin')).toBe(SHOP);
      const longEmail = await widget(path, { name: 'Jan', email: `${'a'.repeat(MAX_EMAIL_CHARS)}@x.nl` });
      expect(longEmail.body.error.details[0].field).toBe('email');
      const longName = await widget(path, { name: 'J'.repeat(MAX_NAME_CHARS + 1), email: 'jan@example.nl' });
      expect(longName.body.error.details[0].field).toBe('name');
      const noEmail = await widget(path, { name: 'Jan' });
      expect(noEmail.body.error.details[0].field).toBe('email');
      const badPhone = await widget(path, { name: 'Jan', email: 'jan@example.nl', phone: 'call me maybe' });
      expect(badPhone.body.error.details[0].field).toBe('phone');
      expect((await outbox(get(), acme.workspaceId, conversationId)).filter((e) => e.event === 'new_lead')).toHaveLength(2);
    });

    it('the escalate route emits escalation of type requested once and answers the team sentence', async () => {
      const path = `/v1/webchat/conversations/${conversationId}/escalate`;
      const res = await widget(path, { message: 'Please call me about my order.' });
      expect(res.status).toBe(200);
      // The conversation waits for a colleague; the team is switched off, so they reply when they are back.
      expect(res.body).toEqual({ reply: phrase('handoff_waiting_closed', 'en') });
      const again = await widget(path, {});
      expect(again.body).toEqual({ reply: phrase('handoff_waiting_closed', 'en') });

      const escalations = (await outbox(get(), acme.workspaceId, conversationId)).filter((e) => e.event === 'escalation');
      expect(escalations).toHaveLength(1);
      expect(Object.keys(escalations[0]!.payload).sort()).toEqual(['conversation_id', 'event', 'timestamp', 'type', 'visitor_message']);
      expect(escalations[0]!.payload).toMatchObject({ type: 'requested', visitor_message: 'Please call me about my order.', conversation_id: conversationId });
      expect(escalations[0]!.payload.timestamp).toMatch(ISO_MS);
    });

    it('after the button, words asking for a person emit nothing more (the team was told)', async () => {
      const res = await widget(`/v1/webchat/conversations/${conversationId}/messages`, { message: 'I want a human!' });
      // The conversation waits for a colleague: the message is kept for them, and nobody else answers it.
      expect(res.body.reply).toBeNull();
      expect((await outbox(get(), acme.workspaceId, conversationId)).filter((e) => e.event === 'escalation')).toHaveLength(1);
    });

    it('without a message, the escalation carries the visitor\'s latest message', async () => {
      const started = await start('Is shipping free?');
      const id = started.body.conversation_id as string;
      await service.runtime.settled();
      await widget(`/v1/webchat/conversations/${id}/escalate`, {});
      const [escalation] = (await outbox(get(), acme.workspaceId, id)).filter((e) => e.event === 'escalation');
      expect(escalation!.payload).toMatchObject({ type: 'requested', visitor_message: 'Is shipping free?' });
    });
  });

  describe('escalation detected in the visitor\'s own words', () => {
    it('English: "speak to a person" emits escalation of type detected, at most once per conversation', async () => {
      const started = await start('Do you ship to Belgium?');
      const id = started.body.conversation_id as string;
      const path = `/v1/webchat/conversations/${id}/messages`;
      const first = await widget(path, { message: 'Can I speak to a person please?' });
      expect(first.status).toBe(200);
      expect(first.body.reply).toBe(phrase('handoff_waiting_closed', 'en'));
      // Waiting for a colleague now: the next message is kept for them and answered by nobody else.
      const second = await widget(path, { message: 'HUMAN. Now.' });
      expect(second.body.reply).toBeNull();

      const escalations = (await outbox(get(), acme.workspaceId, id)).filter((e) => e.event === 'escalation');
      expect(escalations).toHaveLength(1);
      expect(escalations[0]!.payload).toMatchObject({ event: 'escalation', conversation_id: id, type: 'detected', visitor_message: 'Can I speak to a person please?' });
      expect(escalations[0]!.payload.timestamp).toMatch(ISO_MS);

      // The button still reaches the team after a detected escalation: it is the visitor's explicit request.
      await widget(`/v1/webchat/conversations/${id}/escalate`, {});
      expect((await outbox(get(), acme.workspaceId, id)).filter((e) => e.event === 'escalation').map((e) => e.payload.type)).toEqual(['detected', 'requested']);
    });

    it('Dutch, in the first message: new_chat and then a detected escalation, the team sentence in Dutch', async () => {
      const res = await start('Ik wil graag een medewerker spreken over mijn bestelling', { headers: { 'accept-language': 'nl-NL,nl;q=0.9' } });
      expect(res.status).toBe(201);
      expect(res.body.reply).toBe(phrase('handoff_waiting_closed', 'nl'));
      const id = res.body.conversation_id as string;
      const events = await outbox(get(), acme.workspaceId, id);
      expect(events.map((e) => e.event)).toEqual(['new_chat', 'escalation']);
      expect(events[1]!.payload).toMatchObject({ type: 'detected', visitor_message: 'Ik wil graag een medewerker spreken over mijn bestelling' });
      // The session exists: the handoff was its turn.
      await service.runtime.settled();
      expect(await get().db.selectFrom('sessions').select('id').where('external_id', '=', id).executeTakeFirst()).toBeDefined();

      const more = await widget(`/v1/webchat/conversations/${id}/messages`, { message: 'Kan ik een mens spreken?' });
      expect(more.body.reply).toBeNull();
      expect((await outbox(get(), acme.workspaceId, id)).filter((e) => e.event === 'escalation')).toHaveLength(1);
    });

    it('a Dutch question about the shop is answered from the Dutch knowledge base, not escalated', async () => {
      const res = await start('Hoe snel verzenden jullie mijn bestelling?', { headers: { 'accept-language': 'nl' } });
      expect(res.body.reply).toContain('twee werkdagen');
      expect((await outbox(get(), acme.workspaceId, res.body.conversation_id)).map((e) => e.event)).toEqual(['new_chat']);
    });
  });

  describe('conversations belong to the widget key\'s workspace', () => {
    let acmeConversation = '';
    beforeAll(async () => {
      acmeConversation = (await start('Is shipping free?')).body.conversation_id;
    });

    it('another workspace\'s widget key gets 404 for every conversation route, and nothing is recorded', async () => {
      const before = await outbox(get(), acme.workspaceId, acmeConversation);
      const asGlobex = { key: globex.widgetKey };
      expect((await widget(`/v1/webchat/conversations/${acmeConversation}/messages`, { message: 'Hi' }, asGlobex)).status).toBe(404);
      expect((await widget(`/v1/webchat/conversations/${acmeConversation}/lead`, { name: 'Eve', email: 'eve@example.com' }, asGlobex)).status).toBe(404);
      const escalate = await widget(`/v1/webchat/conversations/${acmeConversation}/escalate`, {}, asGlobex);
      expect(escalate.status).toBe(404);
      expect(escalate.body.error.code).toBe('not_found');
      expect(await outbox(get(), acme.workspaceId, acmeConversation)).toEqual(before);
      expect(await outbox(get(), globex.workspaceId)).toEqual([]);
    });

    it('an id that is not a conversation id is 404 as well', async () => {
      expect((await widget('/v1/webchat/conversations/not-a-uuid/messages', { message: 'Hi' })).status).toBe(404);
      expect((await widget('/v1/webchat/conversations/00000000-0000-4000-8000-000000000000/lead', { name: 'A', email: 'a@b.nl' })).status).toBe(404);
    });
  });

  describe("a conversation's writes need its visitor token (as its reads do)", () => {
    it("/messages, /lead and /escalate without it, or with another conversation's, are 404 and change nothing", async () => {
      const mine = (await start('Is shipping free?')).body as { conversation_id: string; visitor_token: string };
      const other = (await start('Do you ship to Belgium?')).body as { conversation_id: string; visitor_token: string };
      await service.runtime.settled();
      const state = async () => {
        const session = await get().db.selectFrom('sessions').select(['id', 'turn_count', 'handled_by', 'customer_name', 'customer_email']).where('external_id', '=', mine.conversation_id).executeTakeFirstOrThrow();
        return {
          events: await outbox(get(), acme.workspaceId, mine.conversation_id),
          conversation: await get().db.selectFrom('webchat_conversations').selectAll().where('id', '=', mine.conversation_id).executeTakeFirstOrThrow(),
          session,
          messages: await get().db.selectFrom('session_messages').select(['id', 'text']).where('session_id', '=', session.id).orderBy('at').execute(),
        };
      };
      const before = await state();
      expect(before.conversation).toMatchObject({ visitor_name: null, escalation_requested_at: null });
      const writes: [string, object][] = [
        ['messages', { message: 'I want to talk to a person now' }],
        ['lead', { name: 'Mallory', email: 'mallory@example.com' }],
        ['escalate', { message: 'Call me' }],
      ];
      for (const visitorToken of [null, '', other.visitor_token, `blv_${'A'.repeat(32)}`]) {
        for (const [route, body] of writes) {
          const res = await widget(`/v1/webchat/conversations/${mine.conversation_id}/${route}`, body, { visitorToken });
          expect([route, visitorToken, res.status, res.body.error?.code]).toEqual([route, visitorToken, 404, 'not_found']);
        }
      }
      await service.runtime.settled();
      expect(await state()).toEqual(before);
      // The other conversation's token still writes to its own conversation, and this one's owner to theirs.
      expect((await widget(`/v1/webchat/conversations/${other.conversation_id}/lead`, { name: 'Olga', email: 'olga@example.com' }, { visitorToken: other.visitor_token })).status).toBe(200);
      const own = await widget(`/v1/webchat/conversations/${mine.conversation_id}/lead`, { name: 'Mia', email: 'mia@example.com' }, { visitorToken: mine.visitor_token });
      expect([own.status, own.body]).toEqual([200, { recorded: true }]);
    });
  });

  describe('the widget key', () => {
    it('missing or unknown: 401 with a JSON error', async () => {
      const missing = await start('Hi', { key: null });
      expect(missing.status).toBe(401);
      expect(missing.body.error.message).toContain('X-Widget-Key');
      expect((await start('Hi', { key: `blw_${'A'.repeat(43)}` })).status).toBe(401);
      expect((await start('Hi', { key: 'nonsense' })).status).toBe(401);
    });

    it('the secret sync key is not a widget key, in either header (401)', async () => {
      expect((await start('Hi', { key: acme.syncKey })).status).toBe(401);
      const inSyncHeader = await start('Hi', { key: null, headers: { 'x-sync-key': acme.syncKey } });
      expect(inSyncHeader.status).toBe(401);
      expect(inSyncHeader.body.error.message).toContain('never the secret sync key');
    });

    it('the widget key still cannot write to the sync API (403)', async () => {
      const res = await service.api('PUT', '/v1/sync/pages/x', { headers: { 'x-widget-key': acme.widgetKey }, body: { title: 'T', body: 'B' } });
      expect(res.status).toBe(403);
    });
  });

  describe('limits', () => {
    it(`visitor_message and message: at most ${MAX_MESSAGE_CHARS} characters, not blank`, async () => {
      const long = await start('x'.repeat(MAX_MESSAGE_CHARS + 1));
      expect(long.status).toBe(400);
      expect(long.body.error.details[0].field).toBe('visitor_message');
      expect((await start('   ')).body.error.details[0].field).toBe('visitor_message');
      const ok = await start('é'.repeat(MAX_MESSAGE_CHARS));
      expect(ok.status).toBe(201);
      const id = ok.body.conversation_id as string;
      const longMessage = await widget(`/v1/webchat/conversations/${id}/messages`, { message: 'y'.repeat(MAX_MESSAGE_CHARS + 1) });
      expect(longMessage.body.error.details[0].field).toBe('message');
    });

    it(`page_url: an http(s) URL of at most ${MAX_PAGE_URL_CHARS} characters`, async () => {
      const post = (page_url: unknown) => widget('/v1/webchat/conversations', { visitor_message: 'Hi', page_url });
      for (const bad of ['ftp://shop.example/x', 'shop.example/x', 'javascript:alert(1)', `${SHOP}/${'p'.repeat(MAX_PAGE_URL_CHARS)}`, 42]) {
        const res = await post(bad);
        expect(res.status, String(bad)).toBe(400);
        expect(res.body.error.details[0].field).toBe('page_url');
      }
      expect((await post('http://shop.example/')).status).toBe(201);
    });
  });

  describe('CORS', () => {
    it('a preflight below /v1/webchat/ is answered for the widget\'s methods and headers, whatever the origin', async () => {
      const res = await fetch(`${service.url}/v1/webchat/conversations`, {
        method: 'OPTIONS',
        headers: { origin: 'https://anywhere.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-widget-key' },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('https://anywhere.example');
      expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST');
      expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-widget-key');
      expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
      expect(res.headers.get('vary')).toMatch(/origin/i);
      const nested = await fetch(`${service.url}/v1/webchat/conversations/${crypto.randomUUID()}/lead`, { method: 'OPTIONS', headers: { origin: SHOP } });
      expect(nested.status).toBe(204);
    });

    it('no preflight is answered outside /v1/webchat/ (the settings and other APIs are not for web pages)', async () => {
      // (Express itself may answer OPTIONS with an Allow header; without Access-Control-Allow-Origin a browser refuses.)
      for (const path of ['/v1/webchat', '/v1/sync/pages', '/v1/integration']) {
        const res = await fetch(`${service.url}${path}`, { method: 'OPTIONS', headers: { origin: SHOP, 'access-control-request-method': 'PUT' } });
        expect(res.headers.get('access-control-allow-origin'), path).toBeNull();
      }
    });

    it('a request from an origin the workspace did not allow is 403 JSON without CORS headers, and does nothing', async () => {
      const before = (await outbox(get(), acme.workspaceId)).length;
      const res = await start('Hi from elsewhere', { origin: 'https://evil.example' });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
      expect(res.body.error.message).toContain('https://evil.example');
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect((await start('Hi', { origin: 'null' })).status).toBe(403);
      expect((await start('Hi', { origin: 'http://shop.example' })).status).toBe(403); // another scheme is another origin
      expect((await outbox(get(), acme.workspaceId)).length).toBe(before);
    });

    it('an origin allowed for one workspace is not allowed for another', async () => {
      await service.api('PUT', '/v1/webchat', { token: globex.owner, body: { allowed_origins: ['https://globex.example'] } });
      expect((await start('Hi', { key: globex.widgetKey })).status).toBe(403);
      const own = await start('Hi', { key: globex.widgetKey, origin: 'https://globex.example' });
      expect(own.status).toBe(201);
      expect(own.headers.get('access-control-allow-origin')).toBe('https://globex.example');
    });

    it('a request without Origin is refused (403, no CORS headers) and does nothing: the widget is a web page\'s', async () => {
      const before = (await outbox(get(), acme.workspaceId)).length;
      const res = await start('Is shipping free?', { origin: null });
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain('Origin');
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect((await outbox(get(), acme.workspaceId)).length).toBe(before);
    });

    it('page_url is kept without its query string and fragment', async () => {
      const res = await widget('/v1/webchat/conversations', { visitor_message: 'Hi', page_url: `${SHOP}/account/orders?token=secret-ish#step=2` });
      expect(res.status).toBe(201);
      const row = await get().db.selectFrom('webchat_conversations').select('page_url').where('id', '=', res.body.conversation_id).executeTakeFirstOrThrow();
      expect(row.page_url).toBe(`${SHOP}/account/orders`);
      const [event] = await outbox(get(), acme.workspaceId, res.body.conversation_id);
      expect(event!.payload.page_url).toBe(`${SHOP}/account/orders`);
    });

    it('allowed answers expose Retry-After and X-Request-Id to the widget\'s script', async () => {
      const res = await start('Is shipping free?');
      expect(res.headers.get('access-control-expose-headers')).toContain('Retry-After');
    });
  });

  describe('the widget\'s settings (owners and admins)', () => {
    it('GET and PUT /v1/webchat: origins canonicalised, duplicates merged; agents get 403', async () => {
      expect((await service.api('GET', '/v1/webchat', { token: acme.agent })).status).toBe(403);
      expect((await service.api('PUT', '/v1/webchat', { token: acme.agent, body: { allowed_origins: [] } })).status).toBe(403);
      expect((await service.api('GET', '/v1/webchat', { headers: { 'x-widget-key': acme.widgetKey } })).status).toBe(401);

      const put = await service.api('PUT', '/v1/webchat', { token: acme.owner, body: { allowed_origins: ['https://SHOP.example:443/', SHOP, 'http://localhost:3000'] } });
      expect(put.status).toBe(200);
      expect(put.body.allowed_origins).toEqual([SHOP, 'http://localhost:3000']);
      const got = await service.api('GET', '/v1/webchat', { token: acme.owner });
      expect(got.body).toEqual({ allowed_origins: [SHOP, 'http://localhost:3000'], enabled: true, updated_at: put.body.updated_at });
      expect((await start('Hi', { origin: 'http://localhost:3000' })).status).toBe(201);
    });

    it("a page's address or a bare host is taken as its site and said so; another scheme, credentials or no host are refused, naming the item", async () => {
      const pasted = await service.api('PUT', '/v1/webchat', { token: acme.owner, body: { allowed_origins: [`${SHOP}/chat?x=1`, 'www.shop.example'] } });
      expect(pasted.status).toBe(200);
      expect(pasted.body.allowed_origins).toEqual([SHOP, 'https://www.shop.example']);
      expect(pasted.body.notes).toEqual([
        `${SHOP}/chat?x=1 is saved as ${SHOP}: the chat works on every page of that site, so only its address is kept.`,
        'www.shop.example is saved as https://www.shop.example: the chat works on every page of that site, so only its address is kept.',
      ]);
      for (const bad of ['ftp://shop.example', 'https://user:pw@shop.example', '*', 'no site here']) {
        const res = await service.api('PUT', '/v1/webchat', { token: acme.owner, body: { allowed_origins: [SHOP, bad] } });
        expect(res.status, bad).toBe(400);
        expect(res.body.error.details[0].field).toBe('allowed_origins[1]');
      }
      expect((await service.api('GET', '/v1/webchat', { token: acme.owner })).body.allowed_origins).toContain(SHOP);
    });

    it('a workspace that has not set origins refuses every browser origin (the widget is off until set)', async () => {
      const fresh = await seedWorkspace(service, 'Initech');
      const key = (await service.api('GET', '/v1/keys/widget', { token: fresh.owner })).body.key as string;
      expect((await service.api('GET', '/v1/webchat', { token: fresh.owner })).body).toEqual({ allowed_origins: [], enabled: true, updated_at: null });
      expect((await start('Hi', { key })).status).toBe(403);
      expect((await start('Hi', { key, origin: null })).status).toBe(403);
    });
  });

  it('the routes are described in /openapi.json with the widget key as their only security', async () => {
    const doc = (await service.api('GET', '/openapi.json')).body;
    for (const path of ['/v1/webchat/conversations', '/v1/webchat/conversations/{id}/messages', '/v1/webchat/conversations/{id}/lead', '/v1/webchat/conversations/{id}/escalate']) {
      expect(doc.paths[path].post.security, path).toEqual([{ widgetKey: [] }]);
      expect(Object.keys(doc.paths[path].post.responses)).toEqual(expect.arrayContaining(['401', '403', '429']));
    }
    expect(doc.paths['/v1/webchat'].put.security).toEqual([{ bearer: [] }]);
  });
});

describeEachDatabase('website chat rate limit', (get) => {
  let service: TestService;
  let first: Shop;
  let second: Shop;
  const BURST = 3;
  // One token back every 2 s: the burst is spent well within that on a loaded machine.
  const WINDOW_MS = 6_000;

  beforeAll(async () => {
    service = await startTestService(get(), {}, { webchat: { rateLimit: { burst: BURST, windowMs: WINDOW_MS } } });
    first = await seedShop(service, 'First', {});
    second = await seedShop(service, 'Second', {});
  });
  afterAll(async () => {
    await service.stop();
  });

  const start = (key: string) =>
    service.api('POST', '/v1/webchat/conversations', { headers: { 'x-widget-key': key, origin: SHOP }, body: { visitor_message: 'Hello', page_url: `${SHOP}/` } });

  it('a key beyond its burst gets 429 with Retry-After, other keys are not slowed, and it recovers after the wait', async () => {
    for (let i = 0; i < BURST; i++) expect((await start(first.widgetKey)).status).toBe(201);
    const limited = await start(first.widgetKey);
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // The widget can read the refusal and when to retry.
    expect(limited.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(limited.headers.get('access-control-expose-headers')).toContain('Retry-After');

    expect((await start(second.widgetKey)).status).toBe(201);

    await new Promise((r) => setTimeout(r, retryAfter * 1_000));
    expect((await start(first.widgetKey)).status).toBe(201);
  });

  it('a refused origin or an unknown key does not spend the key\'s tokens', async () => {
    await new Promise((r) => setTimeout(r, WINDOW_MS / BURST + 100));
    const evil = () => service.api('POST', '/v1/webchat/conversations', { headers: { 'x-widget-key': first.widgetKey, origin: 'https://evil.example' }, body: { visitor_message: 'Hello', page_url: `${SHOP}/` } });
    for (let i = 0; i < BURST + 2; i++) expect((await evil()).status).toBe(403);
    expect((await start(second.widgetKey)).status).toBe(201);
  });
});

describeEachDatabase("website chat: each visitor's own budget", (get) => {
  let service: TestService;
  let shop: Shop;
  beforeAll(async () => {
    // The configured burst, refilled over an hour instead of 10 s: counts that do not depend on how fast a loaded
    // machine sends the requests.
    service = await startTestService(get(), {}, { webchat: { rateLimit: { burst: WEBCHAT_RATE_BURST, windowMs: 3_600_000 } } });
    shop = await seedShop(service, 'Budget', {});
  });
  afterAll(async () => {
    await service.stop();
  });
  /** Each conversation's visitor token, answered by its start. */
  const visitorTokens = new Map<string, string>();
  const post = async (address: string, path: string, body: object, origin: string | null = SHOP) => {
    const token = visitorTokens.get(/^\/conversations\/([^/]+)\//.exec(path)?.[1] ?? '');
    const res = await postFrom(service, address, `/v1/webchat${path}`, body, { 'x-widget-key': shop.widgetKey, ...(origin === null ? {} : { origin }), ...(token ? { 'x-visitor-token': token } : {}) });
    if (typeof res.body?.conversation_id === 'string') visitorTokens.set(res.body.conversation_id, res.body.visitor_token);
    return res;
  };
  const start = (address: string) => post(address, '/conversations', { visitor_message: 'Do you ship to Belgium?', page_url: `${SHOP}/` });

  it("100 scripted requests without Origin are refused (403) and leave an allowed visitor's requests alone", async () => {
    const scripted = await Promise.all(Array.from({ length: 100 }, () => post('127.0.0.1', `/conversations/${crypto.randomUUID()}/messages`, { message: 'hi' }, null)));
    expect(scripted.map((r) => r.status)).toEqual(Array(100).fill(403));
    const visitor = await start('127.0.0.1');
    expect(visitor.status).toBe(201);
    expect((await post('127.0.0.1', `/conversations/${visitor.body.conversation_id}/messages`, { message: 'And to Germany?' })).status).toBe(200);
  });

  it(`a script with a forged Origin spends its own address's budget (${WEBCHAT_RATE_BURST}), with 404s too; a visitor elsewhere is answered`, async () => {
    const scripted = await Promise.all(Array.from({ length: 100 }, () => post('127.0.0.31', `/conversations/${crypto.randomUUID()}/messages`, { message: 'hi' })));
    const statuses = scripted.map((r) => r.status);
    expect(statuses.filter((s) => s === 404)).toHaveLength(WEBCHAT_RATE_BURST);
    expect(statuses.filter((s) => s === 429)).toHaveLength(100 - WEBCHAT_RATE_BURST);
    const visitor = await start('127.0.0.32');
    expect(visitor.status).toBe(201);
    expect((await post('127.0.0.32', `/conversations/${visitor.body.conversation_id}/messages`, { message: 'And to Germany?' })).status).toBe(200);
  });

  it("refused requests about a real conversation cost the caller only, never the conversation's budget", async () => {
    const visitor = await start('127.0.0.33');
    const id = visitor.body.conversation_id as string;
    // Another client names the visitor's conversation with a body the route refuses (400), far beyond any budget.
    const refused = await Promise.all(Array.from({ length: 3 * WEBCHAT_RATE_BURST }, () => post('127.0.0.34', `/conversations/${id}/messages`, { message: '' })));
    expect(refused.filter((r) => r.status === 400)).toHaveLength(WEBCHAT_RATE_BURST);
    expect(refused.filter((r) => r.status === 429)).toHaveLength(2 * WEBCHAT_RATE_BURST);
    expect((await post('127.0.0.33', `/conversations/${id}/messages`, { message: 'Still there?' })).status).toBe(200);
  });
});
