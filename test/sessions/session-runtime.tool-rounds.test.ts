/**
 * protocol §8 end to end: the phone AI may call the integrator's tools for at most three rounds a turn. A scripted
 * OpenAI-compatible server that always asks for a tool meets real signed tool calls to a real integrator.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { accountsRepository } from '../../db/repositories/accounts.repository.ts';
import { knowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import { sessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { createAccountsService } from '../../src/accounts/accounts-service.ts';
import { createAi } from '../../src/ai/index.ts';
import { createBotLinkClient } from '../../src/botlink/client.ts';
import { createToolsClient } from '../../src/botlink/tools-client.ts';
import { createKnowledgeService } from '../../src/knowledge/knowledge-service.ts';
import { MAX_TOOL_RESULT_CHARS, MAX_TOOL_ROUNDS } from '../../src/limits.ts';
import { createLogger } from '../../src/log.ts';
import { GuardedClient } from '../../src/net/guarded-client.ts';
import { verifyToolsRequest } from '../../src/receiver/index.ts';
import { channelRenderers } from '../../src/channels/renderers.ts';
import { createSessionRuntime, type SessionRuntime } from '../../src/sessions/session-runtime.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';

const key = 'tool-rounds-key-0123456789abcdefghijklmnop';

describeEachDatabase('tool rounds with a language model', (get) => {
  let integrator: TestHttpsServer;
  let llm: TestHttpsServer;
  let runtime: SessionRuntime;
  let http: GuardedClient;
  let workspaceId: string;
  const toolCalls: { tool: string; args: unknown; verified: boolean }[] = [];
  const llmRequests: { tools?: unknown[]; messages: { role: string; content?: string; tool_call_id?: string }[] }[] = [];

  beforeAll(async () => {
    integrator = await startHttpsServer((req, res, body) => {
      const verified = verifyToolsRequest(key, body, req.headers['x-service-sent-at'] as string, req.headers['x-service-signature'] as string).ok;
      if (req.url === '/tools/manifest') {
        return sendJson(res, 200, { tools: [{ name: 'order_status', description: 'Look up an order', parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] } }] });
      }
      if (req.url === '/tools') {
        const call = JSON.parse(body.toString());
        toolCalls.push({ tool: call.tool, args: call.args, verified });
        return sendJson(res, 200, { ok: true, result: 'x'.repeat(10_000) });
      }
      // The channel endpoint has no answer: the AI must work it out.
      sendJson(res, 200, { reply: '' });
    });
    let n = 0;
    llm = await startHttpsServer((_req, res, body) => {
      const request = JSON.parse(body.toString());
      llmRequests.push(request);
      // Keeps asking for a tool whenever tools are offered.
      if (request.tools?.length) {
        return sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: `call_${n++}`, type: 'function', function: { name: 'order_status', arguments: '{"order":"A1"}' } }] } }] });
      }
      sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: 'Your order A1 is on its way.' } }] });
    });
    http = new GuardedClient({ allow: ['127.0.0.1/32'] });
    const { db } = get();
    workspaceId = (await createAccountsService({ accounts: accountsRepository(db) }).createWorkspace({ name: 'Shop', ownerEmail: 'o@shop.example' })).workspace.id;
    runtime = createSessionRuntime({
      renderers: channelRenderers,
      sessions: sessionsRepository(db),
      credentials: async () => ({ endpointUrl: `${integrator.origin}/channel`, key }),
      botlink: createBotLinkClient({ http }),
      tools: createToolsClient({ http }),
      knowledge: createKnowledgeService({ knowledge: knowledgeRepository(db) }),
      ai: createAi({ baseUrl: `${llm.origin}/v1`, apiKey: 'sk-test', model: 'test-model' }),
      logger: createLogger('silent'),
    });
  });
  afterAll(async () => {
    await runtime.stop(100);
    await http.close();
    await integrator.close();
    await llm.close();
  });

  it('makes three rounds of signed tool calls, then the model answers without tools', async () => {
    const result = await runtime.handleMessage({ workspaceId, channel: 'phone', externalId: 'call-tools', text: 'Where is order A1?', language: 'en' });
    expect(result).toMatchObject({ cancelled: false, source: 'ai' });
    if (!result.cancelled) expect(result.text).toContain('on its way');

    expect(toolCalls).toHaveLength(MAX_TOOL_ROUNDS);
    expect(toolCalls.every((c) => c.verified && c.tool === 'order_status')).toBe(true);
    expect(llmRequests).toHaveLength(MAX_TOOL_ROUNDS + 1);
    expect(llmRequests.at(-1)!.tools).toBeUndefined();

    // The model saw each tool result cut to its first 6000 characters (protocol §2.5, §8).
    const toolMessages = llmRequests.at(-1)!.messages.filter((m) => m.role === 'tool');
    expect(toolMessages).toHaveLength(MAX_TOOL_ROUNDS);
    for (const m of toolMessages) expect(m.content).toHaveLength(MAX_TOOL_RESULT_CHARS);

    await runtime.settled();
    const row = (await sessionsRepository(get().db).find(workspaceId, 'phone', 'call-tools'))!;
    const [turn] = await sessionsRepository(get().db).turns(row.id);
    expect((turn!.tool_rounds as unknown[]).length).toBe(MAX_TOOL_ROUNDS);
    expect(Object.keys(turn!.timings as object).filter((k) => k.startsWith('tool'))).toHaveLength(MAX_TOOL_ROUNDS);
  });
});
