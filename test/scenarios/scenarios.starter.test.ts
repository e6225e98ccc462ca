/**
 * A starter suite (docs/scenarios.md, "A starter suite"): POST /v1/scenarios/starter asks the workspace's model (a
 * scripted OpenAI-compatible server on loopback HTTPS) for web chat scenarios from the workspace's passages and its
 * customers' unanswered questions (seeded through the real web chat), checks each draft as the API checks a scenario,
 * leaves out and counts the ones that are not right, and saves nothing. The drafts kept save and pass as they are.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { phrase } from '../../src/ai/phrases.ts';
import { acceptsOffer } from '../../src/text/person-request.ts';
import { OFFER_ACCEPTED } from '../../src/scenarios/starter-suite.ts';
import { MAX_STARTER_SCENARIOS } from '../../src/scenarios/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';
import { play, saveScenario } from './helpers.ts';

interface ChatRequest {
  messages: { role: string; content: string }[];
}

const SHOP = 'https://shop.example';
const SHIPPING = 'We ship every order within two working days. Shipping is free above 50 euro.';
const RETURNS = 'You can return any item within 30 days of delivery.';
const GIFT_CARDS = 'Do you sell gift cards?';
const PAYPAL = 'Can I pay with PayPal?';
const STARTER_TIMEOUT_MS = 1_500;

const isStarter = (r: ChatRequest) => r.messages[0]?.content.startsWith('You write test scenarios') === true;
const answer = (content: string) => ({ choices: [{ message: { role: 'assistant', content } }] });
const drafts = (...scenarios: unknown[]) => JSON.stringify({ scenarios });
const shipping = { name: 'How fast we ship', language: 'en', customer: 'How fast do you ship?', kind: 'answer', contains: ['two working days'] };
const giftCards = { name: 'Gift cards', language: 'en', customer: GIFT_CARDS, kind: 'handoff' };

describeEachDatabase('a starter suite', (get) => {
  let llm: TestHttpsServer;
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let starter: () => { status?: number; content?: string; body?: unknown; delayMs?: number };
  const starterRequests = () => llm.requests.map((r) => JSON.parse(r.body.toString()) as ChatRequest).filter(isStarter);
  const suggest = (token: string) => service.api('POST', '/v1/scenarios/starter', { token });

  beforeAll(async () => {
    llm = await startHttpsServer(async (_req, res, body) => {
      const request = JSON.parse(body.toString()) as ChatRequest;
      if (isStarter(request)) {
        const scripted = starter();
        if (scripted.delayMs) await sleep(scripted.delayMs);
        return sendJson(res, scripted.status ?? 200, scripted.body ?? answer(scripted.content ?? ''));
      }
      // The bot's own AI answers shipping from the page; it fails on what the pages do not cover, so that the bot
      // answers with its fallback ("I don't know that, shall I connect you with the team?"): an unanswered question.
      const asked = request.messages.at(-1)?.content ?? '';
      if (asked.includes('ship')) return sendJson(res, 200, answer('We ship every order within two working days.'));
      sendJson(res, 503, { error: { message: 'Down for this question' } });
    });
    service = await startTestService(get(), { LLM_BASE_URL: `${llm.origin}/v1`, LLM_MODEL: 'test-model' }, { scenarios: { starterTimeoutMs: STARTER_TIMEOUT_MS } });
    ws = await seedWorkspace(service, 'Starter');
    const syncKey = (await service.api('POST', '/v1/keys/sync', { token: ws.owner })).body.key as string;
    for (const [id, title, text] of [['shipping', 'Shipping', SHIPPING], ['returns', 'Returns', RETURNS]] as const) {
      const page = await service.api('PUT', `/v1/sync/pages/${id}`, { headers: { 'x-sync-key': syncKey }, body: { title, language: 'en', body: text } });
      if (page.status !== 201) throw new Error(`seeding the page failed: ${page.text}`);
    }
    // Customers' questions the bot could not answer: gift cards twice, PayPal once.
    expect((await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } })).status).toBe(200);
    const widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
    for (const question of [GIFT_CARDS, PAYPAL, GIFT_CARDS]) {
      const res = await service.api('POST', '/v1/webchat/conversations', { headers: { 'x-widget-key': widgetKey, origin: SHOP }, body: { visitor_message: question, page_url: `${SHOP}/` } });
      expect(res.status, res.text).toBe(201);
      expect(res.body.reply).toBe(phrase('dont_know', 'en'));
    }
    await service.runtime.settled();
    await saveScenario(service, ws.owner, { name: 'Existing', channel: 'webchat', turns: [{ customer: 'Hi' }] });
  });
  afterAll(async () => {
    await service.stop();
    await llm.close();
  });
  beforeEach(() => {
    llm.requests.length = 0;
  });

  it('drafts from the passages and the unanswered questions: valid drafts answered, the others left out and counted with why; nothing saved', async () => {
    starter = () => ({
      content: drafts(
        shipping,
        giftCards,
        { name: 'Free shipping', language: 'en', customer: 'Is shipping free?', kind: 'answer', contains: ['free above 100 euro'] },
        { name: '', language: 'en', customer: 'Can I return it?', kind: 'answer', contains: ['30 days'] },
        { name: 'Existing', language: 'en', customer: 'Hi', kind: 'answer', contains: ['30 days'] },
        { name: 'Returns', language: 'en', customer: 'Can I return it?', kind: 'answer', contains: ['within 30 days'], expect: { source: 'ai' } },
        { name: 'PayPal', language: 'es', customer: '¿Puedo pagar con PayPal?', kind: 'handoff' },
        { name: 'How fast we ship', language: 'en', customer: 'Shipping?', kind: 'answer', contains: ['two working days'] },
        'a scenario',
      ),
    });
    const res = await suggest(ws.owner);
    expect(res.status, res.text).toBe(200);
    expect(res.body.scenarios).toEqual([
      { name: 'How fast we ship', channel: 'webchat', language: 'en', turns: [{ customer: 'How fast do you ship?', expect: { contains: ['two working days'] } }] },
      { name: 'Gift cards', channel: 'webchat', language: 'en', turns: [{ customer: GIFT_CARDS }, { customer: 'Yes, please.', expect: { handoff: true } }] },
    ]);
    expect(res.body.skipped).toBe(7);
    expect(res.body.reason).toBeNull();
    expect(res.body.skipped_reasons).toEqual([
      'draft 3: the fact "free above 100 euro" is not in the passages word for word',
      expect.stringMatching(/^draft 4: name /),
      'draft 5: the name "Existing" is taken (by a scenario of the workspace or an earlier draft)',
      'draft 6: it has keys an "answer" draft does not: "expect"',
      'draft 7: a "handoff" draft in "es": the handoff rule understands a yes in en, nl, de, fr only',
      'draft 8: the name "How fast we ship" is taken (by a scenario of the workspace or an earlier draft)',
      'draft 9: it is not an object',
    ]);

    // One request: the passages and the questions (most asked first) as data, delimited.
    const [request] = starterRequests();
    expect(starterRequests()).toHaveLength(1);
    const [system, user] = request!.messages;
    expect(system!.content).toContain(`Write at most ${MAX_STARTER_SCENARIOS} scenarios`);
    expect(user!.content).toMatch(/^<knowledge>\n<passage n="1" title="(Shipping|Returns)"/);
    expect(user!.content).toContain(SHIPPING);
    expect(user!.content).toContain(RETURNS);
    expect(user!.content).toContain(`<questions>\n1. ${JSON.stringify(GIFT_CARDS)}\n2. ${JSON.stringify(PAYPAL)}\n</questions>`);

    // Nothing was saved; each draft saves as it is, and plays through the engine as the model meant it.
    const listed = await service.api('GET', '/v1/scenarios', { token: ws.owner });
    expect(listed.body.scenarios.map((s: { name: string }) => s.name)).toEqual(['Existing']);
    for (const draft of res.body.scenarios) {
      const run = await play(service, ws.owner, draft);
      expect(run, JSON.stringify(run.failures)).toMatchObject({ passed: 1, failures: [] });
    }
  });

  it(`keeps at most ${MAX_STARTER_SCENARIOS} drafts, counting the rest`, async () => {
    const many = Array.from({ length: MAX_STARTER_SCENARIOS + 2 }, (_, i) => ({ ...shipping, name: `Shipping ${i + 1}` }));
    starter = () => ({ content: `\`\`\`json\n${drafts(...many)}\n\`\`\`` });
    const res = await suggest(ws.owner);
    expect(res.body.scenarios).toHaveLength(MAX_STARTER_SCENARIOS);
    expect(res.body).toMatchObject({ skipped: 2, skipped_reasons: [`draft 11: more than ${MAX_STARTER_SCENARIOS} drafts`, `draft 12: more than ${MAX_STARTER_SCENARIOS} drafts`] });
  });

  it('no usable draft: an empty list that says why', async () => {
    starter = () => ({ content: drafts({ ...shipping, contains: ['next-day delivery'] }) });
    const res = await suggest(ws.owner);
    expect(res.body).toMatchObject({ scenarios: [], skipped: 1, reason: expect.stringContaining('None of the model') });
  });

  it('a model that answers garbage, HTTP 503 or nothing in time: 502 model_failed saying so', async () => {
    starter = () => ({ content: 'Here are some great tests!' });
    const garbage = await suggest(ws.owner);
    expect(garbage.status).toBe(502);
    expect(garbage.body.error).toMatchObject({ code: 'model_failed', message: `The language model's answer could not be read: it is not JSON: "Here are some great tests!"` });

    starter = () => ({ content: JSON.stringify({ tests: [] }) });
    expect((await suggest(ws.owner)).body.error.message).toBe(`The language model's answer could not be read: it has keys other than "scenarios": "tests"`);

    starter = () => ({ status: 503, body: { error: { message: 'The model is overloaded' } } });
    const down = await suggest(ws.owner);
    expect(down.status).toBe(502);
    expect(down.body.error.message).toMatch(/^The language model could not write the starter suite: The LLM answered HTTP 503.*The model is overloaded/);

    starter = () => ({ content: drafts(shipping), delayMs: STARTER_TIMEOUT_MS + 1_000 });
    const slow = await suggest(ws.owner);
    expect(slow.status).toBe(502);
    expect(slow.body.error.message).toBe(`The language model could not write the starter suite: The LLM did not answer within ${STARTER_TIMEOUT_MS} ms.`);
  });

  it('a workspace with no knowledge and no unanswered questions: an empty list with the reason, and the model is not asked', async () => {
    const empty = await seedWorkspace(service, 'Blank');
    const res = await suggest(empty.owner);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ scenarios: [], skipped: 0, skipped_reasons: [], reason: expect.stringContaining('no knowledge and no unanswered questions') });
    expect(starterRequests()).toHaveLength(0);
  });

  it('owners and admins only', async () => {
    expect((await suggest(ws.agent)).status).toBe(403);
    expect(starterRequests()).toHaveLength(0);
    // (The first test saved "How fast we ship" when it played it.)
    starter = () => ({ content: drafts({ ...shipping, name: 'Shipping, asked by an admin' }) });
    const admin = await suggest(ws.admin);
    expect(admin.status).toBe(200);
    expect(admin.body.scenarios).toHaveLength(1);
  });

  it("the customer's yes of a handoff draft is one the handoff rule takes, in each language", () => {
    for (const yes of Object.values(OFFER_ACCEPTED)) expect(acceptsOffer(yes), yes).toBe(true);
  });
});
