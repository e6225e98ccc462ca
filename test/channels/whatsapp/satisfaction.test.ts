/**
 * The satisfaction question on WhatsApp (docs/whatsapp.md, "The satisfaction question"): a colleague's close inside
 * Meta's 24-hour window sends one interactive message with three reply buttons in the customer's language, once with
 * two engines; the customer's tap (Meta's `interactive` `button_reply` webhook) is the session's answer, shown on the
 * conversation and counted in the Overview, and starts nothing: no integrator request, no model request, no Graph
 * reply, the conversation not reopened. A second tap, or a tap on a button we never sent, is stored and answered with
 * nothing. Outside the window no question is put. Two engines on one database, real Graph, integrator and model
 * stand-ins on loopback HTTPS.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phrase } from '../../../src/ai/phrases.ts';
import { describeEachDatabase } from '../../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../../helpers/https-server.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';
import { fixture, unixSeconds } from './fixtures/meta.ts';
import { APP_SECRET, MASTER_KEY, PHONE_NUMBER_ID, startHarness, TEST_WORKER, until, VERIFY_TOKEN, wamid, type Harness } from './fixtures/harness.ts';

const DAMAGED = 'Mijn pakket is beschadigd aangekomen, damaged';

interface Interactive {
  type: string;
  body: { text: string };
  action: { buttons: { type: string; reply: { id: string; title: string } }[] };
}

describeEachDatabase('the satisfaction question on WhatsApp', (get) => {
  let h: Harness;
  let second: TestService;
  let llm: TestHttpsServer;
  let customers = 0;
  const newCustomer = () => `3163000${String(++customers).padStart(4, '0')}`;
  const api = (method: string, path: string, token: string, body?: unknown) => h.service.api(method, path, { token, ...(body === undefined ? {} : { body }) });
  const sendsTo = (waId: string) => h.sends().filter((s) => s.body.to === waId);
  const textsTo = (waId: string) => sendsTo(waId).filter((s) => s.body.type === 'text').map((s) => (s.body.text as { body: string }).body);
  const questionsTo = (waId: string) => sendsTo(waId).filter((s) => s.body.type === 'interactive').map((s) => s.body.interactive as Interactive);
  const idle = () => Promise.all([h.service.whatsapp.worker.idle(), second.whatsapp.worker.idle()]);
  const db = () => get().db;

  async function write(waId: string, text: string, at = new Date()): Promise<void> {
    const res = await h.post(fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(at), BODY: text }));
    expect(res.status).toBe(200);
  }
  /** The customer taps a reply button (on the engine given); resolves with the stored message once it was handled. */
  async function tap(waId: string, replyId: string, title: string, service: TestService) {
    const id = wamid();
    const body = fixture('button-reply-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: id, TIMESTAMP: unixSeconds(), CONTEXT_ID: 'wamid.OUT000001', REPLY_ID: replyId, TITLE: title });
    expect((await h.post(body, undefined, service)).status).toBe(200);
    const row = await until(() =>
      db().selectFrom('whatsapp_inbound_messages').select(['type', 'text', 'reply_id', 'state', 'outcome', 'session_external_id']).where('message_id', '=', id).where('state', '=', 'done').executeTakeFirst(),
    );
    await idle();
    return row;
  }
  async function sessionOf(waId: string): Promise<{ id: string; external_id: string }> {
    const conversation = await until(() => db().selectFrom('whatsapp_conversations').select('external_id').where('wa_id', '=', waId).executeTakeFirst());
    return until(() => db().selectFrom('sessions').select(['id', 'external_id']).where('external_id', '=', conversation.external_id).executeTakeFirst());
  }
  /** A conversation a colleague took over (the integrator handed it to a person). */
  async function takenConversation(waId: string, at = new Date()) {
    await write(waId, DAMAGED, at);
    await until(() => textsTo(waId).length > 0);
    const session = await sessionOf(waId);
    await until(async () => (await api('GET', `/v1/sessions/${session.id}`, h.workspace.agent)).body.handled_by === 'waiting');
    expect((await api('POST', `/v1/sessions/${session.id}/takeover`, h.workspace.agent)).status).toBe(200);
    return session;
  }
  /** What a tap must not change: the turns, the session's state, the conversation, and every outside request. */
  async function untouched(sessionId: string, waId: string) {
    const session = await db().selectFrom('sessions').select(['status', 'handled_by', 'turn_count', 'external_id']).where('id', '=', sessionId).executeTakeFirstOrThrow();
    const conversation = await db().selectFrom('whatsapp_conversations').select(['external_id', 'last_message_at']).where('wa_id', '=', waId).executeTakeFirstOrThrow();
    const messages = await db().selectFrom('session_messages').select('id').where('session_id', '=', sessionId).execute();
    return { session, conversation: { ...conversation, last_message_at: new Date(conversation.last_message_at).toISOString() }, messages: messages.length, sends: h.sends().length, integrator: h.channelRequests().length, model: llm.requests.length };
  }

  beforeAll(async () => {
    llm = await startHttpsServer((_req, res) =>
      sendJson(res, 200, { id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Answer from the model.' }, finish_reason: 'stop' }] }),
    );
    const env = { LLM_BASE_URL: `${llm.origin}/v1`, LLM_MODEL: 'test-model' };
    // The integrator hands a damaged parcel to a person and answers nothing else: the model answers the rest.
    h = await startHarness(get(), { answer: (r) => (r.message.includes('damaged') ? { reply: 'Sorry to hear that.', handoff: 'human' } : { reply: '' }), env });
    second = await startTestService(
      get(),
      { WHATSAPP_APP_SECRET: APP_SECRET, WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN, WHATSAPP_GRAPH_URL: `${h.graph.origin}/v21.0`, OUTBOUND_ALLOW: '127.0.0.1/32', MASTER_KEY, ...env },
      { whatsapp: { worker: TEST_WORKER } },
    );
  });
  afterAll(async () => {
    await second.stop();
    await h.close();
    await llm.close();
  });

  describe('asked after a close, answered with a tap', () => {
    const waId = newCustomer();
    let sessionId = '';

    it("a close inside the 24-hour window sends one message with three reply buttons in the customer's language, once with two engines", async () => {
      const from = new Date(Date.now() - 3_600_000).toISOString();
      const session = await takenConversation(waId);
      sessionId = session.id;
      expect((await api('POST', `/v1/sessions/${sessionId}/close`, h.workspace.agent)).status).toBe(200);
      await until(() => questionsTo(waId).length > 0);
      await idle();
      expect(questionsTo(waId)).toEqual([
        {
          type: 'button',
          body: { text: phrase('survey_question', 'nl') },
          action: {
            buttons: [
              { type: 'reply', reply: { id: `satisfaction:${sessionId}:5`, title: phrase('survey_good', 'nl') } },
              { type: 'reply', reply: { id: `satisfaction:${sessionId}:3`, title: phrase('survey_ok', 'nl') } },
              { type: 'reply', reply: { id: `satisfaction:${sessionId}:1`, title: phrase('survey_bad', 'nl') } },
            ],
          },
        },
      ]);
      expect(sendsTo(waId).find((s) => s.body.type === 'interactive')!.body).toMatchObject({ messaging_product: 'whatsapp', to: waId });
      // The closing line went out as text; the question is on the conversation as the bot's message, not answered yet.
      expect(textsTo(waId)).toContain(phrase('agent_closed', 'nl').replace('{name}', 'Agent'));
      const detail = await api('GET', `/v1/sessions/${sessionId}`, h.workspace.agent);
      expect((detail.body.messages as Array<{ from: string; text: string }>).at(-1)).toMatchObject({ from: 'bot', text: phrase('survey_question', 'nl') });
      expect(detail.body.satisfaction).toBeNull();
      const overview = await api('GET', `/v1/analytics/overview?from=${encodeURIComponent(from)}&channel=whatsapp`, h.workspace.owner);
      expect(overview.body.satisfaction).toEqual({ responses: 0, average: null });
    });

    it('a tap is the answer, on the conversation and in the Overview, and starts no turn: no integrator or model request, no reply, not reopened', async () => {
      const from = new Date(Date.now() - 3_600_000).toISOString();
      const before = await untouched(sessionId, waId);
      // Meta delivers the tap to the other engine.
      const stored = await tap(waId, `satisfaction:${sessionId}:3`, phrase('survey_ok', 'nl'), second);
      expect(stored).toMatchObject({ type: 'interactive', text: phrase('survey_ok', 'nl'), reply_id: `satisfaction:${sessionId}:3`, outcome: 'satisfaction', session_external_id: before.session.external_id });
      const detail = await api('GET', `/v1/sessions/${sessionId}`, h.workspace.agent);
      expect(detail.body.satisfaction).toEqual({ score: 3, at: expect.any(String) });
      expect(await untouched(sessionId, waId)).toEqual(before);
      const overview = await api('GET', `/v1/analytics/overview?from=${encodeURIComponent(from)}&channel=whatsapp`, h.workspace.owner);
      expect(overview.body.satisfaction).toEqual({ responses: 1, average: 3 });
    });

    it('a second tap is stored as received and answered with nothing; the first answer stays', async () => {
      const before = await untouched(sessionId, waId);
      const stored = await tap(waId, `satisfaction:${sessionId}:1`, phrase('survey_bad', 'nl'), h.service);
      expect(stored).toMatchObject({ type: 'interactive', reply_id: `satisfaction:${sessionId}:1`, state: 'done', outcome: 'button_reply' });
      expect((await api('GET', `/v1/sessions/${sessionId}`, h.workspace.agent)).body.satisfaction).toMatchObject({ score: 3 });
      expect(await untouched(sessionId, waId)).toEqual(before);
    });

    it("a tap on a button we never asked with (none, another customer's question, another app's) is stored and answered with nothing", async () => {
      const stranger = newCustomer();
      await write(stranger, 'Do you ship to Belgium?');
      await until(() => textsTo(stranger).includes('Answer from the model.'));
      const strangerSession = await sessionOf(stranger);
      await idle();
      const before = { sends: h.sends().length, integrator: h.channelRequests().length, model: llm.requests.length };
      const unknown = randomUUID();
      for (const [replyId, title] of [[`satisfaction:${unknown}:5`, 'Good'], [`satisfaction:${sessionId}:5`, 'Good'], ['order-1001-confirm', 'Yes, confirm'], [`satisfaction:${strangerSession.id}:9`, 'Good']] as const) {
        const stored = await tap(stranger, replyId, title, h.service);
        expect([replyId, stored.state, stored.outcome]).toEqual([replyId, 'done', 'button_reply']);
      }
      // Not even the "I can only read text" notice; no turn; nobody's answer written.
      expect({ sends: h.sends().length, integrator: h.channelRequests().length, model: llm.requests.length }).toEqual(before);
      expect((await api('GET', `/v1/sessions/${sessionId}`, h.workspace.agent)).body.satisfaction).toMatchObject({ score: 3 });
      expect(await db().selectFrom('session_satisfaction').select('session_id').where('session_id', 'in', [unknown, strangerSession.id]).execute()).toEqual([]);
      expect((await api('GET', `/v1/sessions/${strangerSession.id}`, h.workspace.agent)).body.turns).toHaveLength(1);
    });
  });

  it("outside the 24-hour window a close puts no question: the customer's last message is older", async () => {
    const waId = newCustomer();
    const session = await takenConversation(waId, new Date(Date.now() - 25 * 3_600_000));
    expect((await api('POST', `/v1/sessions/${session.id}/close`, h.workspace.agent)).status).toBe(200);
    await idle();
    expect(questionsTo(waId)).toEqual([]);
    expect(await db().selectFrom('whatsapp_outbound_messages').select('id').where('wa_id', '=', waId).where('kind', '=', 'survey').execute()).toEqual([]);
    expect(await db().selectFrom('session_satisfaction').select('session_id').where('session_id', '=', session.id).execute()).toEqual([]);
    expect((await api('GET', `/v1/sessions/${session.id}`, h.workspace.agent)).body.satisfaction).toBeNull();
  });
});
