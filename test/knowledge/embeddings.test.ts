/**
 * The optional embeddings ranked with the lexical search (docs/knowledge.md, "Embeddings"), on both databases, with a
 * real OpenAI-compatible server on loopback answering `/v1/embeddings` with deterministic vectors: a hashed bag of
 * words in which this test's own table gives words of one meaning ("hire" and "rent") the same place.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knowledgeEmbeddingsRepository } from '../../db/repositories/knowledge-embeddings.repository.ts';
import { knowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import { loadConfig } from '../../src/config.ts';
import { createEmbeddingsWorker } from '../../src/knowledge/embeddings/embeddings-worker.ts';
import { embeddingCounters } from '../../src/knowledge/embeddings/embeddings-metrics.ts';
import { createEmbeddingsModel } from '../../src/knowledge/embeddings/embeddings-model.ts';
import { createKnowledgeEmbeddings, type KnowledgeEmbeddings } from '../../src/knowledge/embeddings/knowledge-embeddings.ts';
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/knowledge-service.ts';
import { KNOWLEDGE_CONFIDENCE_THRESHOLD } from '../../src/knowledge/limits.ts';
import { addPhrasings } from '../../src/knowledge/phrasings.ts';
import { createLogger } from '../../src/log.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';

const DIMENSIONS = 1024;
/** The question's deadline of the service under test: long, so a loaded machine does not fail the fusion's tests. */
const QUESTION_TIMEOUT_MS = 5_000;
/** The deadline of a second one, and how long the slow model takes: far past it. */
const HASTY_TIMEOUT_MS = 300;
const SLOW_MS = 3_000;
/** This test's meanings: words the model would place together. */
const MEANING: Record<string, string> = {
  borrow: 'rent', hire: 'rent', rent: 'rent', rents: 'rent', rental: 'rent',
  pedelec: 'ebike', electric: 'ebike', 'e-bike': 'ebike', 'e-bikes': 'ebike',
  bicycle: 'bike', bike: 'bike', bikes: 'bike',
};
const STOP = new Set(['a', 'an', 'and', 'at', 'by', 'can', 'could', 'for', 'from', 'i', 'in', 'is', 'of', 'on', 'one', 'our', 'per', 'the', 'to', 'we', 'you']);

/** A hashed bag of words: each word's meaning (else itself) adds one at its place. */
function vectorOf(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}-]+/gu) ?? []) {
    if (STOP.has(word)) continue;
    const meaning = MEANING[word] ?? word;
    let h = 2166136261;
    for (const ch of meaning) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
    vector[h % DIMENSIONS]! += 1;
  }
  return vector;
}

type Mode = 'answer' | 'fail' | 'slow';

const pages = {
  rental: ['E-bikes by the day', 'You can rent one of our e-bikes for 29 euro per day. A helmet is included.'],
  hours: ['Opening hours', 'The shop is open Monday to Friday from 9 to 18 and on Saturday from 10 to 17.'],
  service: ['Servicing', 'A standard service costs 59 euro and takes one working day.'],
  theft: ['Theft insurance', 'Insure your new bike against theft for 5 euro per month.'],
  rides: ['Test rides', 'Test rides on any bike in the shop are free.'],
  delivery: ['Delivery', 'We deliver bikes in the Netherlands within two working days.'],
  payment: ['Payment', 'You can pay by card, iDEAL or in cash in the shop.'],
  parking: ['Parking', 'There is free parking behind the shop for customers.'],
} as const;
/** No word of it is on a page, nor a related word of the lexicon: the lexical search finds nothing. */
const QUESTION = 'could I borrow a pedelec?';
/** The lexical search finds the rental page by the lexicon's related words. */
const FOUND = 'Can I hire an electric bicycle?';

describeEachDatabase('embeddings ranked with the lexical search', (get) => {
  let llm: TestHttpsServer;
  let mode: Mode = 'answer';
  const shop = randomUUID();
  const other = randomUUID();
  const registry = new Registry();
  let embeddings: KnowledgeEmbeddings;
  let withEmbeddings: KnowledgeService;
  let hasty: KnowledgeEmbeddings;
  let withHasty: KnowledgeService;
  let lexicalOnly: KnowledgeService;

  /** The texts each request to /v1/embeddings carried, from `since` on. */
  const inputsSince = (since: number) =>
    llm.requests.slice(since).filter((r) => r.url === '/v1/embeddings').map((r) => (JSON.parse(r.body.toString()) as { model: string; input: string[] }));
  const page = (externalId: keyof typeof pages | string, title: string, body: string) => ({ kind: 'page' as const, external_id: externalId, title, body, language: 'en' });
  const allPages = (changes: Partial<Record<keyof typeof pages, string>> = {}) =>
    Object.entries(pages).map(([id, [title, body]]) => page(id, title, changes[id as keyof typeof pages] ?? body));
  const worker = (engine = 'engine-a') =>
    createEmbeddingsWorker({
      embeddings: knowledgeEmbeddingsRepository(get().db),
      model: createEmbeddingsModel({ baseUrl: `${llm.origin}/v1`, apiKey: 'sk-test', model: 'test-embedding', timeoutMs: 5_000, connections: 1 }),
      counters: embeddingCounters(registry),
      stored: (workspaceId) => embeddings.semantic.forget(workspaceId),
      logger: createLogger('silent'),
      engine,
      leaseMs: 15_000,
      intervalMs: 0,
      retryMs: 60_000,
    });
  const metric = async (line: RegExp) => (await registry.metrics()).split('\n').find((l) => line.test(l));
  const count = async (line: RegExp) => Number((await metric(line))?.split(' ').at(-1) ?? 0);

  beforeAll(async () => {
    llm = await startHttpsServer(async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
      if (req.url !== '/v1/embeddings') return sendJson(res, 404, { error: { message: 'no such route' } });
      if (mode === 'fail') return sendJson(res, 500, { error: { message: 'the model is down' } });
      if (mode === 'slow') await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
      const { input } = JSON.parse(body.toString()) as { input: string[] };
      sendJson(res, 200, {
        object: 'list',
        data: input.map((text, index) => ({ object: 'embedding', index, embedding: vectorOf(text) })),
        model: 'test-embedding',
        usage: { prompt_tokens: input.length * 10, total_tokens: input.length * 10 },
      });
    });
    const db = get().db;
    await db.insertInto('workspaces').values([{ id: shop, name: 'Cycle shop' }, { id: other, name: 'Scooter shop' }]).execute();
    embeddings = createKnowledgeEmbeddings({
      llm: { baseUrl: `${llm.origin}/v1`, apiKey: 'sk-test', embeddingModel: 'test-embedding' },
      embeddings: knowledgeEmbeddingsRepository(db),
      registry,
      logger: createLogger('silent'),
      engine: 'engine-a',
      leaseMs: 15_000,
      intervalMs: 0,
      questionTimeoutMs: QUESTION_TIMEOUT_MS,
    });
    withEmbeddings = createKnowledgeService({ knowledge: knowledgeRepository(db), semantic: embeddings.semantic });
    hasty = createKnowledgeEmbeddings({
      llm: { baseUrl: `${llm.origin}/v1`, apiKey: 'sk-test', embeddingModel: 'test-embedding' },
      embeddings: knowledgeEmbeddingsRepository(db),
      registry,
      logger: createLogger('silent'),
      engine: 'engine-h',
      leaseMs: 15_000,
      intervalMs: 0,
      questionTimeoutMs: HASTY_TIMEOUT_MS,
    });
    withHasty = createKnowledgeService({ knowledge: knowledgeRepository(db), semantic: hasty.semantic });
    lexicalOnly = createKnowledgeService({ knowledge: knowledgeRepository(db) });
    await withEmbeddings.applyBatch(shop, { upserts: allPages(), deletes: [] });
    await withEmbeddings.applyBatch(other, { upserts: [page('scooters', 'Our second shop', 'We rent e-bikes and scooters at our second shop in Utrecht.')], deletes: [] });
    await Promise.all([lexicalOnly.warm(shop), lexicalOnly.warm(other)]);
  });
  afterAll(async () => {
    await embeddings.stop();
    await hasty.stop();
    await llm.close();
  });

  describe('at ingestion', () => {
    it('embeds every passage in the background, in batches, with the model named and the tokens counted', async () => {
      const before = llm.requests.length;
      const runs = await worker().runDue();
      expect(runs.map((r) => [r.workspaceId, r.embedded, r.failed]).sort()).toEqual([[other, 1, false], [shop, 8, false]].sort());
      const requests = inputsSince(before);
      expect(requests.every((r) => r.model === 'test-embedding')).toBe(true);
      // One request per workspace: the eight passages of the shop go in one batch.
      expect(requests.map((r) => r.input.length).sort()).toEqual([1, 8]);
      expect(requests.flatMap((r) => r.input)).toContain('E-bikes by the day\nYou can rent one of our e-bikes for 29 euro per day. A helmet is included.');
      expect(await knowledgeEmbeddingsRepository(get().db).summary(shop, 'test-embedding')).toEqual({ vectors: 8, passages: 8, tokens: 80 });
      expect(await metric(/^botlink_knowledge_embedding_vectors_total /)).toBe('botlink_knowledge_embedding_vectors_total 9');
      expect(await metric(/^botlink_knowledge_embedding_tokens_total\{purpose="passages"\}/)).toBe('botlink_knowledge_embedding_tokens_total{purpose="passages"} 90');
    });

    it('embeds a changed passage again and leaves the unchanged ones alone', async () => {
      await withEmbeddings.applyBatch(shop, { upserts: allPages({ rental: 'You can rent one of our e-bikes for 25 euro per day. A helmet is included.' }), deletes: [] });
      const before = llm.requests.length;
      const runs = await worker().runDue();
      expect(runs.find((r) => r.workspaceId === shop)).toMatchObject({ embedded: 1, failed: false });
      expect(inputsSince(before).flatMap((r) => r.input)).toEqual(['E-bikes by the day\nYou can rent one of our e-bikes for 25 euro per day. A helmet is included.']);

      const again = llm.requests.length;
      await worker().runDue();
      expect(inputsSince(again)).toEqual([]);
    });

    it("gives a passage's phrasings vectors of their own", async () => {
      const repo = knowledgeRepository(get().db);
      const doc = await get().db.selectFrom('knowledge_documents').select('id').where('workspace_id', '=', shop).where('external_id', '=', 'theft').executeTakeFirstOrThrow();
      await withEmbeddings.writing(shop, () => repo.inTransaction((q) => addPhrasings(q, shop, doc.id, [{ chunkOrdinal: 0, text: 'what if my bike gets stolen', origin: 'team' }])));
      const before = llm.requests.length;
      await worker().runDue();
      expect(inputsSince(before).flatMap((r) => r.input)).toEqual(['what if my bike gets stolen']);
      const rows = await get().db.selectFrom('knowledge_embeddings').select(['phrasing_id', 'vector']).where('workspace_id', '=', shop).where('phrasing_id', 'is not', null).execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]!.vector.map(Number)).toEqual(vectorOf('what if my bike gets stolen'));
    });

    it('is embedded once when two engines look at the same time', async () => {
      const third = randomUUID();
      await get().db.insertInto('workspaces').values({ id: third, name: 'Third shop' }).execute();
      await lexicalOnly.applyBatch(third, { upserts: [page('a', 'Repairs', 'We repair flat tyres while you wait.'), page('b', 'Gift cards', 'Gift cards are sold in the shop.')], deletes: [] });
      const before = llm.requests.length;
      const [a, b] = await Promise.all([worker('engine-a').runDue(), worker('engine-b').runDue()]);
      const done = [...a, ...b].filter((r) => r.workspaceId === third);
      expect(done.reduce((n, r) => n + r.embedded, 0)).toBe(2);
      expect(inputsSince(before).flatMap((r) => r.input).filter((t) => t.startsWith('Repairs') || t.startsWith('Gift cards'))).toHaveLength(2);
    });
  });

  describe('at question time', () => {
    it('hands over a passage the lexical search misses, fused with its ranking, without making it strong', async () => {
      await lexicalOnly.warm(shop);
      const lexical = await lexicalOnly.search(shop, QUESTION, 'en');
      expect(lexical.passages).toEqual([]);

      await withEmbeddings.warm(shop);
      const before = llm.requests.length;
      const found = await withEmbeddings.search(shop, QUESTION, 'en');
      const rental = found.passages.find((p) => p.externalId === 'rental');
      expect(rental).toBeDefined();
      // One request for the question.
      expect(inputsSince(before)).toEqual([{ model: 'test-embedding', input: [QUESTION] }]);
      // Its score stays the lexical one: too weak for the embedded answerer, never a strong match.
      expect(rental!.score).toBeLessThan(KNOWLEDGE_CONFIDENCE_THRESHOLD);
      expect(found.confident).toBe(false);
      expect(found.strategy).toBe('similar');
      // At most a quarter of the eight passages are handed over.
      expect(found.passages.length).toBeLessThanOrEqual(2);
      expect(await metric(/^botlink_knowledge_embedding_requests_total\{purpose="question"\}/)).toMatch(/ [1-9]\d*$/);
    });

    it('keeps a page limit asked for (the page picker) and ranks by fusion within it', async () => {
      const found = await withEmbeddings.search(shop, QUESTION, 'en', { limit: 5 });
      expect(found.passages.length).toBeLessThanOrEqual(5);
      expect(found.passages[0]?.externalId).toBe('rental');
    });

    it('answers with the lexical result alone when the model fails, counted, with no error', async () => {
      await Promise.all([lexicalOnly.warm(shop), withEmbeddings.warm(shop)]);
      const lexical = await lexicalOnly.search(shop, FOUND, 'en');
      expect(lexical.passages.length).toBeGreaterThan(0);
      const failed = /^botlink_knowledge_embedding_failures_total\{purpose="question",reason="status"\}/;
      const before = await count(failed);
      mode = 'fail';
      try {
        const found = await withEmbeddings.search(shop, FOUND, 'en');
        expect(found.passages.map((p) => p.id)).toEqual(lexical.passages.map((p) => p.id));
        expect(found.confident).toBe(lexical.confident);
      } finally {
        mode = 'answer';
      }
      expect(await count(failed)).toBe(before + 1);
    });

    it('answers with the lexical result alone when the model is slower than the deadline', async () => {
      await Promise.all([lexicalOnly.warm(shop), withHasty.warm(shop)]);
      const lexical = await lexicalOnly.search(shop, FOUND, 'en');
      const timedOut = /^botlink_knowledge_embedding_failures_total\{purpose="question",reason="timeout"\}/;
      const before = await count(timedOut);
      mode = 'slow';
      try {
        const started = performance.now();
        const found = await withHasty.search(shop, FOUND, 'en');
        // The deadline, not the model, ended the wait.
        expect(performance.now() - started).toBeLessThan(SLOW_MS - 500);
        expect(found.passages.map((p) => p.id)).toEqual(lexical.passages.map((p) => p.id));
      } finally {
        mode = 'answer';
      }
      expect(await count(timedOut)).toBe(before + 1);
    });

    it("never ranks another workspace's vectors", async () => {
      await withEmbeddings.warm(other);
      const shopChunks = new Set(
        (await get().db.selectFrom('knowledge_chunks').select('id').where('workspace_id', '=', shop).execute()).map((r) => r.id),
      );
      const found = await withEmbeddings.search(other, QUESTION, 'en');
      expect(found.passages.map((p) => p.externalId)).toEqual(['scooters']);
      const near = await embeddings.semantic.nearest(other, QUESTION);
      expect(near?.length).toBe(1);
      expect(near!.some((n) => shopChunks.has(n.id))).toBe(false);
      // The passages' read is bounded by the workspace too: another workspace's chunk id gives nothing.
      expect(await embeddings.semantic.hits(other, [...shopChunks])).toEqual([]);
      // A workspace without vectors asks the model nothing.
      const empty = randomUUID();
      expect(embeddings.semantic.nearest(empty, QUESTION)).toBeNull();
    });
  });

  describe('the setting', () => {
    it('LLM_EMBEDDING_MODEL needs LLM_BASE_URL and is off by default', () => {
      expect(() => loadConfig({ LLM_EMBEDDING_MODEL: 'text-embedding-3-small' })).toThrow(/^LLM_EMBEDDING_MODEL needs LLM_BASE_URL/);
      expect(() => loadConfig({ LLM_BASE_URL: 'https://llm.example.com/v1', LLM_EMBEDDING_MODEL: 'two words' })).toThrow(/^LLM_EMBEDDING_MODEL must name an embedding model/);
      expect(loadConfig({ LLM_BASE_URL: 'https://llm.example.com/v1' }).llm?.embeddingModel).toBeNull();
      expect(loadConfig({ LLM_BASE_URL: 'https://llm.example.com/v1', LLM_EMBEDDING_MODEL: 'text-embedding-3-small' }).llm?.embeddingModel).toBe('text-embedding-3-small');
    });
  });
});
