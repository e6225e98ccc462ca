/**
 * Tool expectations (docs/scenarios.md, "Tools"): the phone's turn is the one whose AI calls the integrator's tools
 * (protocol §2.3–2.5; WhatsApp and web chat offer none), so a scenario on the phone checks the call and its arguments,
 * against a candidate endpoint that serves a real manifest, with a scripted OpenAI-compatible model; a mocked tool is
 * answered without the integrator.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { startHarness, type Harness } from '../channels/whatsapp/fixtures/harness.ts';
import { play } from './helpers.ts';

interface ChatRequest {
  messages: { role: string; content: string | null }[];
  tools?: { function: { name: string } }[];
}

const MANIFEST = {
  tools: [
    {
      name: 'order_status',
      description: 'The status of an order, by its number and postcode',
      parameters: { type: 'object', properties: { order: { type: 'string' }, postcode: { type: 'string' } }, required: ['order', 'postcode'] },
    },
  ],
};

describeEachDatabase('tool expectations', (get) => {
  let h: Harness;
  let llm: TestHttpsServer;
  let shop: TestHttpsServer;
  const completions = () => llm.requests.map((r) => JSON.parse(r.body.toString()) as ChatRequest);
  const toolCalls = () => shop.requests.filter((r) => r.method === 'POST' && r.url === '/botlink/tools').map((r) => JSON.parse(r.body.toString()) as { tool: string; args: unknown });

  beforeAll(async () => {
    // The model asks for a tool while tools are offered and none answered yet, then answers with what it got.
    let n = 0;
    llm = await startHttpsServer((_req, res, body) => {
      const request = JSON.parse(body.toString()) as ChatRequest;
      const last = request.messages.at(-1)!;
      const asked = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
      const call = (name: string, args: object) =>
        sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: `call_${n++}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }] });
      if (request.tools?.length && last.role !== 'tool') {
        if (asked.includes('Saturday')) return call('opening_hours', { day: 'saturday' });
        if (asked.includes('order')) return call('order_status', { order: '1001', postcode: '3511 AB' });
      }
      const answer = last.role === 'tool' ? `Here is what I found: ${last.content}` : 'I can help with that.';
      sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: answer } }] });
    });
    // The shop's candidate endpoint: no answer of its own, a manifest, and its tools.
    shop = await startHttpsServer((req, res) => {
      if (req.method === 'GET' && req.url === '/botlink/tools/manifest') return sendJson(res, 200, MANIFEST);
      if (req.url === '/botlink/tools') return sendJson(res, 200, { ok: true, result: { order: '1001', status: 'shipped', carrier: 'PostNL' } });
      sendJson(res, 200, { reply: '' });
    });
    h = await startHarness(get(), { env: { LLM_BASE_URL: `${llm.origin}/v1`, LLM_MODEL: 'test-model' } });
  });
  afterAll(async () => {
    await h.close();
    await llm.close();
    await shop.close();
  });

  const phone = (name: string, customer: string, expect: object, more: object = {}) => ({
    name,
    channel: 'phone',
    language: 'en',
    integrator: { url: `${shop.origin}/botlink/channel` },
    turns: [{ customer, expect }],
    ...more,
  });

  it('a tool expectation with arguments passes when the AI called the tool with them', async () => {
    const run = await play(h.service, h.workspace.owner, phone('Phone: order status', 'Where is my order 1001?', { tool: { name: 'order_status', args: { order: '1001' } }, source: 'ai', contains: ['shipped'] }));
    expect(run).toMatchObject({ passed: 1, failures: [] });
    expect(run.transcripts[0].turns[0].tools).toEqual([{ name: 'order_status', args: { order: '1001', postcode: '3511 AB' }, ok: true }]);
    expect(toolCalls()).toEqual([expect.objectContaining({ tool: 'order_status', args: { order: '1001', postcode: '3511 AB' } })]);
  });

  it('fails with the calls that were made when the arguments differ', async () => {
    const run = await play(h.service, h.workspace.owner, phone('Phone: another order', 'Where is my order 9999?', { tool: { name: 'order_status', args: { order: '9999' } } }));
    expect(run.passed).toBe(0);
    expect(run.failures).toEqual([{ run: 1, turn: 1, expectation: 'tool order_status {"order":"9999"}', got: 'order_status {"order":"1001","postcode":"3511 AB"}' }]);
  });

  it('a mocked tool is offered and answered without the integrator', async () => {
    const before = toolCalls().length;
    const run = await play(
      h.service,
      h.workspace.owner,
      phone('Phone: opening hours', 'Are you open on Saturday?', { tool: { name: 'opening_hours', args: { day: 'saturday' } }, contains: ['here is what I found'] }, { mocks: { tools: { opening_hours: { saturday: '10:00-17:00' } } } }),
    );
    expect(run).toMatchObject({ passed: 1, failures: [] });
    expect(toolCalls()).toHaveLength(before);
    const offered = completions().find((c) => c.messages.some((m) => m.content === 'Are you open on Saturday?') && c.tools?.length);
    expect(offered?.tools?.map((t) => t.function.name).sort()).toEqual(['opening_hours', 'order_status']);
    expect(completions().some((c) => c.messages.some((m) => m.role === 'tool' && m.content === '{"saturday":"10:00-17:00"}'))).toBe(true);
  });

  it('web chat offers the AI no tools: a tool expectation there fails, saying none was called', async () => {
    const run = await play(h.service, h.workspace.owner, { name: 'Web chat: order', channel: 'webchat', turns: [{ customer: 'Has my order 2002 left?', expect: { tool: { name: 'order_status' } } }] });
    expect(run.failures).toEqual([{ run: 1, turn: 1, expectation: 'tool order_status', got: 'no tool was called' }]);
    const asked = completions().filter((c) => c.messages.at(-1)?.content === 'Has my order 2002 left?');
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((c) => !c.tools?.length)).toBe(true);
  });

  it('with a model, a persona is taken (a simulated customer: test/scenarios/scenarios.persona.test.ts)', async () => {
    const res = await h.service.api('POST', '/v1/scenarios', { token: h.workspace.owner, body: { ...phone('Simulated', 'Hi', {}), persona: { goal: 'Return a tent' } } });
    expect(res.status).toBe(201);
    expect(res.body.scenario.definition.persona).toEqual({ goal: 'Return a tent' });
  });
});
