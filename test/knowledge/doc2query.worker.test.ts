/**
 * The AI's questions for passages, written in the background (docs/knowledge.md, "Questions written by the AI"), on
 * both databases, with a real OpenAI-compatible server on loopback as the model: written when a passage is new or
 * changed and only then, searched like the passage's text, dropped when the answer is not a list, retried after the
 * model failed, and written once when two engines look at the same time.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knowledgePhrasingsJobsRepository } from '../../db/repositories/knowledge-phrasings-jobs.repository.ts';
import { knowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import { createQuestionsModel, type QuestionsModel } from '../../src/knowledge/doc2query/questions-model.ts';
import { createQuestionsWorker } from '../../src/knowledge/doc2query/questions-worker.ts';
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/knowledge-service.ts';
import { createLogger } from '../../src/log.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';

const RETRY_MS = 60_000;
const TOKENS = { prompt_tokens: 100, completion_tokens: 20 };

/** What the model answers for a request: the passage's title and the language asked for are in the prompt. */
type Reply = (prompt: { title: string; language: string }) => { status?: number; content?: string; delayMs?: number };

/** English and Dutch questions for the passages of the tests, in words the pages do not use. */
const firstQuestions = (): Record<string, Record<string, string[]>> => ({
  'Bike rental': { en: ['Can I hire an electric bike?', 'what does borrowing a bicycle cost'], nl: ['Kan ik een elektrische fiets lenen?'] },
  Openingstijden: { en: ['When does the shop close on weekdays?'], nl: ['Hoe laat gaan jullie dicht?', 'Zijn jullie zaterdag open?'] },
  'Theft insurance': { en: ['What if my new bike gets stolen?'], nl: ['Wat als mijn fiets gestolen wordt?'] },
});
let questionsFor = firstQuestions();
const answering: Reply = ({ title, language }) => ({ content: JSON.stringify(questionsFor[title]?.[language] ?? [`What about ${title}?`]) });

describeEachDatabase("the AI's questions for passages", (get) => {
  let llm: TestHttpsServer;
  let model: QuestionsModel;
  let kb: KnowledgeService;
  let reply: Reply = answering;
  let clock = new Date('2026-03-01T10:00:00Z');
  const shop = randomUUID();
  const registry = new Registry();

  function prompted(body: Buffer): { title: string; language: string } {
    const messages = (JSON.parse(body.toString()) as { messages: { content: string }[] }).messages;
    const language = /language code "([a-z]+)"/.exec(messages[0]!.content)?.[1] ?? '?';
    const title = /<passage title="([^"]*)">/.exec(messages[1]!.content)?.[1] ?? '?';
    return { title, language };
  }

  function worker(engine = 'engine-a', own?: QuestionsModel) {
    return createQuestionsWorker({
      jobs: knowledgePhrasingsJobsRepository(get().db),
      knowledge: knowledgeRepository(get().db),
      writing: kb.writing,
      model: own ?? model,
      logger: createLogger('silent'),
      registry,
      engine,
      leaseMs: 15_000,
      intervalMs: 0,
      retryMs: RETRY_MS,
      now: () => clock,
    });
  }

  async function documentOf(externalId: string): Promise<string> {
    const row = await get().db.selectFrom('knowledge_documents').select('id').where('workspace_id', '=', shop).where('external_id', '=', externalId).executeTakeFirstOrThrow();
    return row.id;
  }
  async function generated(externalId: string) {
    return get()
      .db.selectFrom('knowledge_phrasings')
      .selectAll()
      .where('document_id', '=', await documentOf(externalId))
      .where('origin', '=', 'generated')
      .orderBy('language')
      .orderBy('text')
      .execute();
  }
  /** Whether the passage's tsv matches a customer's words, as the search asks the database (plainto_tsquery). */
  async function matches(externalId: string, config: 'english' | 'dutch', words: string): Promise<boolean> {
    const { rows } = await sql<{ hit: boolean }>`
      select bool_or(tsv @@ plainto_tsquery(${config}::regconfig, ${words})) as hit
      from knowledge_chunks where document_id = ${await documentOf(externalId)}`.execute(get().db);
    return rows[0]?.hit === true;
  }
  const page = (externalId: string, title: string, body: string, language: string) => ({ kind: 'page' as const, external_id: externalId, title, body, language });
  const sync = (...pages: ReturnType<typeof page>[]) => kb.applyBatch(shop, { upserts: pages, deletes: [] });

  beforeAll(async () => {
    questionsFor = firstQuestions();
    llm = await startHttpsServer();
    llm.handle(async (_req: IncomingMessage, res: ServerResponse, body: Buffer) => {
      const answer = reply(prompted(body));
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      if (answer.status === undefined && answer.content === undefined) return; // never answers
      sendJson(res, answer.status ?? 200, {
        choices: [{ index: 0, message: { role: 'assistant', content: answer.content ?? '' }, finish_reason: 'stop' }],
        usage: TOKENS,
      });
    });
    model = createQuestionsModel({ baseUrl: `${llm.origin}/v1`, apiKey: 'sk-test', model: 'test-model', timeoutMs: 3_000 });
    await get().db.insertInto('workspaces').values({ id: shop, name: 'Cycle shop' }).execute();
    kb = createKnowledgeService({ knowledge: knowledgeRepository(get().db) });
  });
  afterAll(async () => {
    await model.close();
    await llm.close();
  });

  describe('a page synced', () => {
    it("gets questions in its language and the knowledge's other one, stored as generated phrasings with the passage's hash and tokens", async () => {
      await sync(page('rental', 'Bike rental', 'You can rent an e-bike for 29 euro per day. Helmets are included.', 'en'), page('hours', 'Openingstijden', 'De winkel is open van maandag tot vrijdag, 9 tot 18 uur.', 'nl'));
      expect(await matches('rental', 'english', 'hire electric bike')).toBe(false);
      const before = llm.requests.length;

      const runs = await worker().runDue();

      expect(runs).toEqual([{ workspaceId: shop, passages: 2, questions: 6, cleaned: 0, malformed: 0, failed: false }]);
      // One request per passage and language: two passages, two languages.
      expect(llm.requests.length - before).toBe(4);
      const rental = await generated('rental');
      expect(rental.map((r) => [r.language, r.text])).toEqual([
        ['en', 'Can I hire an electric bike?'],
        ['en', 'what does borrowing a bicycle cost'],
        ['nl', 'Kan ik een elektrische fiets lenen?'],
      ]);
      expect(new Set(rental.map((r) => r.passage_hash)).size).toBe(1);
      expect(rental[0]!.passage_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(rental.every((r) => r.chunk_ordinal === 0 && r.created_by === null)).toBe(true);
      // Each request's 120 tokens are shared among its questions: 60 + 60 for English, 120 for Dutch.
      expect(rental.map((r) => r.tokens)).toEqual([60, 60, 120]);
      expect(await knowledgePhrasingsJobsRepository(get().db).summary(shop)).toEqual({ questions: 6, passages: 2, tokens: 480 });
    });

    it("a customer's question in those words now finds the passage (its tsv holds them)", async () => {
      const found = await kb.search(shop, 'Can I hire an electric bike?', 'en');
      expect(found.passages[0]?.externalId).toBe('rental');
      expect(found.confident).toBe(true);
      expect(await matches('rental', 'english', 'hire electric bike')).toBe(true);
      expect(await matches('hours', 'dutch', 'hoe laat dicht')).toBe(true);
      expect(await matches('hours', 'english', 'hire electric bike')).toBe(false);
    });

    it('counts what it wrote and the tokens on /metrics', async () => {
      const text = await registry.metrics();
      expect(text).toMatch(/^botlink_knowledge_ai_questions_total 6$/m);
      expect(text).toMatch(/^botlink_knowledge_ai_question_tokens_total 480$/m);
    });
  });

  describe('only when the passage changes', () => {
    it('an unchanged page synced again makes no request, even on a look at every passage', async () => {
      const ids = (await generated('rental')).map((r) => r.id);
      expect((await sync(page('rental', 'Bike rental', 'You can rent an e-bike for 29 euro per day. Helmets are included.', 'en'))).upserts[0]!.result).toBe('unchanged');
      const before = llm.requests.length;
      // A new worker's first look goes over every workspace's passages, changed or not.
      expect(await worker().runDue()).toEqual([{ workspaceId: shop, passages: 0, questions: 0, cleaned: 0, malformed: 0, failed: false }]);
      expect(llm.requests.length).toBe(before);
      expect((await generated('rental')).map((r) => r.id)).toEqual(ids);
    });

    it('a changed page gets new questions, and its old ones are gone; the other page keeps its own', async () => {
      const old = await generated('rental');
      const hours = (await generated('hours')).map((r) => r.id);
      questionsFor['Bike rental']!.en = ['Do you rent out e-bikes by the week?'];
      await sync(page('rental', 'Bike rental', 'You can rent an e-bike for 29 euro per day or 150 euro per week.', 'en'));
      const before = llm.requests.length;

      await worker().runDue();

      expect(llm.requests.length - before).toBe(2);
      const now = await generated('rental');
      expect(now.map((r) => [r.language, r.text])).toEqual([
        ['en', 'Do you rent out e-bikes by the week?'],
        ['nl', 'Kan ik een elektrische fiets lenen?'],
      ]);
      expect(now.some((r) => old.some((o) => o.id === r.id))).toBe(false);
      expect(now[0]!.passage_hash).not.toBe(old[0]!.passage_hash);
      expect(await matches('rental', 'english', 'borrowing bicycle cost')).toBe(false);
      expect((await generated('hours')).map((r) => r.id)).toEqual(hours);
    });
  });

  describe('when the model fails', () => {
    it('an answer that is not a list of questions stores nothing, and the passage is tried again after the wait', async () => {
      reply = (prompt) => (prompt.title === 'Theft insurance' ? { content: 'Sure! Customers would ask: what if my bike is stolen?' } : answering(prompt));
      await sync(page('theft', 'Theft insurance', 'Theft insurance covers a new bike for three years.', 'en'));
      const w = worker();
      const [run] = await w.runDue();
      expect(run).toMatchObject({ passages: 0, malformed: 1, failed: false });
      expect(await generated('theft')).toEqual([]);

      // Before the wait is over, no engine tries again.
      const before = llm.requests.length;
      expect(await w.runDue()).toEqual([]);
      expect(await worker('engine-b').runDue()).toEqual([]);
      expect(llm.requests.length).toBe(before);

      reply = answering;
      clock = new Date(clock.getTime() + RETRY_MS);
      const [again] = await w.runDue();
      expect(again).toMatchObject({ passages: 1, questions: 2, malformed: 0 });
      expect((await generated('theft')).map((r) => r.text)).toEqual(['What if my new bike gets stolen?', 'Wat als mijn fiets gestolen wordt?']);
      expect(await registry.metrics()).toMatch(/^botlink_knowledge_ai_question_failures_total\{reason="malformed"\} 1$/m);
    });

    it('a model that is down stops the run at its first request; the workspace waits, then gets its questions', async () => {
      reply = () => ({ status: 503, content: '{"error":{"message":"overloaded"}}' });
      await sync(page('service', 'Bike service', 'A standard service costs 59 euro and takes one day.', 'en'));
      const before = llm.requests.length;
      const w = worker();
      const [run] = await w.runDue();
      expect(run).toMatchObject({ passages: 0, failed: true });
      expect(llm.requests.length - before).toBe(1);
      expect(await generated('service')).toEqual([]);
      expect(await w.runDue()).toEqual([]);

      reply = answering;
      clock = new Date(clock.getTime() + RETRY_MS);
      expect((await w.runDue())[0]).toMatchObject({ passages: 1, failed: false });
      expect((await generated('service')).map((r) => r.language)).toEqual(['en', 'nl']);
    });
  });

  describe('two engines on one database', () => {
    it('write the questions once: the workspace is claimed by one of them', async () => {
      reply = (prompt) => ({ ...answering(prompt), delayMs: 200 });
      await sync(page('tyres', 'Tyre repair', 'We repair a flat tyre while you wait, for 12 euro.', 'en'));
      const before = llm.requests.length;
      const [a, b] = await Promise.all([worker('engine-a').runDue(), worker('engine-b').runDue()]);
      reply = answering;
      expect([...a, ...b].filter((r) => r.passages > 0)).toHaveLength(1);
      expect(llm.requests.length - before).toBe(2);
      expect((await generated('tyres')).map((r) => r.language)).toEqual(['en', 'nl']);
    });
  });

  describe('a disabled workspace', () => {
    it('spends no tokens: its passages are not asked about', async () => {
      const disabled = randomUUID();
      await get().db.insertInto('workspaces').values({ id: disabled, name: 'Closed shop', disabled_at: new Date() }).execute();
      await kb.applyBatch(disabled, { upserts: [page('closed', 'Closing sale', 'Everything must go, 50 percent off.', 'en')], deletes: [] });
      const before = llm.requests.length;
      const runs = await worker('engine-fresh').runDue();
      expect(runs.map((r) => r.workspaceId)).not.toContain(disabled);
      expect(llm.requests.length).toBe(before);
    });
  });

  describe('stopping', () => {
    it('aborts the request in flight, stores nothing and gives the claim back at once', async () => {
      reply = () => ({}); // never answers
      await sync(page('parking', 'Parking', 'Free parking behind the shop.', 'en'));
      // The worker closes its model when it stops: this one has its own.
      const w = worker('engine-stopping', createQuestionsModel({ baseUrl: `${llm.origin}/v1`, apiKey: null, model: 'test-model', timeoutMs: 30_000 }));
      const running = w.runDue();
      await expect.poll(() => llm.requests.length > 0 && prompted(llm.requests.at(-1)!.body).title === 'Parking').toBe(true);
      const started = Date.now();
      await w.stop();
      await running;
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(await generated('parking')).toEqual([]);
      const claim = await get().db.selectFrom('job_claims').selectAll().where('name', '=', `knowledge-ai-questions:${shop}`).executeTakeFirstOrThrow();
      expect(claim.lease_owner).toBeNull();
      expect(new Date(claim.lease_until).getTime()).toBe(0);
      reply = answering;
    });
  });
});
