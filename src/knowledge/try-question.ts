/**
 * "Try a question" (docs/knowledge.md): what the knowledge base would use for a question and what the customer would
 * get in the website chat, with and without the integrator, without a conversation.
 *
 * It goes through the same ports a web chat turn does (the knowledge search, the AI port, the web chat's renderer) but
 * records nothing: no session, no turn, no webhook event, nothing the overview counts. With an integration, a
 * `webchat` channel request goes to the endpoint as the dashboard's test button sends it (protocol §4.6), and its
 * outcome feeds the endpoint's health as the test button's does; what the customer would then get follows the bot
 * link's rule (protocol §1.3, as on WhatsApp): a handled answer as it is, otherwise the built-in AI, given a
 * `handled: false` reply as context. Tries are a budget per workspace (docs/knowledge.md, "Try a question").
 */
import { randomUUID } from 'node:crypto';
import type { ChunkOrigin } from '../../db/repositories/knowledge.repository.ts';
import type { RateLimiter } from '../rate-limiter.ts';
import { phrase } from '../ai/phrases.ts';
import type { AiPort } from '../ai/types.ts';
import type { BotLinkExchange } from '../botlink/client.ts';
import { primaryLanguage } from '../text/language.ts';
import type { Handoff } from '../channels-and-handoffs.ts';
import { KNOWLEDGE_CONFIDENCE_THRESHOLD, STRONG_MATCH_SCORE, TRY_EXCERPT_CHARS } from './limits.ts';
import type { KnowledgePassage, KnowledgeSearch } from './types.ts';

/** The channel the answers are tried for: the website chat, whose answers come from the knowledge base. */
const CHANNEL = 'webchat';

export type AnswerSource = 'integrator' | 'ai' | 'knowledge_base' | 'fallback';

export interface TriedPassage {
  /** The chunk's id, and the entry (document) it belongs to (GET /v1/knowledge/entries/{id}). */
  id: string;
  entry_id: string | null;
  /** dashboard: written by hand; sync: from the plugin; website, file: from a knowledge source. */
  origin: 'dashboard' | 'sync' | 'website' | 'file' | null;
  type: 'page' | 'qa' | 'product';
  title: string;
  excerpt: string;
  url: string | null;
  /** 0..1, as the search ranked it. */
  score: number;
  /** The score in words (limits.ts): strong (≥ STRONG_MATCH_SCORE), fair (≥ the confidence threshold), weak. */
  match: 'strong' | 'fair' | 'weak';
}

export interface TriedAnswer {
  /** What the customer would read in the chat. */
  text: string;
  source: AnswerSource;
}

export interface TriedIntegrator {
  outcome: 'answer' | 'no_answer';
  /** 'answer', or why there was none (status, timeout, empty_reply, …). */
  reason: string;
  /** The outcome in a sentence. */
  message: string;
  http_status: number | null;
  latency_ms: number;
  /** The endpoint's reply and handled flag when it answered; null otherwise. */
  reply: string | null;
  handled: boolean | null;
  /** What the endpoint asked for; in a conversation the team would be told (docs/architecture.md, "Handoff"). */
  handoff: Handoff | null;
  answer: TriedAnswer;
}

export interface TryResult {
  question: string;
  language: string;
  passages: TriedPassage[];
  /** Whether the best passage reaches the confidence threshold. */
  confident: boolean;
  /** Without the integrator: the built-in AI from the knowledge base. */
  answer: TriedAnswer;
  /** With the integrator; null when the workspace has none. */
  with_integrator: TriedIntegrator | null;
}

export interface TryDeps {
  search: KnowledgeSearch['search'];
  chunkOrigins: (workspaceId: string, chunkIds: readonly string[]) => Promise<ChunkOrigin[]>;
  ai: AiPort;
  /** The website chat's renderer (src/channels/renderers.ts). */
  render: (text: string, source: AnswerSource, language: string) => string;
  /** Sends a `webchat` channel request to the workspace's endpoint; undefined when it has none. */
  askIntegrator: (workspaceId: string, input: { message: string; language: string; sessionId: string }) => Promise<BotLinkExchange | undefined>;
  /** The language of a question asked without one (src/text/detect-language.ts); null when it cannot be told. */
  detectLanguage: (text: string) => string | null;
  /** The tries' budget, keyed per workspace (TRY_QUESTION_RATE_LIMIT): each is model calls and a channel request. */
  limiter: RateLimiter;
  /** Notes that the workspace tried a question (the Overview's first-day list); its failure never fails the try. */
  tried?: (workspaceId: string) => Promise<void>;
}

/** One step of the AI as a web chat turn takes it, rendered; any failure is the honest fallback sentence. */
async function answerWith(deps: Pick<TryDeps, 'ai' | 'render'>, question: string, language: string, passages: KnowledgePassage[], integratorContext: string | null): Promise<TriedAnswer> {
  let text = '';
  let source: AnswerSource = 'fallback';
  try {
    const step = await deps.ai.step({ channel: CHANNEL, language, message: question, history: [], passages, integratorContext, tools: [], rounds: [] });
    if (step.kind === 'answer') ({ text, source } = step);
  } catch {
    // The session machine answers a failed AI step with the fallback too (docs/architecture.md, "Never breaks").
  }
  if (text.trim() === '') text = phrase('dont_know', language);
  return { text: deps.render(text, source, language), source };
}

/**
 * The website chat's answer to a question from the knowledge base alone, as "Try a question" gives it without the
 * integrator: what a saved check keeps and what its re-runs compare (docs/scenarios.md, "Answers a knowledge change
 * moved"). No budget and no channel request here: the caller bounds how often it asks.
 */
export function createKnowledgeAnswer(deps: Pick<TryDeps, 'search' | 'ai' | 'render' | 'detectLanguage'>) {
  return async (workspaceId: string, question: string, language?: string): Promise<{ language: string; answer: TriedAnswer }> => {
    const told = primaryLanguage(language) || deps.detectLanguage(question) || 'en';
    const found = await deps.search(workspaceId, question, told);
    return { language: told, answer: await answerWith(deps, question, told, found.passages, null) };
  };
}

export type KnowledgeAnswer = ReturnType<typeof createKnowledgeAnswer>;

export function createTryQuestion(deps: TryDeps) {
  return {
    async try(workspaceId: string, input: { question: string; language?: string | undefined }): Promise<TryResult> {
      deps.limiter.takeOrRefuse(workspaceId, (seconds) => `This workspace tried more questions than the model and the endpoint may be asked at once; try again in ${seconds} s.`);
      const question = input.question.trim();
      void deps.tried?.(workspaceId).catch(() => undefined);
      const language = primaryLanguage(input.language) || deps.detectLanguage(question) || 'en';
      const [found, exchange] = await Promise.all([
        deps.search(workspaceId, question, language),
        deps.askIntegrator(workspaceId, { message: question, language, sessionId: `try-${randomUUID()}` }),
      ]);
      const origins = new Map((await deps.chunkOrigins(workspaceId, found.passages.map((p) => p.id))).map((o) => [o.chunk_id, o]));
      const passages = found.passages.map((p): TriedPassage => {
        const origin = origins.get(p.id);
        return {
          id: p.id,
          entry_id: origin?.document_id ?? null,
          origin: origin?.origin ?? null,
          type: p.source === 'product' ? 'product' : origin?.qa ? 'qa' : 'page',
          title: p.title,
          excerpt: p.text.length > TRY_EXCERPT_CHARS ? `${p.text.slice(0, TRY_EXCERPT_CHARS).trimEnd()}…` : p.text,
          url: p.url,
          score: p.score,
          match: p.score >= STRONG_MATCH_SCORE ? 'strong' : p.score >= KNOWLEDGE_CONFIDENCE_THRESHOLD ? 'fair' : 'weak',
        };
      });
      const answer = await answerWith(deps, question, language, found.passages, null);
      return { question, language, passages, confident: found.confident, answer, with_integrator: exchange ? await withIntegrator(exchange) : null };

      async function withIntegrator(exchange: BotLinkExchange): Promise<TriedIntegrator> {
        const o = exchange.outcome;
        const replied = o.outcome === 'answer' ? o.answer : null;
        let tried: TriedAnswer;
        if (replied?.handled) tried = { text: deps.render(replied.reply, 'integrator', language), source: 'integrator' };
        else if (replied) tried = await answerWith(deps, question, language, found.passages, replied.reply);
        else tried = answer;
        return {
          outcome: o.outcome,
          reason: o.outcome === 'answer' ? 'answer' : o.reason,
          message: o.outcome === 'answer' ? (o.answer.handled ? 'The endpoint answered.' : 'The endpoint answered with handled false.') : o.message,
          http_status: exchange.httpStatus,
          latency_ms: Math.round(exchange.latencyMs),
          reply: replied?.reply ?? null,
          handled: replied?.handled ?? null,
          handoff: replied?.handoff ?? null,
          answer: tried,
        };
      }
    },
  };
}

export type TryQuestion = ReturnType<typeof createTryQuestion>;
