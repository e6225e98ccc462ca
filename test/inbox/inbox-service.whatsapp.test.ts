/**
 * A WhatsApp customer reaches a person (docs/architecture.md, "Who handles a conversation"; docs/whatsapp.md, "A
 * person answers"): the integrator hands the question to a person (`handoff: "human"`), the conversation waits in the
 * inbox, an agent takes it over and answers through the Graph API, Meta's status webhooks move the message to
 * delivered and read, the customer's next message reaches neither the integrator nor the AI, and after the hand-back
 * the bot answers again. Real service, real Graph and integrator stand-ins on loopback HTTPS.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/rate-limiter.ts';
import { phrase } from '../../src/ai/phrases.ts';
import { createInboxService } from '../../src/inbox/inbox-service.ts';
import { AGENT_MESSAGE_RATE_LIMIT, MAX_AGENT_WHATSAPP_CHARS } from '../../src/inbox/limits.ts';
import { createInboxEvents } from '../../src/sessions/inbox-events.ts';
import { sessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { createLogger } from '../../src/log.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson } from '../helpers/https-server.ts';
import { fixture, unixSeconds } from '../channels/whatsapp/fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from '../channels/whatsapp/fixtures/harness.ts';

const DAMAGED = 'My parcel arrived damaged';

describeEachDatabase('a WhatsApp customer reaches a person', (get) => {
  let h: Harness;
  let customers = 0;
  const newCustomer = () => `3162000${String(++customers).padStart(4, '0')}`;
  const api = (method: string, path: string, token: string, body?: unknown) => h.service.api(method, path, { token, ...(body === undefined ? {} : { body }) });
  const sentTo = (waId: string) => h.sends().filter((s) => s.body.to === waId).map((s) => (s.body.text as { body: string }).body);
  const asked = () => h.channelRequests().map((r) => r.message);

  async function write(waId: string, text: string, at = new Date()): Promise<void> {
    const res = await h.post(fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(at), BODY: text }));
    expect(res.status).toBe(200);
  }
  async function sessionOf(waId: string): Promise<string> {
    const conversation = await until(() => get().db.selectFrom('whatsapp_conversations').select('external_id').where('wa_id', '=', waId).executeTakeFirst());
    const row = await until(() => get().db.selectFrom('sessions').select('id').where('external_id', '=', conversation.external_id).executeTakeFirst());
    return row.id;
  }
  async function status(messageId: string, value: string, waId: string): Promise<void> {
    const res = await h.post(fixture('status', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: messageId, STATUS: value, TIMESTAMP: unixSeconds() }));
    expect(res.status).toBe(200);
  }

  beforeAll(async () => {
    h = await startHarness(get(), { answer: (r) => (r.message.includes('damaged') ? { reply: 'Sorry to hear that.', handoff: 'human' } : undefined) });
  });
  afterAll(async () => {
    await h.close();
  });

  describe('handed to a person, answered by one, handed back', () => {
    const waId = newCustomer();
    let sessionId = '';
    let agentMessageId = '';

    it('the integrator hands the question to a person: the customer is told once, and the conversation waits in the inbox', async () => {
      await write(waId, DAMAGED);
      // The team is switched off: a colleague replies when they are back.
      const sent = await until(() => sentTo(waId).at(-1));
      expect(sent).toBe(`Sorry to hear that. ${phrase('handoff_waiting_closed', 'en')}`);
      sessionId = await sessionOf(waId);
      await until(async () => (await api('GET', `/v1/sessions/${sessionId}`, h.workspace.agent)).body.handled_by === 'waiting');
      const waiting = await api('GET', '/v1/inbox?view=waiting', h.workspace.agent);
      expect(waiting.status).toBe(200);
      const entry = (waiting.body.conversations as Array<Record<string, unknown>>).find((c) => c.id === sessionId);
      expect(entry).toMatchObject({ channel: 'whatsapp', handled_by: 'waiting', agent: null, customer: { phone: `+${waId}` } });
      expect(Date.parse(entry!.waiting_since as string)).toBeGreaterThan(Date.now() - 60_000);
      expect(entry!.last_message).toMatchObject({ from: 'bot', text: sent });
      const listed = await api('GET', '/v1/sessions?handled_by=waiting', h.workspace.agent);
      expect((listed.body.sessions as Array<{ id: string }>).map((s) => s.id)).toContain(sessionId);
    });

    it('an agent takes it over; another user then gets 409 taken with the holder', async () => {
      const live: unknown[] = [];
      const unsubscribe = h.service.runtime.subscribe(sessionId, (e) => {
        if (e.type === 'handled_by') live.push({ handled_by: e.handled_by, agent: e.agent?.user_id ?? null, reason: e.reason });
      });
      const taken = await api('POST', `/v1/sessions/${sessionId}/takeover`, h.workspace.agent);
      unsubscribe();
      expect(taken.status).toBe(200);
      // The session's live stream (GET /v1/sessions/{id}/events) is told.
      expect(live).toEqual([{ handled_by: 'agent', agent: h.workspace.agentId, reason: 'takeover' }]);
      expect(taken.body).toEqual({ handled_by: 'agent', agent: { user_id: h.workspace.agentId, email: 'agent@acme.example', name: 'Agent' } });
      const second = await api('POST', `/v1/sessions/${sessionId}/takeover`, h.workspace.admin);
      expect(second.status).toBe(409);
      expect(second.body.error).toMatchObject({ code: 'taken', holder: { user_id: h.workspace.agentId } });
      const mine = await api('GET', '/v1/inbox?view=mine', h.workspace.agent);
      expect((mine.body.conversations as Array<{ id: string }>).map((c) => c.id)).toEqual([sessionId]);
    });

    it('only the holder writes, and only what fits: empty and too long are 422, another user 409', async () => {
      expect((await api('POST', `/v1/sessions/${sessionId}/messages`, h.workspace.admin, { text: 'Hello' })).body.error.code).toBe('not_holder');
      const empty = await api('POST', `/v1/sessions/${sessionId}/messages`, h.workspace.agent, { text: '   ' });
      expect([empty.status, empty.body.error.code]).toEqual([422, 'invalid_message']);
      const long = await api('POST', `/v1/sessions/${sessionId}/messages`, h.workspace.agent, { text: 'x'.repeat(MAX_AGENT_WHATSAPP_CHARS + 1) });
      expect([long.status, long.body.error.code]).toEqual([422, 'invalid_message']);
    });

    it("the agent's reply reaches the customer through the Graph API, exactly as written", async () => {
      const before = sentTo(waId).length;
      const text = 'Hi, this is Agent from the shop. We send you a new one today.';
      const res = await api('POST', `/v1/sessions/${sessionId}/messages`, h.workspace.agent, { text });
      expect(res.status).toBe(201);
      expect(res.body.message).toMatchObject({ id: expect.any(String), status: 'queued' });
      agentMessageId = res.body.message.id as string;
      await until(() => sentTo(waId).length > before);
      expect(sentTo(waId).slice(before)).toEqual([text]);
      const detail = await until(async () => {
        const d = await api('GET', `/v1/sessions/${sessionId}`, h.workspace.agent);
        const m = (d.body.messages as Array<Record<string, unknown>>).find((x) => x.id === agentMessageId);
        return m?.status === 'sent' ? m : undefined;
      });
      expect(detail).toMatchObject({ from: 'agent', text, agent: { user_id: h.workspace.agentId } });
    });

    it("Meta's status webhooks move the message to delivered, then read", async () => {
      const outbound = await get().db.selectFrom('session_messages as m').innerJoin('whatsapp_outbound_messages as o', 'o.id', 'm.outbound_id').select('o.message_id').where('m.id', '=', agentMessageId).executeTakeFirstOrThrow();
      const statusOf = async () => ((await api('GET', `/v1/sessions/${sessionId}`, h.workspace.agent)).body.messages as Array<{ id: string; status?: string }>).find((m) => m.id === agentMessageId)!.status;
      // What the session's live stream (GET /v1/sessions/{id}/events) is given.
      const live: string[] = [];
      const unsubscribe = h.service.runtime.subscribe(sessionId, (e) => {
        if (e.type === 'message_status' && e.message_id === agentMessageId) live.push(e.status);
      });
      await status(outbound.message_id!, 'delivered', waId);
      await until(async () => (await statusOf()) === 'delivered');
      await status(outbound.message_id!, 'read', waId);
      await until(async () => (await statusOf()) === 'read');
      // A late `delivered` never moves it back.
      await status(outbound.message_id!, 'delivered', waId);
      await h.service.whatsapp.worker.idle();
      expect(await statusOf()).toBe('read');
      await until(() => live.length >= 3);
      unsubscribe();
      expect(live).toEqual(['delivered', 'read', 'read']);
    });

    it("the customer's next message reaches neither the integrator nor the AI; it is in the session and the inbox", async () => {
      const sendsBefore = h.sends().length;
      const text = 'Thank you! Will it come by PostNL?';
      await write(waId, text);
      const held = await until(async () => {
        const d = await api('GET', `/v1/sessions/${sessionId}`, h.workspace.agent);
        return (d.body.messages as Array<{ from: string; text: string }>).find((m) => m.text === text);
      });
      expect(held.from).toBe('customer');
      await h.service.whatsapp.worker.idle();
      expect(asked()).not.toContain(text);
      expect(h.sends().length).toBe(sendsBefore);
      const turns = (await api('GET', `/v1/sessions/${sessionId}`, h.workspace.agent)).body.turns as Array<{ customer_message: string }>;
      expect(turns.map((t) => t.customer_message)).not.toContain(text);
      const mine = await api('GET', '/v1/inbox?view=mine', h.workspace.agent);
      expect(mine.body.conversations[0].last_message).toMatchObject({ from: 'customer', text });
    });

    it('handed back, the bot (the integrator here) answers again', async () => {
      const back = await api('POST', `/v1/sessions/${sessionId}/handback`, h.workspace.agent);
      expect([back.status, back.body]).toEqual([200, { handled_by: 'bot' }]);
      await write(waId, 'Where is order 5?');
      await until(() => sentTo(waId).includes('Answer to: Where is order 5?'));
      expect(asked()).toContain('Where is order 5?');
      expect((await api('GET', `/v1/sessions/${sessionId}`, h.workspace.agent)).body).toMatchObject({ handled_by: 'bot', agent: null, waiting_since: null });
    });
  });

  it('forward stays what it is: the bot keeps answering, and the conversation shows under followups', async () => {
    const waId = newCustomer();
    await write(waId, 'My invoice is wrong, please pass this on');
    await until(() => sentTo(waId).length > 0);
    const sessionId = await sessionOf(waId);
    await h.service.runtime.settled();
    const followups = await api('GET', '/v1/inbox?view=followups', h.workspace.agent);
    expect((followups.body.conversations as Array<{ id: string; handled_by: string }>).find((c) => c.id === sessionId)).toMatchObject({ handled_by: 'bot' });
    const waiting = await api('GET', '/v1/inbox?view=waiting', h.workspace.agent);
    expect((waiting.body.conversations as Array<{ id: string }>).map((c) => c.id)).not.toContain(sessionId);
    await write(waId, 'Where is order 7?');
    await until(() => sentTo(waId).includes('Answer to: Where is order 7?'));
  });

  it('a free-form message more than 24 hours after the customer\'s last one is 422 whatsapp_window_closed', async () => {
    const waId = newCustomer();
    await write(waId, 'Hello, is anyone there?', new Date(Date.now() - 25 * 3_600_000));
    await until(() => sentTo(waId).length > 0);
    const sessionId = await sessionOf(waId);
    expect((await api('POST', `/v1/sessions/${sessionId}/takeover`, h.workspace.agent)).status).toBe(200);
    const res = await api('POST', `/v1/sessions/${sessionId}/messages`, h.workspace.agent, { text: 'Sorry for the wait!' });
    expect([res.status, res.body.error.code]).toEqual([422, 'whatsapp_window_closed']);
    // Refused whole: neither the message nor an outgoing row was stored.
    const db = get().db;
    expect(await db.selectFrom('session_messages').select('id').where('session_id', '=', sessionId).where('text', '=', 'Sorry for the wait!').execute()).toEqual([]);
    expect(await db.selectFrom('whatsapp_outbound_messages').select('id').where('body', '=', 'Sorry for the wait!').where('wa_id', '=', waId).execute()).toEqual([]);
  });

  it('a Graph failure shows as failed with the reason, and a retry sends it', async () => {
    const waId = newCustomer();
    await write(waId, DAMAGED);
    await until(() => sentTo(waId).length > 0);
    const sessionId = await sessionOf(waId);
    await h.service.whatsapp.worker.idle();
    const sentBefore = sentTo(waId).length;
    expect((await api('POST', `/v1/sessions/${sessionId}/takeover`, h.workspace.agent)).status).toBe(200);
    // The line that a colleague joined goes out first; the failure scripted next is the agent's message's.
    await until(() => sentTo(waId).length > sentBefore);
    h.graphScript.push((_req, res) => sendJson(res, 400, { error: { message: '(#131026) Message undeliverable', type: 'OAuthException', code: 131026 } }));
    const sent = await api('POST', `/v1/sessions/${sessionId}/messages`, h.workspace.agent, { text: 'We will call you.' });
    const id = sent.body.message.id as string;
    const failed = await until(async () => {
      const m = ((await api('GET', `/v1/sessions/${sessionId}`, h.workspace.agent)).body.messages as Array<Record<string, unknown>>).find((x) => x.id === id);
      return m?.status === 'failed' ? m : undefined;
    });
    expect(failed.failure).toMatchObject({ http_status: 400, code: 131026 });
    const retried = await api('POST', `/v1/sessions/${sessionId}/messages/${id}/retry`, h.workspace.agent);
    expect([retried.status, retried.body.message.status]).toEqual([200, 'queued']);
    await until(() => sentTo(waId).filter((t) => t === 'We will call you.').length === 2);
    const again = await api('POST', `/v1/sessions/${sessionId}/messages/${id}/retry`, h.workspace.agent);
    expect(again.status).toBe(409);
  });

  it("a waiting conversation nobody took goes back to the bot after handback_after_minutes, with a sentence in the customer's language", async () => {
    expect((await api('PUT', '/v1/inbox/settings', h.workspace.agent, { handback_after_minutes: 1 })).status).toBe(403);
    expect((await api('PUT', '/v1/inbox/settings', h.workspace.admin, { handback_after_minutes: 1 })).body).toMatchObject({ handback_after_minutes: 1 });
    const waId = newCustomer();
    await write(waId, 'Mijn pakket is beschadigd aangekomen, damaged');
    await until(() => sentTo(waId).length > 0);
    const sessionId = await sessionOf(waId);
    const waiting = await until(() => get().db.selectFrom('sessions').select(['handled_by', 'handback_at', 'waiting_since']).where('id', '=', sessionId).where('handled_by', '=', 'waiting').executeTakeFirst());
    expect(new Date(waiting.handback_at!).getTime() - new Date(waiting.waiting_since!).getTime()).toBe(60_000);

    // A minute passes: the deadline kept in the session's context and its row (the sweep reads the row).
    await sql`update sessions set handback_at = now() - interval '1 second' where id = ${sessionId}`.execute(get().db);
    const sweep = createInboxService({
      db: get().db,
      sessions: sessionsRepository(get().db),
      runtime: h.service.runtime,
      inbox: createInboxEvents(),
      wakeWhatsapp: () => h.service.whatsapp.worker.wake(),
      messageLimiter: createRateLimiter(AGENT_MESSAGE_RATE_LIMIT),
      logger: createLogger('silent'),
      now: () => Date.now() + 61_000,
    });
    expect(await sweep.handBackOverdue()).toBe(1);
    await until(() => sentTo(waId).includes(phrase('handback_timeout', 'nl')));
    expect((await api('GET', `/v1/sessions/${sessionId}`, h.workspace.agent)).body.handled_by).toBe('bot');
    expect(await sweep.handBackOverdue()).toBe(0);
    await api('PUT', '/v1/inbox/settings', h.workspace.owner, { handback_after_minutes: null });
  });

  it('a session that is not there is 404, and take-over of a phone session is 422', async () => {
    expect((await api('POST', `/v1/sessions/${randomUUID()}/takeover`, h.workspace.agent)).status).toBe(404);
    const phone = randomUUID();
    await get().db.insertInto('sessions').values({ id: phone, workspace_id: h.workspace.workspaceId, channel: 'phone', external_id: `CA${phone}`, machine_version: 2, customer_phone: null }).execute();
    for (const path of ['takeover', 'handback', 'close']) {
      const res = await api('POST', `/v1/sessions/${phone}/${path}`, h.workspace.agent);
      expect([path, res.status, res.body.error.code]).toEqual([path, 422, 'phone_session']);
    }
    const message = await api('POST', `/v1/sessions/${phone}/messages`, h.workspace.agent, { text: 'Hello' });
    expect([message.status, message.body.error.code]).toEqual([422, 'phone_session']);
  });
});
