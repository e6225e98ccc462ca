/**
 * The Overview's figures (docs/analytics.md) equal the ones counted here from the conversations themselves, driven
 * through the real channels: the phone through a ConversationRelay client, WhatsApp through signed webhooks and a
 * Graph stand-in, the web chat over HTTP; the integrator answers, says nothing usable (empty, invalid), hands over; the
 * knowledge base, the fallback, a language model and an agent in the inbox answer too.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { phrase } from '../../src/ai/phrases.ts';
import { bucketOf, percentile, type Histogram } from '../../src/analytics/buckets.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { BRIDGE_TOKEN, Caller, NUMBER } from '../helpers/phone-caller.ts';
import { fixture, unixSeconds } from '../channels/whatsapp/fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type ChannelRequestSeen, type Harness } from '../channels/whatsapp/fixtures/harness.ts';

const SHOP = 'https://shop.example';
const SHIPPING = 'We ship every order within two working days.';
const MODEL_ANSWER = 'We can help you with that.';

/** The integrator: orders it answers; shipping it answers with an empty reply; bicycles with a reply that is no text. */
function integratorAnswer(request: ChannelRequestSeen): Record<string, unknown> | undefined {
  if (/order/i.test(request.message) && !/ship/i.test(request.message)) return { reply: 'Your order 1234 leaves today.' };
  if (/ship/i.test(request.message)) return { reply: '' };
  if (/bicycle|tyre/i.test(request.message)) return { reply: 42 };
  return undefined;
}

async function startShop(database: Parameters<typeof startHarness>[0], env: Record<string, string> = {}) {
  const h = await startHarness(database, { answer: integratorAnswer, env: { BRIDGE_TOKEN, ...env } });
  const { owner } = h.workspace;
  expect((await h.service.api('PUT', '/v1/phone', { token: owner, body: { numbers: [NUMBER] } })).status).toBe(200);
  const syncKey = (await h.service.api('POST', '/v1/keys/sync', { token: owner })).body.key as string;
  const page = await h.service.api('PUT', '/v1/sync/pages/shipping', { headers: { 'x-sync-key': syncKey }, body: { title: 'Shipping', language: 'en', body: `${SHIPPING} Shipping is free above 50 euro.` } });
  expect(page.status).toBe(201);
  expect((await h.service.api('PUT', '/v1/webchat', { token: owner, body: { allowed_origins: [SHOP] } })).status).toBe(200);
  const widgetKey = (await h.service.api('GET', '/v1/keys/widget', { token: owner })).body.key as string;
  return { h, widgetKey };
}

interface TurnSeen {
  ordinal: number;
  source: string | null;
  handoff: unknown;
  botlink: { outcome: string; reason: string; latencyMs: number } | null;
  started_at: string;
  ended_at: string;
}

/** What the figures should be, counted from GET /v1/sessions/{id} of every conversation (not from the roll-ups). */
async function countedFromConversations(h: Harness) {
  const list = await h.service.api('GET', '/v1/sessions?limit=100', { token: h.workspace.owner });
  const expected = {
    conversations: 0,
    customer_messages: 0,
    handed_over: 0,
    answered_by: { integrator: 0, knowledge_base: 0, ai: 0, fallback: 0, agent: 0 },
    requests: 0,
    answers: 0,
    no_answer: { timeout: 0, status: 0, invalid: 0, empty: 0, down: 0 } as Record<string, number>,
    endpoint: new Map() as Histogram,
    firstReply: new Map() as Histogram,
  };
  const reasons: Record<string, string> = { timeout: 'timeout', status: 'status', invalid_json: 'invalid', cut_off: 'invalid', invalid_response: 'invalid', empty_reply: 'empty', endpoint_down: 'down', connection: 'down' };
  const add = (h: Histogram, ms: number) => h.set(bucketOf(ms), (h.get(bucketOf(ms)) ?? 0) + 1);
  for (const s of list.body.sessions as { id: string }[]) {
    const detail = (await h.service.api('GET', `/v1/sessions/${s.id}`, { token: h.workspace.owner })).body as { turns: TurnSeen[]; messages: { from: string }[] };
    expected.conversations += 1;
    const agentMessages = detail.messages.filter((m) => m.from === 'agent').length;
    if (detail.turns.some((t) => t.handoff !== null) || agentMessages > 0) expected.handed_over += 1;
    expected.answered_by.agent += agentMessages;
    for (const t of detail.turns) {
      expected.customer_messages += 1;
      if (t.source) expected.answered_by[t.source as keyof typeof expected.answered_by] += 1;
      const reason = t.botlink ? (t.botlink.outcome === 'answer' ? 'answer' : reasons[t.botlink.reason]) : undefined;
      if (reason) {
        expected.requests += 1;
        if (reason === 'answer') expected.answers += 1;
        else expected.no_answer[reason]! += 1;
        if (reason !== 'down') add(expected.endpoint, t.botlink!.latencyMs);
      }
      if (t.ordinal === 1 && t.source) add(expected.firstReply, Date.parse(t.ended_at) - Date.parse(t.started_at));
    }
  }
  return expected;
}

let customers = 0;
let calls = 0;
// A period that ends now, as an API client writes it: it includes the current hour (docs/analytics.md, "Periods").
const window = () => `from=${new Date(Date.now() - 86_400_000).toISOString()}&to=${new Date().toISOString()}`;

async function write(target: Harness, waId: string, body: string): Promise<string> {
  const bodies = () => target.sends().filter((s) => s.body.to === waId).map((s) => (s.body.text as { body: string }).body);
  const before = bodies().length;
  await target.post(fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(), BODY: body }));
  await until(() => bodies().length > before);
  return bodies().at(-1)!;
}


describeEachDatabase('the Overview counts what happened on every channel', (get) => {
  let h: Harness;
  let widgetKey: string;
  const callers: Caller[] = [];

  beforeAll(async () => {
    ({ h, widgetKey } = await startShop(get()));
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });
  afterEach(() => {
    for (const c of callers.splice(0)) c.ws.terminate();
  });

  async function ask(target: Harness, words: string): Promise<string> {
    const caller = await Caller.connect(target.service);
    callers.push(caller);
    caller.setup(`CA-overview-${Date.now()}-${calls++}`);
    caller.say(words);
    return (await caller.answer()).token as string;
  }

  async function chat(message: string) {
    const res = await h.service.api('POST', '/v1/webchat/conversations', { headers: { 'x-widget-key': widgetKey, origin: SHOP }, body: { visitor_message: message, page_url: `${SHOP}/` } });
    expect(res.status).toBe(201);
    return res.body as { conversation_id: string; visitor_token: string; reply: string };
  }

  it('conversations on the phone, WhatsApp and the web chat, answered by every source, with handovers and an agent', async () => {
    const waA = `3162200${String(++customers).padStart(4, '0')}`;
    expect(await write(h, waA, 'Where is my order?')).toBe('Your order 1234 leaves today.');
    expect(await write(h, waA, 'How fast is shipping?')).toContain(SHIPPING);
    expect(await write(h, waA, 'Do you repair bicycles?')).toBe(phrase('dont_know', 'en'));
    const waB = `3162200${String(++customers).padStart(4, '0')}`;
    await write(h, waB, 'Can you fix a flat tyre?');
    await write(h, waB, 'please pass this on to the team');
    expect(await ask(h, 'Where is my order?')).toBe('Your order 1234 leaves today.');
    expect(await ask(h, 'Do you repair bicycles?')).toBe(phrase('dont_know', 'en'));
    const shipping = await chat('How fast is shipping?');
    expect(shipping.reply).toContain(SHIPPING);
    const bikes = await chat('Do you repair bicycles?');
    expect(bikes.reply).toBe(phrase('dont_know', 'en'));
    const escalated = await h.service.api('POST', `/v1/webchat/conversations/${bikes.conversation_id}/escalate`, { headers: { 'x-widget-key': widgetKey, origin: SHOP, 'x-visitor-token': bikes.visitor_token }, body: {} });
    expect(escalated.status).toBeLessThan(300);
    // An agent takes WhatsApp customer A's conversation and writes to them.
    const sessions = (await h.service.api('GET', '/v1/sessions?channel=whatsapp', { token: h.workspace.owner })).body.sessions as { id: string; session_id: string }[];
    const a = sessions.find((s) => s.session_id.includes(waA)) ?? sessions.at(-1)!;
    expect((await h.service.api('POST', `/v1/sessions/${a.id}/takeover`, { token: h.workspace.agent })).status).toBe(200);
    expect((await h.service.api('POST', `/v1/sessions/${a.id}/messages`, { token: h.workspace.agent, body: { text: 'Hi, Sam here from the team.' } })).status).toBe(201);

    const expected = await countedFromConversations(h);
    const res = await h.service.api('GET', `/v1/analytics/overview?${window()}`, { token: h.workspace.owner });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      conversations: expected.conversations,
      customer_messages: expected.customer_messages,
      handed_over: expected.handed_over,
      contained: expected.conversations - expected.handed_over,
      answered_by: expected.answered_by,
      integrator: { requests: expected.requests, answers: expected.answers, no_answer: expected.no_answer },
    });
    expect(res.body.first_reply_ms).toEqual({ p50: percentile(expected.firstReply, 0.5), p95: percentile(expected.firstReply, 0.95) });
    expect(res.body.integrator.latency_ms).toEqual({ p50: percentile(expected.endpoint, 0.5), p95: percentile(expected.endpoint, 0.95) });
    // What the script itself guarantees, so the comparison above cannot pass on two empty countings.
    expect(expected.conversations).toBe(6);
    expect(expected.answered_by).toMatchObject({ agent: 1 });
    expect(expected.answered_by.integrator).toBeGreaterThanOrEqual(3);
    expect(expected.answered_by.knowledge_base).toBeGreaterThanOrEqual(2);
    expect(expected.answered_by.fallback).toBeGreaterThanOrEqual(3);
    // The integrator asked on the phone and WhatsApp (7 messages), answering 3; the others came back empty.
    expect(expected.requests).toBe(7);
    expect(expected.answers).toBe(3);
    expect(expected.no_answer.empty).toBe(4);
    expect(expected.handed_over).toBeGreaterThanOrEqual(3);

    // One channel alone, and the time series adding up to the same.
    const phone = await h.service.api('GET', `/v1/analytics/overview?${window()}&channel=phone`, { token: h.workspace.owner });
    expect(phone.body).toMatchObject({ conversations: 2, customer_messages: 2, answered_by: { integrator: 1, fallback: 1 } });
    const series = await h.service.api('GET', `/v1/analytics/timeseries?${window()}&bucket=hour`, { token: h.workspace.agent });
    expect(series.status).toBe(200);
    const buckets = series.body.buckets as { conversations: number; customer_messages: number; conversations_by_channel: Record<string, number> }[];
    expect(buckets).toHaveLength(25);
    expect(buckets.reduce((n, b) => n + b.conversations, 0)).toBe(expected.conversations);
    expect(buckets.reduce((n, b) => n + b.customer_messages, 0)).toBe(expected.customer_messages);
    expect(buckets.reduce((n, b) => n + (b.conversations_by_channel.webchat ?? 0), 0)).toBe(2);

    // The questions the bot could not answer: the bicycles (fallback on three channels), the tyre, and the message
    // handed over at the integrator's word.
    const unanswered = await h.service.api('GET', `/v1/analytics/unanswered?${window()}`, { token: h.workspace.owner });
    const questions = unanswered.body.questions as { text: string; count: number; session_ids: string[] }[];
    expect(questions[0]).toMatchObject({ text: 'Do you repair bicycles?', count: 3 });
    expect(questions[0]!.session_ids).toHaveLength(3);
    expect(questions.map((q) => q.text)).toEqual(expect.arrayContaining(['Can you fix a flat tyre?', 'please pass this on to the team']));
  }, 120_000);
});

describeEachDatabase('the Overview counts answers by a language model', (get) => {
  let llm: TestHttpsServer;
  let withModel: Harness;
  beforeAll(async () => {
    llm = await startHttpsServer((_req, res: ServerResponse, body) => {
      if ((JSON.parse(body.toString()) as { stream?: boolean }).stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: MODEL_ANSWER } }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
        return void res.end('data: [DONE]\n\n');
      }
      sendJson(res, 200, { id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: MODEL_ANSWER }, finish_reason: 'stop' }] });
    });
    ({ h: withModel } = await startShop(get(), { LLM_BASE_URL: `${llm.origin}/v1`, LLM_MODEL: 'test-model' }));
  }, 60_000);
  afterAll(async () => {
    await withModel?.close();
    await llm?.close();
  });


  it('answers by a language model are counted as the AI', async () => {
    const wa = `3162300${String(++customers).padStart(4, '0')}`;
    expect(await write(withModel, wa, 'Do you repair bicycles?')).toBe(MODEL_ANSWER);
    expect(await write(withModel, wa, 'Where is my order?')).toBe('Your order 1234 leaves today.');
    const expected = await countedFromConversations(withModel);
    const res = await withModel.service.api('GET', `/v1/analytics/overview?${window()}`, { token: withModel.workspace.admin });
    expect(res.body).toMatchObject({ conversations: 1, customer_messages: 2, answered_by: expected.answered_by });
    expect(res.body.answered_by).toMatchObject({ ai: 1, integrator: 1 });
  }, 60_000);
});

