/**
 * The customer beside a conversation (docs/architecture.md, "Who handles a conversation"): the inbox's rows carry the
 * customer's own last words (not the bot's sentence after them); the session carries the customer panel (channel id,
 * the page a chat started on, language, local time from the browser's zone or the number's country); the customer's
 * earlier conversations are found by a whole number, email or WhatsApp id, in their workspace only, newest first and
 * at most 20; and the words of a chat the team answered (never "not connected", never "call back").
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CUSTOMER_HISTORY } from '../../src/inbox/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';

describeEachDatabase('the customer beside a conversation', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let other: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';

  const widget = (method: string, path: string, body?: unknown, token?: string) =>
    service.api(method, path, { headers: { 'x-widget-key': widgetKey, origin: SHOP, ...(token ? { 'x-visitor-token': token } : {}) }, ...(body === undefined ? {} : { body }) });
  const api = (method: string, path: string, token: string, body?: unknown) => service.api(method, path, { token, ...(body === undefined ? {} : { body }) });

  async function startChat(text: string, extra: Record<string, unknown> = {}) {
    const res = await widget('POST', '/v1/webchat/conversations', { visitor_message: text, page_url: `${SHOP}/shipping?order=4411#top`, ...extra });
    expect(res.status).toBe(201);
    const conversationId = res.body.conversation_id as string;
    await service.runtime.settled();
    const session = await get().db.selectFrom('sessions').select('id').where('external_id', '=', conversationId).executeTakeFirstOrThrow();
    return { conversationId, token: res.body.visitor_token as string, sessionId: session.id };
  }

  /** A conversation of another channel as its channel would have stored it: the session, its messages or turn. */
  async function storedSession(workspaceId: string, channel: 'phone' | 'whatsapp', customerPhone: string, options: { createdAt?: Date; waId?: string } = {}) {
    const id = randomUUID();
    const externalId = `${channel}-${id}`;
    const at = options.createdAt ?? new Date();
    await get().db.insertInto('sessions').values({
      id, workspace_id: workspaceId, channel, external_id: externalId, customer_phone: customerPhone, machine_version: 1,
      handoff: null, snapshot: null, lease_owner: null, lease_until: null, agent_user_id: null, waiting_since: null, handback_at: null,
      customer_email: null, customer_name: null, created_at: at, updated_at: at,
    }).execute();
    if (options.waId) {
      await get().db.insertInto('whatsapp_conversations').values({ workspace_id: workspaceId, wa_id: options.waId, external_id: externalId, started_at: at, last_message_at: at, profile_name: null, notice_at: null }).execute();
    }
    return id;
  }

  beforeAll(async () => {
    service = await startTestService(get());
    ws = await seedWorkspace(service, 'Acme');
    other = await seedWorkspace(service, 'Other');
    expect((await api('PUT', '/v1/webchat', ws.owner, { allowed_origins: [SHOP] })).status).toBe(200);
    widgetKey = (await api('GET', '/v1/keys/widget', ws.owner)).body.key as string;
  });
  afterAll(async () => {
    await service.stop();
  });

  describe("the inbox's rows and the customer's words", () => {
    it("a waiting row carries the customer's last words beside the last message, which is the bot's", async () => {
      const chat = await startChat('Hello');
      expect((await widget('POST', `/v1/webchat/conversations/${chat.conversationId}/messages`, { message: 'My parcel 4411 never arrived' }, chat.token)).status).toBe(200);
      expect((await widget('POST', `/v1/webchat/conversations/${chat.conversationId}/escalate`, {}, chat.token)).status).toBe(200);
      await service.runtime.settled();
      const waiting = await api('GET', '/v1/inbox?view=waiting', ws.agent);
      expect(waiting.status).toBe(200);
      const row = waiting.body.conversations.find((c: { id: string }) => c.id === chat.sessionId);
      expect(row.last_message.from).toBe('bot');
      expect(row.customer_last_message).toEqual({ text: 'My parcel 4411 never arrived', at: expect.any(String) });
      // The same on the list of every open conversation.
      const open = await api('GET', '/v1/inbox?view=open', ws.agent);
      expect(open.body.conversations.find((c: { id: string }) => c.id === chat.sessionId).customer_last_message.text).toBe('My parcel 4411 never arrived');
    });

    it('a conversation whose customer has not written has no customer words', async () => {
      const id = await storedSession(ws.workspaceId, 'whatsapp', '+31600000001');
      await get().db.updateTable('sessions').set({ status: 'active' }).where('id', '=', id).execute();
      await get().db.insertInto('session_messages').values({ id: randomUUID(), session_id: id, from: 'bot', text: 'Welcome!', source: null, agent_user_id: null, turn_id: null, outbound_id: null, at: new Date() }).execute();
      const open = await api('GET', '/v1/inbox?view=open', ws.agent);
      const row = open.body.conversations.find((c: { id: string }) => c.id === id);
      expect(row.last_message).toMatchObject({ from: 'bot', text: 'Welcome!' });
      expect(row.customer_last_message).toBeNull();
    });
  });

  describe('the customer panel (GET /v1/sessions/{id} customer_context)', () => {
    it("a web chat: the page without its query, the language, the browser's time zone, the details the visitor left", async () => {
      const chat = await startChat('Hallo, wat kost verzending?', { language: 'nl', time_zone: 'Europe/Amsterdam' });
      const lead = await widget('POST', `/v1/webchat/conversations/${chat.conversationId}/lead`, { name: 'Kim', email: 'kim@example.com', phone: '+31 6 5555 0001' }, chat.token);
      expect(lead.status).toBeLessThan(300);
      const session = await api('GET', `/v1/sessions/${chat.sessionId}`, ws.agent);
      expect(session.status).toBe(200);
      expect(session.body.customer_context).toEqual({
        channel_id: chat.conversationId,
        name: 'Kim',
        email: 'kim@example.com',
        phone: '+31 6 5555 0001',
        page_url: `${SHOP}/shipping`,
        language: 'nl',
        time_zone: 'Europe/Amsterdam',
        time_zone_source: 'browser',
      });
    });

    it('a time zone not written as one is refused (400); one the service does not know, or none, is not kept', async () => {
      const bad = await widget('POST', '/v1/webchat/conversations', { visitor_message: 'Hi', page_url: SHOP, time_zone: 'Europe/Amsterdam; drop table' });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 'validation_failed' });
      for (const extra of [{ time_zone: 'Mars/Olympus_Mons' }, {}]) {
        const chat = await startChat('Hi there', extra);
        const session = await api('GET', `/v1/sessions/${chat.sessionId}`, ws.agent);
        expect(session.body.customer_context).toMatchObject({ time_zone: null, time_zone_source: null, page_url: `${SHOP}/shipping` });
      }
    });

    it("WhatsApp: the WhatsApp id, and the local time from the number's country when it has one zone", async () => {
      const dutch = await storedSession(ws.workspaceId, 'whatsapp', '+31699990001', { waId: '31699990001' });
      const american = await storedSession(ws.workspaceId, 'whatsapp', '+12025550101', { waId: '12025550101' });
      expect((await api('GET', `/v1/sessions/${dutch}`, ws.agent)).body.customer_context).toMatchObject({
        channel_id: '31699990001', phone: '+31699990001', page_url: null, time_zone: 'Europe/Amsterdam', time_zone_source: 'phone_number',
      });
      // The United States have several zones: none is guessed.
      expect((await api('GET', `/v1/sessions/${american}`, ws.agent)).body.customer_context).toMatchObject({ channel_id: '12025550101', time_zone: null, time_zone_source: null });
    });
  });

  describe("the customer's earlier conversations (GET /v1/sessions/{id}/history)", () => {
    const phone = '+31 6 1234 5678';
    const waId = '31611112222';
    let chatByPhone: Awaited<ReturnType<typeof startChat>>;
    let chatByEmail: Awaited<ReturnType<typeof startChat>>;
    let call: string;
    let otherWorkspaceCall: string;
    let stranger: string;

    beforeAll(async () => {
      chatByPhone = await startChat('Where is my order?');
      expect((await widget('POST', `/v1/webchat/conversations/${chatByPhone.conversationId}/lead`, { name: 'Sam', email: 'Sam.Jansen@Example.com', phone }, chatByPhone.token)).status).toBeLessThan(300);
      chatByEmail = await startChat('And the invoice?');
      expect((await widget('POST', `/v1/webchat/conversations/${chatByEmail.conversationId}/lead`, { name: 'Sam', email: 'sam.jansen@example.com' }, chatByEmail.token)).status).toBeLessThan(300);
      call = await storedSession(ws.workspaceId, 'phone', '+31612345678', { createdAt: new Date(Date.now() - 86_400_000) });
      // The same number and email in another workspace, and another customer here: never listed.
      otherWorkspaceCall = await storedSession(other.workspaceId, 'phone', '+31612345678');
      stranger = await storedSession(ws.workspaceId, 'phone', '+31687654321');
    });

    const ids = (body: { conversations: { id: string }[] }) => body.conversations.map((c) => c.id);

    it('matched by the number: the call and the chat with the email, newest first; never another workspace or customer', async () => {
      const res = await api('GET', `/v1/sessions/${chatByPhone.sessionId}/history`, ws.agent);
      expect(res.status).toBe(200);
      // The call by the number; the second chat by the email the first one left.
      expect(ids(res.body)).toEqual([chatByEmail.sessionId, call]);
      expect(ids(res.body)).not.toContain(otherWorkspaceCall);
      expect(ids(res.body)).not.toContain(stranger);
      expect(res.body.conversations[0]).toMatchObject({
        channel: 'webchat', started_at: expect.any(String), handled_by: 'bot', last_message: { from: 'bot', at: expect.any(String) },
      });
      expect(res.body.conversations[1]).toMatchObject({ channel: 'phone', last_message: null });
    });

    it('matched by the email alone (any case), and from a call by its number', async () => {
      expect(ids((await api('GET', `/v1/sessions/${chatByEmail.sessionId}/history`, ws.agent)).body)).toEqual([chatByPhone.sessionId]);
      expect(ids((await api('GET', `/v1/sessions/${call}/history`, ws.agent)).body)).toEqual([chatByPhone.sessionId]);
    });

    it('matched by the WhatsApp id: an earlier WhatsApp conversation and a chat that left that number', async () => {
      // WhatsApp keeps one conversation row per WhatsApp id (the current one): an earlier session is known by its number.
      const earlier = await storedSession(ws.workspaceId, 'whatsapp', `+${waId}`, { createdAt: new Date(Date.now() - 3 * 86_400_000) });
      const chat = await startChat('Can I change my delivery address?');
      expect((await widget('POST', `/v1/webchat/conversations/${chat.conversationId}/lead`, { name: 'Robin', email: 'robin@example.com', phone: `+${waId}` }, chat.token)).status).toBeLessThan(300);
      const now = await storedSession(ws.workspaceId, 'whatsapp', `+${waId}`, { waId });
      await storedSession(other.workspaceId, 'whatsapp', `+${waId}`, { waId });
      const res = await api('GET', `/v1/sessions/${now}/history`, ws.agent);
      expect(ids(res.body)).toEqual([chat.sessionId, earlier]);
    });

    it(`at most ${MAX_CUSTOMER_HISTORY}, newest first`, async () => {
      const number = '+31655550000';
      const made: string[] = [];
      for (let i = 0; i < MAX_CUSTOMER_HISTORY + 3; i++) made.push(await storedSession(ws.workspaceId, 'phone', number, { createdAt: new Date(Date.UTC(2026, 0, 1 + i)) }));
      const res = await api('GET', `/v1/sessions/${made[0]}/history`, ws.agent);
      expect(ids(res.body)).toEqual(made.slice(1).reverse().slice(0, MAX_CUSTOMER_HISTORY));
    });

    it('every role reads it; without a token 401; another workspace gets 404 for this session', async () => {
      for (const token of [ws.owner, ws.admin, ws.agent]) expect((await api('GET', `/v1/sessions/${call}/history`, token)).status).toBe(200);
      expect((await service.api('GET', `/v1/sessions/${call}/history`)).status).toBe(401);
      const foreign = await api('GET', `/v1/sessions/${call}/history`, other.owner);
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.code).toBe('not_found');
    });
  });

  describe('the words of a chat the team answered', () => {
    it('is answered by the team in the sessions list and its notification names its channel', async () => {
      const chat = await startChat('Hello');
      expect((await widget('POST', `/v1/webchat/conversations/${chat.conversationId}/escalate`, { message: 'A person please' }, chat.token)).status).toBe(200);
      await service.runtime.settled();
      const before = await api('GET', '/v1/notifications', ws.agent);
      const note = before.body.notifications.find((n: { session_id: string }) => n.session_id === chat.sessionId);
      expect(note).toMatchObject({ kind: 'human_followup', channel: 'webchat', answered_by_team: false });
      expect((await api('POST', `/v1/sessions/${chat.sessionId}/takeover`, ws.agent)).status).toBe(200);
      expect((await api('POST', `/v1/sessions/${chat.sessionId}/messages`, ws.agent, { text: 'Hi, this is Sam.' })).status).toBe(201);
      expect((await api('POST', `/v1/sessions/${chat.sessionId}/close`, ws.agent)).status).toBe(200);
      const after = await api('GET', '/v1/notifications', ws.agent);
      expect(after.body.notifications.find((n: { session_id: string }) => n.session_id === chat.sessionId)).toMatchObject({ channel: 'webchat', answered_by_team: true });
      const list = await api('GET', '/v1/sessions?channel=webchat', ws.agent);
      const row = list.body.sessions.find((s: { id: string }) => s.id === chat.sessionId);
      expect(row).toMatchObject({ answered_by_team: true, handoff: { kind: 'human' } });
      expect((await api('GET', `/v1/sessions/${chat.sessionId}`, ws.agent)).body.answered_by_team).toBe(true);
      // A chat nobody answered is not answered.
      expect(list.body.sessions.find((s: { id: string; handoff: unknown }) => s.id !== chat.sessionId && s.handoff === null)?.answered_by_team).toBe(false);
    });
  });
});
