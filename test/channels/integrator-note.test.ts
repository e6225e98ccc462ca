/**
 * An integrator's `handled: false` reply is a note for the language model, never an answer for the customer
 * (protocol §1.3; docs/architecture.md, "Decisions worth knowing"). Every channel end to end: the phone through a
 * real ConversationRelay client, WhatsApp through signed webhooks and a Graph stand-in, the web chat over HTTP; the
 * integrator and the language model are real HTTPS servers on loopback.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { phrase } from '../../src/ai/phrases.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { BRIDGE_TOKEN, Caller, NUMBER } from '../helpers/phone-caller.ts';
import { fixture, unixSeconds } from './whatsapp/fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from './whatsapp/fixtures/harness.ts';

/** The integrator's note: what a newcomer once saw sent to a WhatsApp customer as the answer. */
const NOTE = 'Internal: no order number given, so the caller did not ask about an order.';
const SHOP = 'https://shop.example';
const SHIPPING = 'We ship every order within two working days.';
/** What the scripted model answers, every time. */
const MODEL_ANSWER = 'We can help you with that.';

interface ChatRequest {
  stream?: boolean;
  messages: { role: string; content: string | null }[];
}

/** A service with phone, WhatsApp and web chat, whose integrator answers every message with the note, handled false. */
async function startShop(database: Parameters<typeof startHarness>[0], env: Record<string, string> = {}): Promise<{ h: Harness; widgetKey: string }> {
  const h = await startHarness(database, { answer: () => ({ reply: NOTE, handled: false }), env: { BRIDGE_TOKEN, ...env } });
  const { owner } = h.workspace;
  const phone = await h.service.api('PUT', '/v1/phone', { token: owner, body: { numbers: [NUMBER] } });
  if (phone.status !== 200) throw new Error(`PUT /v1/phone failed: ${phone.text}`);
  const syncKey = (await h.service.api('POST', '/v1/keys/sync', { token: owner })).body.key as string;
  const page = await h.service.api('PUT', '/v1/sync/pages/shipping', { headers: { 'x-sync-key': syncKey }, body: { title: 'Shipping', language: 'en', body: `${SHIPPING} Shipping is free above 50 euro.` } });
  if (page.status !== 201) throw new Error(`seeding the page failed: ${page.text}`);
  const origins = await h.service.api('PUT', '/v1/webchat', { token: owner, body: { allowed_origins: [SHOP] } });
  if (origins.status !== 200) throw new Error(`PUT /v1/webchat failed: ${origins.text}`);
  const widgetKey = (await h.service.api('GET', '/v1/keys/widget', { token: owner })).body.key as string;
  return { h, widgetKey };
}

/** Talking to a harness on each channel as its customers do; callers are hung up after each test. */
function channelHelpers() {
  const callers: Caller[] = [];
  afterEach(() => {
    for (const c of callers.splice(0)) c.ws.terminate();
  });

  /** A WhatsApp message from `waId` and the reply that was sent to them. */
  async function write(h: Harness, waId: string, body: string): Promise<string> {
    const bodies = () => h.sends().filter((s) => s.body.to === waId).map((s) => (s.body.text as { body: string }).body);
    const before = bodies().length;
    await h.post(fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(), BODY: body }));
    await until(() => bodies().length > before);
    return bodies().at(-1)!;
  }

  /** A phone call that asks `words`; the answer the caller hears (the filler skipped). */
  async function ask(h: Harness, words: string): Promise<string> {
    const caller = await Caller.connect(h.service);
    callers.push(caller);
    caller.setup(`CA-note-${Date.now()}-${calls++}`);
    caller.say(words);
    return (await caller.answer()).token as string;
  }

  /** The channel requests the integrator received (the phone's manifest GETs left out). */
  const channelRequests = (h: Harness) =>
    h.integrator.requests.filter((r) => r.method === 'POST').map((r) => JSON.parse(r.body.toString('utf8')) as { channel: string; message: string });
  const integratorGot = (h: Harness, channel: string, message: string) => channelRequests(h).some((r) => r.channel === channel && r.message === message);

  return { write, ask, channelRequests, integratorGot };
}

let customers = 0;
let calls = 0;

describeEachDatabase("the integrator's handled-false note is never sent to a customer", (get) => {
  const { write, ask, channelRequests, integratorGot } = channelHelpers();

  describe('without a language model (the embedded answerer, the default)', () => {
    let h: Harness;
    let widgetKey: string;
    beforeAll(async () => {
      ({ h, widgetKey } = await startShop(get()));
    });
    afterAll(async () => {
      await h.close();
    });

    it('WhatsApp: the knowledge-base answer or the fallback is sent, never the note (message after message)', async () => {
      const waId = `3161100${String(++customers).padStart(4, '0')}`;
      expect(await write(h, waId, 'Do you repair bicycles?')).toBe(phrase('dont_know', 'en'));
      expect(await write(h, waId, 'Can you fix a flat tyre?')).toBe(phrase('dont_know', 'en'));
      const shipping = await write(h, waId, 'How fast do you ship my order?');
      expect(shipping).toContain(SHIPPING);
      expect(shipping).not.toContain(NOTE);
      // The integrator was asked each time and answered with the note: the note was there to leak.
      expect(integratorGot(h, 'whatsapp', 'Do you repair bicycles?') && integratorGot(h, 'whatsapp', 'How fast do you ship my order?')).toBe(true);
      expect(h.sends().some((s) => JSON.stringify(s.body).includes('did not ask about an order'))).toBe(false);
    });

    it('phone: the caller hears the fallback or the knowledge-base answer, never the note', async () => {
      expect(await ask(h, 'Do you repair bicycles?')).toBe(phrase('dont_know', 'en'));
      const shipping = await ask(h, 'How fast do you ship my order?');
      expect(shipping).toContain(SHIPPING);
      expect(shipping).not.toContain('did not ask about an order');
      expect(integratorGot(h, 'phone', 'Do you repair bicycles?') && integratorGot(h, 'phone', 'How fast do you ship my order?')).toBe(true);
    });

    it('web chat: the visitor gets the knowledge base only; the integrator is never asked, so no note can reach them', async () => {
      const res = await h.service.api('POST', '/v1/webchat/conversations', {
        headers: { 'x-widget-key': widgetKey, origin: SHOP },
        body: { visitor_message: 'Do you repair bicycles?', page_url: `${SHOP}/bikes` },
      });
      expect(res.status).toBe(201);
      expect(res.body.reply).toBe(phrase('dont_know', 'en'));
      expect(channelRequests(h).filter((r) => r.channel === 'webchat')).toEqual([]);
    });

    it("the dashboard's test button (channel webchat) shows the note to the owner, who is not a customer", async () => {
      const res = await h.service.api('POST', '/v1/integration/test', { token: h.workspace.owner, body: { message: 'Do you repair bicycles?' } });
      expect(res.body).toMatchObject({ outcome: 'answer', response: { reply: NOTE, handled: false } });
      expect(channelRequests(h).filter((r) => r.channel === 'webchat')).toHaveLength(1);
    });
  });
});

describeEachDatabase("the integrator's handled-false note is context for the language model", (get) => {
  const { write, ask } = channelHelpers();

  describe("with a language model: the note reaches the model, the customer gets the model's answer", () => {
    let h: Harness;
    let llm: TestHttpsServer;
    const completions = () => llm.requests.map((r) => JSON.parse(r.body.toString()) as ChatRequest);
    /** The completion request the model got for `message`, and whether the note was in it. */
    const noteSentWith = (message: string) =>
      completions().some((c) => c.messages.at(-1)?.content === message && c.messages.some((m) => m.role === 'system' && m.content?.includes(NOTE) === true));

    beforeAll(async () => {
      llm = await startHttpsServer((_req, res: ServerResponse, body) => {
        if ((JSON.parse(body.toString()) as ChatRequest).stream === true) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: MODEL_ANSWER } }] })}\n\n`);
          res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
          return void res.end('data: [DONE]\n\n');
        }
        sendJson(res, 200, { id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: MODEL_ANSWER }, finish_reason: 'stop' }] });
      });
      ({ h } = await startShop(get(), { LLM_BASE_URL: `${llm.origin}/v1`, LLM_MODEL: 'test-model' }));
    });
    afterAll(async () => {
      await h.close();
      await llm.close();
    });

    it('WhatsApp: the completion request carries the note; the model\'s answer is sent', async () => {
      const waId = `3161200${String(++customers).padStart(4, '0')}`;
      expect(await write(h, waId, 'Do you repair bicycles?')).toBe(MODEL_ANSWER);
      expect(noteSentWith('Do you repair bicycles?')).toBe(true);
    });

    it('phone: the completion request carries the note; the caller hears the model\'s answer', async () => {
      expect((await ask(h, 'Can you fix a flat tyre?')).trim()).toBe(MODEL_ANSWER);
      expect(noteSentWith('Can you fix a flat tyre?')).toBe(true);
    });
  });
});
