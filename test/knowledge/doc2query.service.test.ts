/**
 * The AI's questions in the running service (docs/knowledge.md, "Questions written by the AI"): the sync API never
 * waits for the model, the questions arrive in the background, GET /v1/knowledge/ai-questions says what they cost, and
 * KNOWLEDGE_AI_QUESTIONS is checked at start.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { ConfigError } from '../../src/errors.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

describe('KNOWLEDGE_AI_QUESTIONS', () => {
  it('is on with a model and off without one, unless set off', () => {
    expect(loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:11434/v1' }).knowledgeAiQuestions).toBe(true);
    expect(loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:11434/v1', KNOWLEDGE_AI_QUESTIONS: 'off' }).knowledgeAiQuestions).toBe(false);
    expect(loadConfig({}).knowledgeAiQuestions).toBe(false);
  });

  it('stops the start when it is wrong, or on without a model', () => {
    expect(() => loadConfig({ KNOWLEDGE_AI_QUESTIONS: 'yes' })).toThrow('KNOWLEDGE_AI_QUESTIONS must be on or off');
    expect(() => loadConfig({ KNOWLEDGE_AI_QUESTIONS: 'on' })).toThrow(ConfigError);
    expect(() => loadConfig({ KNOWLEDGE_AI_QUESTIONS: 'on' })).toThrow('KNOWLEDGE_AI_QUESTIONS=on needs LLM_BASE_URL');
  });
});

describeEachDatabase('the AI\'s questions in the service', (get) => {
  let llm: TestHttpsServer;
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let syncKey = '';
  /** While false the model holds every request (its deadline is 30 s); `answerAll` answers the held ones. */
  let modelUp = false;
  const held: ServerResponse[] = [];
  const answer = (res: ServerResponse) =>
    sendJson(res, 200, {
      choices: [{ index: 0, message: { role: 'assistant', content: '["Can I hire an electric bike?"]' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 90, completion_tokens: 10 },
    });
  const answerAll = () => {
    modelUp = true;
    for (const res of held.splice(0)) answer(res);
  };

  beforeAll(async () => {
    llm = await startHttpsServer((_req, res) => {
      if (modelUp) answer(res);
      else held.push(res);
    });
    service = await startTestService(
      get(),
      { LLM_BASE_URL: `${llm.origin}/v1`, LLM_API_KEY: 'sk-test', LLM_MODEL: 'test-model' },
      { knowledgeQuestions: { intervalMs: 100, retryMs: 100, timeoutMs: 30_000 } },
    );
    ws = await seedWorkspace(service);
    syncKey = (await service.api('POST', '/v1/keys/sync', { token: ws.owner })).body.key as string;
  });
  afterAll(async () => {
    await service.stop();
    await llm.close();
  });

  it('a page synced while the model does not answer is answered at once', async () => {
    const started = performance.now();
    const put = await service.api('PUT', '/v1/sync/pages/rental', {
      headers: { 'x-sync-key': syncKey },
      body: { title: 'Bike rental', body: 'You can rent an e-bike for 29 euro per day.', language: 'en' },
    });
    const took = performance.now() - started;
    expect(put.status).toBe(201);
    // Far inside the model's 30 s deadline: the sync does not wait for it.
    expect(took).toBeLessThan(3_000);
    // The worker did ask the model, and is still waiting for it.
    await expect.poll(() => held.length, { timeout: 5_000 }).toBeGreaterThan(0);
    const none = await service.api('GET', '/v1/knowledge/ai-questions', { token: ws.owner });
    expect(none.body).toEqual({ enabled: true, questions: 0, passages: 0, tokens: 0 });
  });

  it('once the model answers, the questions arrive and the knowledge route counts them and their tokens', async () => {
    answerAll();
    await expect
      .poll(async () => (await service.api('GET', '/v1/knowledge/ai-questions', { token: ws.agent })).body, { timeout: 15_000, interval: 200 })
      .toEqual({ enabled: true, questions: 1, passages: 1, tokens: 100 });
    const metrics = await service.api('GET', '/metrics');
    expect(metrics.text).toMatch(/^botlink_knowledge_ai_questions_total 1$/m);
    expect(metrics.text).toMatch(/^botlink_knowledge_ai_question_tokens_total \d+$/m);
  });

  it('is read by every user of the workspace, and by nobody else', async () => {
    expect((await service.api('GET', '/v1/knowledge/ai-questions', { token: ws.admin })).status).toBe(200);
    const anonymous = await service.api('GET', '/v1/knowledge/ai-questions');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toEqual(expect.any(String));
    const other = await seedWorkspace(service, 'Other');
    expect((await service.api('GET', '/v1/knowledge/ai-questions', { token: other.owner })).body).toEqual({ enabled: true, questions: 0, passages: 0, tokens: 0 });
  });
});
