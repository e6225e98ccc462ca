/**
 * The embeddings in the running service (docs/knowledge.md, "Embeddings"), with LLM_EMBEDDING_MODEL set and a real
 * OpenAI-compatible server on loopback: a synced page is embedded in the background, GET /v1/knowledge/ai-questions
 * counts its vectors and tokens, the page picker finds it by meaning, and /metrics counts the calls.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

/** Two directions: "rent" and its words, and everything else. */
const vectorOf = (text: string) => (/\b(rent|borrow|hire)/i.test(text) ? [1, 0.05] : [0.05, 1]);

describeEachDatabase('embeddings in the service', (get) => {
  let llm: TestHttpsServer;
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;

  beforeAll(async () => {
    llm = await startHttpsServer((req, res, body) => {
      if (req.url !== '/v1/embeddings') return sendJson(res, 404, {});
      const { input } = JSON.parse(body.toString()) as { input: string[] };
      sendJson(res, 200, { data: input.map((text, index) => ({ index, embedding: vectorOf(text) })), usage: { prompt_tokens: 7 * input.length } });
    });
    service = await startTestService(
      get(),
      { LLM_BASE_URL: `${llm.origin}/v1`, LLM_API_KEY: 'sk-test', LLM_MODEL: 'test-model', LLM_EMBEDDING_MODEL: 'test-embedding', KNOWLEDGE_AI_QUESTIONS: 'off' },
      { knowledgeEmbeddings: { intervalMs: 100 } },
    );
    ws = await seedWorkspace(service);
    const syncKey = (await service.api('POST', '/v1/keys/sync', { token: ws.owner })).body.key as string;
    const pages = [
      ['rental', 'E-bikes by the day', 'You can rent one of our e-bikes for 29 euro per day.'],
      ['hours', 'Opening hours', 'The shop is open Monday to Friday from 9 to 18.'],
      ['parking', 'Parking', 'There is free parking behind the shop.'],
    ];
    for (const [id, title, text] of pages) {
      const put = await service.api('PUT', `/v1/sync/pages/${id}`, { headers: { 'x-sync-key': syncKey }, body: { title, body: text, language: 'en' } });
      expect(put.status).toBe(201);
    }
  });
  afterAll(async () => {
    await service.stop();
    await llm.close();
  });

  it('embeds the synced passages in the background and shows their count and tokens', async () => {
    await expect
      .poll(async () => (await service.api('GET', '/v1/knowledge/ai-questions', { token: ws.owner })).body.embeddings, { timeout: 10_000 })
      .toEqual({ vectors: 3, passages: 3, tokens: 21 });
    const calls = llm.requests.filter((r) => r.url === '/v1/embeddings').map((r) => JSON.parse(r.body.toString()) as { model: string });
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c) => c.model === 'test-embedding')).toBe(true);
    expect(llm.requests.every((r) => r.headers.authorization === 'Bearer sk-test')).toBe(true);
  });

  it('finds a passage by meaning that shares no word with the question', async () => {
    const picked = async () => {
      const res = await service.api('GET', `/v1/knowledge/passages?question=${encodeURIComponent('could I borrow a pedelec?')}&language=en`, { token: ws.owner });
      expect(res.status).toBe(200);
      return (res.body.passages as { title: string }[]).map((p) => p.title);
    };
    // The engine reads the workspace's vectors in the background after they were stored: the next questions have them.
    await expect.poll(picked, { timeout: 10_000, interval: 200 }).toContain('E-bikes by the day');
  });

  it('counts the calls, tokens and vectors on /metrics', async () => {
    const text = (await service.api('GET', '/metrics')).text;
    expect(text).toMatch(/^botlink_knowledge_embedding_vectors_total 3$/m);
    expect(text).toMatch(/^botlink_knowledge_embedding_tokens_total\{purpose="passages"\} 21$/m);
    expect(text).toMatch(/^botlink_knowledge_embedding_requests_total\{purpose="question"\} [1-9]/m);
  });
});
