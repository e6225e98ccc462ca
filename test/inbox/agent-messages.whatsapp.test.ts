/**
 * An agent's messages on WhatsApp are a budget per agent and conversation, and a failed one is sent again only by the
 * conversation's holder or an owner or admin (docs/architecture.md, "Who handles a conversation"). Real service, real
 * Graph and integrator stand-ins on loopback HTTPS; the budget's clock is the test's, so nothing sleeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_MESSAGE_RATE_LIMIT } from '../../src/inbox/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson } from '../helpers/https-server.ts';
import { addUserWithToken } from '../helpers/service.ts';
import { fixture, unixSeconds } from '../channels/whatsapp/fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from '../channels/whatsapp/fixtures/harness.ts';

const { burst } = AGENT_MESSAGE_RATE_LIMIT;
const SLOW_DOWN = 'You are sending messages faster than we can deliver them; wait a moment.';

describeEachDatabase("an agent's messages on WhatsApp", (get) => {
  let h: Harness;
  let clock = 0;
  let customers = 0;
  let colleague = '';
  const newCustomer = () => `3163000${String(++customers).padStart(4, '0')}`;
  const api = (method: string, path: string, token: string, body?: unknown) => h.service.api(method, path, { token, ...(body === undefined ? {} : { body }) });
  const sentTo = (waId: string) => h.sends().filter((s) => s.body.to === waId).map((s) => (s.body.text as { body: string }).body);

  /** A customer who asked for a person, and the conversation taken over by the workspace's agent. */
  async function heldConversation(): Promise<{ waId: string; sessionId: string }> {
    const waId = newCustomer();
    const res = await h.post(fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(new Date()), BODY: 'My parcel arrived damaged' }));
    expect(res.status).toBe(200);
    // The bot's own sentence went out first: what the Graph stand-in answers from here on is the agent's.
    await until(() => sentTo(waId).length > 0);
    const conversation = await until(() => get().db.selectFrom('whatsapp_conversations').select('external_id').where('wa_id', '=', waId).executeTakeFirst());
    const row = await until(() => get().db.selectFrom('sessions').select('id').where('external_id', '=', conversation.external_id).executeTakeFirst());
    await h.service.whatsapp.worker.idle();
    const sentBefore = sentTo(waId).length;
    expect((await api('POST', `/v1/sessions/${row.id}/takeover`, h.workspace.agent)).status).toBe(200);
    // The line that a colleague joined goes out first: a Graph answer scripted from here on is the agent's.
    await until(() => sentTo(waId).length > sentBefore);
    return { waId, sessionId: row.id };
  }

  beforeAll(async () => {
    h = await startHarness(get(), {
      answer: (r) => (r.message.includes('damaged') ? { reply: 'Sorry to hear that.', handoff: 'human' } : undefined),
      service: { rateLimits: { agentMessages: { now: () => clock } } },
    });
    colleague = (await addUserWithToken(h.service, h.workspace.owner, 'colleague@acme.example', 'agent')).token;
  });
  afterAll(async () => {
    await h?.close();
  });

  describe('are a budget per agent and conversation', () => {
    it(`25 quick replies: ${burst} are sent through the Graph API, the rest are 429 with a clear sentence and Retry-After`, async () => {
      const { waId, sessionId } = await heldConversation();
      const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => api('POST', `/v1/sessions/${sessionId}/messages`, h.workspace.agent, { text: `Reply ${i}` })));
      const stored = answers.filter((a) => a.status === 201);
      const refused = answers.filter((a) => a.status === 429);
      expect([stored.length, refused.length]).toEqual([burst, 25 - burst]);
      for (const r of refused) {
        expect(r.body.error).toEqual({ code: 'rate_limited', message: SLOW_DOWN, details: { retry_after: 1 } });
        expect(r.headers.get('retry-after')).toBe('1');
      }
      // The agent's replies only (the line that a colleague joined is sent too, as the take-over's own message).
      const replies = () => sentTo(waId).filter((t) => t.startsWith('Reply ')).length;
      await until(() => replies() >= burst);
      await h.service.whatsapp.worker.idle();
      expect(replies()).toBe(burst);
      // Refused whole: nothing of the refused replies was stored to be sent later.
      const kept = await get().db.selectFrom('session_messages').select('text').where('session_id', '=', sessionId).where('from', '=', 'agent').execute();
      expect(kept).toHaveLength(burst);

      // A second later there is room for one more, and no more.
      clock += AGENT_MESSAGE_RATE_LIMIT.windowMs / burst;
      const next = [await api('POST', `/v1/sessions/${sessionId}/messages`, h.workspace.agent, { text: 'One more' }), await api('POST', `/v1/sessions/${sessionId}/messages`, h.workspace.agent, { text: 'And another' })];
      expect(next.map((r) => r.status)).toEqual([201, 429]);
    });

    it("one conversation's budget spent leaves the agent's other conversations theirs", async () => {
      const { sessionId } = await heldConversation();
      expect((await api('POST', `/v1/sessions/${sessionId}/messages`, h.workspace.agent, { text: 'Hello' })).status).toBe(201);
    });
  });

  describe('a failed one is sent again by the holder, or an owner or admin', () => {
    const undeliverable = () => h.graphScript.push((_req, res) => sendJson(res, 400, { error: { message: '(#131026) Message undeliverable', type: 'OAuthException', code: 131026 } }));
    const statusOf = async (sessionId: string, id: string) => ((await api('GET', `/v1/sessions/${sessionId}`, h.workspace.owner)).body.messages as Array<{ id: string; status?: string }>).find((m) => m.id === id)?.status;
    let waId = '';
    let sessionId = '';
    let messageId = '';

    beforeAll(async () => {
      ({ waId, sessionId } = await heldConversation());
      undeliverable();
      const sent = await api('POST', `/v1/sessions/${sessionId}/messages`, h.workspace.agent, { text: 'We will call you.' });
      expect(sent.status).toBe(201);
      messageId = sent.body.message.id as string;
      await until(async () => (await statusOf(sessionId, messageId)) === 'failed');
    });

    it('another agent is refused with 409 not_holder, and nothing is sent', async () => {
      const sends = h.sends().length;
      const res = await api('POST', `/v1/sessions/${sessionId}/messages/${messageId}/retry`, colleague);
      expect([res.status, res.body.error.code]).toEqual([409, 'not_holder']);
      await h.service.whatsapp.worker.idle();
      expect(h.sends().length).toBe(sends);
      expect(await statusOf(sessionId, messageId)).toBe('failed');
    });

    it('the holder sends it again', async () => {
      undeliverable();
      const res = await api('POST', `/v1/sessions/${sessionId}/messages/${messageId}/retry`, h.workspace.agent);
      expect([res.status, res.body.message]).toEqual([200, { id: messageId, status: 'queued' }]);
      await until(() => sentTo(waId).filter((t) => t === 'We will call you.').length === 2);
      await until(async () => (await statusOf(sessionId, messageId)) === 'failed');
    });

    it('an owner sends it again for the holder', async () => {
      const res = await api('POST', `/v1/sessions/${sessionId}/messages/${messageId}/retry`, h.workspace.owner);
      expect([res.status, res.body.message.status]).toEqual([200, 'queued']);
      await until(async () => (await statusOf(sessionId, messageId)) === 'sent');
      expect(sentTo(waId).filter((t) => t === 'We will call you.')).toHaveLength(3);
    });
  });
});
