import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/rate-limiter.ts';
import { phrase } from '../../src/ai/phrases.ts';
import type { AiStepInput } from '../../src/ai/types.ts';
import type { BotLinkExchange } from '../../src/botlink/client.ts';
import { KNOWLEDGE_CONFIDENCE_THRESHOLD, STRONG_MATCH_SCORE, TRY_QUESTION_RATE_LIMIT } from '../../src/knowledge/limits.ts';
import { createTryQuestion, type TryDeps } from '../../src/knowledge/try-question.ts';
import type { KnowledgePassage } from '../../src/knowledge/types.ts';

const passage = (id: string, score: number, text = 'Parcels to Belgium arrive within three working days.'): KnowledgePassage => ({
  id,
  source: 'page',
  externalId: `doc-${id}`,
  title: 'Do you ship to Belgium?',
  url: null,
  text,
  score,
});

function harness(options: { passages?: KnowledgePassage[]; exchange?: BotLinkExchange; ai?: (input: AiStepInput) => Promise<string>; detected?: string | null; burst?: number } = {}) {
  const aiInputs: AiStepInput[] = [];
  const asked: Array<{ message: string; language: string; sessionId: string }> = [];
  const searched: string[] = [];
  const deps: TryDeps = {
    async search(_workspaceId, _query, language) {
      searched.push(language);
      const passages = options.passages ?? [];
      return { passages, confident: (passages[0]?.score ?? 0) >= KNOWLEDGE_CONFIDENCE_THRESHOLD, strategy: passages.length ? 'precise' : 'none', tookMs: 1 };
    },
    async chunkOrigins(_workspaceId, ids) {
      return ids.map((id) => ({ chunk_id: id, document_id: `doc-${id}`, origin: 'dashboard' as const, qa: true }));
    },
    ai: {
      name: 'openai',
      async step(input) {
        aiInputs.push(input);
        return { kind: 'answer', text: options.ai ? await options.ai(input) : 'The model says: three days.', source: 'ai' };
      },
    },
    render: (text, source) => `[${source}] ${text}`,
    async askIntegrator(_workspaceId, input) {
      asked.push(input);
      return options.exchange;
    },
    detectLanguage: () => (options.detected === undefined ? null : options.detected),
    // A clock that stands still: the burst is all there is.
    limiter: createRateLimiter(TRY_QUESTION_RATE_LIMIT, { now: () => 0, ...(options.burst ? { burst: options.burst } : {}) }),
  };
  return { tryQuestion: createTryQuestion(deps), aiInputs, asked, searched };
}

const answered = (reply: string, handled: boolean): BotLinkExchange => ({
  outcome: { outcome: 'answer', answer: { reply, handled, handoff: null, customer: {} }, problems: [] },
  httpStatus: 200,
  latencyMs: 12.4,
  firstByteMs: 10,
  body: Buffer.from('{}'),
});

describe('Try a question', () => {
  it('gives the AI what a web chat turn gives it (the passages, no history, no tools) and shows its answer rendered for the chat', async () => {
    const { tryQuestion, aiInputs } = harness({ passages: [passage('a', 0.5)] });
    const result = await tryQuestion.try('ws', { question: '  How long to Belgium?  ', language: 'en' });
    expect(aiInputs).toHaveLength(1);
    expect(aiInputs[0]).toMatchObject({ channel: 'webchat', language: 'en', message: 'How long to Belgium?', history: [], tools: [], rounds: [], integratorContext: null });
    expect(aiInputs[0]!.passages.map((p) => p.id)).toEqual(['a']);
    expect(result.answer).toEqual({ text: '[ai] The model says: three days.', source: 'ai' });
    expect(result.with_integrator).toBeNull();
  });

  it('says each score in words: strong, fair (the confidence threshold), weak', async () => {
    const { tryQuestion } = harness({ passages: [passage('a', STRONG_MATCH_SCORE), passage('b', KNOWLEDGE_CONFIDENCE_THRESHOLD), passage('c', KNOWLEDGE_CONFIDENCE_THRESHOLD - 0.01)] });
    const result = await tryQuestion.try('ws', { question: 'Belgium?', language: 'en' });
    expect(result.passages.map((p) => [p.id, p.match, p.entry_id, p.origin, p.type])).toEqual([
      ['a', 'strong', 'doc-a', 'dashboard', 'qa'],
      ['b', 'fair', 'doc-b', 'dashboard', 'qa'],
      ['c', 'weak', 'doc-c', 'dashboard', 'qa'],
    ]);
  });

  it('cuts a long passage to an excerpt', async () => {
    const { tryQuestion } = harness({ passages: [passage('a', 0.5, 'word '.repeat(200))] });
    const [p] = (await tryQuestion.try('ws', { question: 'word', language: 'en' })).passages;
    expect(p!.excerpt.length).toBeLessThanOrEqual(301);
    expect(p!.excerpt.endsWith('…')).toBe(true);
  });

  it('a failing AI gives the honest fallback sentence in the language asked, as a turn would', async () => {
    const { tryQuestion } = harness({ ai: async () => Promise.reject(new Error('model down')) });
    const result = await tryQuestion.try('ws', { question: 'Verzenden jullie naar België?', language: 'nl' });
    expect(result.answer).toEqual({ text: `[fallback] ${phrase('dont_know', 'nl')}`, source: 'fallback' });
  });

  it('the language: the primary subtag of the one given; else the one detected; else English', async () => {
    const given = harness();
    expect((await given.tryQuestion.try('ws', { question: 'Hoi', language: 'nl-BE' })).language).toBe('nl');
    expect(given.searched).toEqual(['nl']);
    expect((await harness({ detected: 'de' }).tryQuestion.try('ws', { question: 'Liefern Sie nach Belgien?' })).language).toBe('de');
    expect((await harness({ detected: null }).tryQuestion.try('ws', { question: 'ok' })).language).toBe('en');
  });

  it("beyond the workspace's burst is refused 429 before the search, the model and the endpoint are asked; another workspace is not", async () => {
    const { tryQuestion, aiInputs, asked, searched } = harness({ passages: [passage('a', 0.5)], burst: 3 });
    for (let i = 0; i < 3; i++) await tryQuestion.try('ws', { question: 'Belgium?', language: 'en' });
    await expect(tryQuestion.try('ws', { question: 'Belgium?', language: 'en' })).rejects.toMatchObject({ code: 'rate_limited', status: 429, details: { retry_after: 10 } });
    expect([aiInputs.length, asked.length, searched.length]).toEqual([3, 3, 3]);
    expect((await tryQuestion.try('other', { question: 'Belgium?', language: 'en' })).answer.source).toBe('ai');
  });

  describe('with the integrator', () => {
    it('sends the question as a try-… channel request; a handled reply is what the customer gets, and the AI is asked once', async () => {
      const { tryQuestion, asked, aiInputs } = harness({ passages: [passage('a', 0.5)], exchange: answered('Order 1 ships today.', true) });
      const result = await tryQuestion.try('ws', { question: 'Where is order 1?', language: 'en' });
      expect(asked).toEqual([{ message: 'Where is order 1?', language: 'en', sessionId: expect.stringMatching(/^try-[0-9a-f-]{36}$/) }]);
      expect(result.with_integrator).toMatchObject({ outcome: 'answer', handled: true, reply: 'Order 1 ships today.', latency_ms: 12, http_status: 200 });
      expect(result.with_integrator!.answer).toEqual({ text: '[integrator] Order 1 ships today.', source: 'integrator' });
      expect(aiInputs).toHaveLength(1);
    });

    it('handled false: the built-in AI answers with the reply as context', async () => {
      const { tryQuestion, aiInputs } = harness({ passages: [passage('a', 0.5)], exchange: answered('Orders only here.', false), ai: async (input) => `context: ${input.integratorContext ?? 'none'}` });
      const result = await tryQuestion.try('ws', { question: 'Belgium?', language: 'en' });
      expect(aiInputs.map((i) => i.integratorContext)).toEqual([null, 'Orders only here.']);
      expect(result.answer.text).toBe('[ai] context: none');
      expect(result.with_integrator!.answer).toEqual({ text: '[ai] context: Orders only here.', source: 'ai' });
    });

    it('no valid answer: the built-in AI alone, the same answer as without', async () => {
      const exchange: BotLinkExchange = {
        outcome: { outcome: 'no_answer', reason: 'timeout', message: 'No answer within 6000 ms.', problems: [] },
        httpStatus: null,
        latencyMs: 6000,
        firstByteMs: null,
        body: Buffer.alloc(0),
      };
      const { tryQuestion, aiInputs } = harness({ passages: [passage('a', 0.5)], exchange });
      const result = await tryQuestion.try('ws', { question: 'Belgium?', language: 'en' });
      expect(result.with_integrator).toMatchObject({ outcome: 'no_answer', reason: 'timeout', message: 'No answer within 6000 ms.', reply: null, handled: null, http_status: null });
      expect(result.with_integrator!.answer).toEqual(result.answer);
      expect(aiInputs).toHaveLength(1);
    });
  });
});
