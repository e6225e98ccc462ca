/**
 * The knowledge evaluation (docs/performance.md, "Knowledge answers"): a set's pages (./sets.ts: the tuning shop of
 * ./shop.ts, or a held-out set of ./held-out/) synced through the knowledge service into a workspace of their own,
 * then every question asked the way a turn asks it: the knowledge search in the question's language, then the
 * embedded answerer (no model) on the passages found. Per question and per set:
 * - answered: answerable questions whose reply carries the answer (one of its `answer` texts);
 * - recall: answerable questions whose page is among the passages a language model would be given (the search's
 *   passages, DEFAULT_SEARCH_LIMIT at most);
 * - fact handed over: answerable questions for which one of those passages' text holds the answer, so a model could
 *   answer it;
 * - share handed over: those passages against all passages of the workspace (its chunks), what a model reads of the
 *   knowledge base per question;
 * - wrong: unanswerable questions that got anything but "I don't know".
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import { knowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import { composeAnswer } from '../../src/ai/embedded-answerer.ts';
import { createKnowledgeService } from '../../src/knowledge/knowledge-service.ts';
import type { EvalSet, EvalSetQuestion } from './eval-set.ts';
import { tuningSet } from './sets.ts';

export interface QuestionOutcome {
  question: EvalSetQuestion;
  reply: string;
  source: string;
  /** The external_ids of the passages found, best first. */
  found: string[];
  bestScore: number | null;
  answered: boolean;
  recalled: boolean;
  /** Answerable, and one of the passages a model would be given holds the answer. */
  factHandedOver: boolean;
  /** The passages a model would be given, as a share of all the workspace's passages (0..1). */
  share: number;
  /** Unanswerable, and answered anyway. */
  wrong: boolean;
}

export interface Tally {
  answerable: number;
  unanswerable: number;
  answered: number;
  recalled: number;
  factHandedOver: number;
  wrong: number;
}

export interface EvalReport extends Tally {
  set: EvalSet;
  outcomes: QuestionOutcome[];
  /** All passages (chunks) of the set's workspace. */
  passages: number;
  /** Share of the knowledge base handed over per question, over every question of the set (0..1). */
  share: { mean: number; max: number };
  byLanguage: Record<string, Tally>;
}

/** Case, spaces and the kind of space folded, so "€ 4,95" matches "€ 4,95" however it was typed. */
const fold = (text: string) => text.normalize('NFC').toLowerCase().replace(/\s+/gu, ' ');

/**
 * What makes a set unfit to measure with, one sentence each: an answerable question whose page is not in the set,
 * or whose answer its page's text does not hold (the answer is the fact as the page's text writes it, not its title).
 */
export function setProblems(set: EvalSet): string[] {
  const bodies = new Map(set.pages.map((p) => [p.external_id, fold(p.kind === 'page' ? p.body : (p.description ?? ''))]));
  const problems: string[] = [];
  for (const q of set.questions) {
    if (q.page === null) continue;
    const body = bodies.get(q.page);
    if (body === undefined) problems.push(`${set.name}: "${q.text}" names page ${q.page}, which the set does not have`);
    else if (!q.answer.some((a) => body.includes(fold(a)))) problems.push(`${set.name}: "${q.text}": page ${q.page} holds none of ${JSON.stringify(q.answer)}`);
  }
  return problems;
}

function tally(outcomes: readonly QuestionOutcome[]): Tally {
  const count = (pick: (o: QuestionOutcome) => boolean) => outcomes.filter(pick).length;
  return {
    answerable: count((o) => o.question.page !== null),
    unanswerable: count((o) => o.question.page === null),
    answered: count((o) => o.answered),
    recalled: count((o) => o.recalled),
    factHandedOver: count((o) => o.factHandedOver),
    wrong: count((o) => o.wrong),
  };
}

export async function evaluateKnowledge(db: Db, set: EvalSet = tuningSet): Promise<EvalReport> {
  const workspaceId = randomUUID();
  await db.insertInto('workspaces').values({ id: workspaceId, name: set.title.slice(0, 100) }).execute();
  const kb = createKnowledgeService({ knowledge: knowledgeRepository(db) });
  await kb.applyBatch(workspaceId, { upserts: [...set.pages], deletes: [] });
  // As a running service has it after the first question: the workspace's words read.
  await kb.warm(workspaceId);
  const { chunks } = await db
    .selectFrom('knowledge_chunks')
    .where('workspace_id', '=', workspaceId)
    .select((eb) => eb.fn.countAll<string>().as('chunks'))
    .executeTakeFirstOrThrow();
  const passages = Number(chunks);

  const outcomes: QuestionOutcome[] = [];
  for (const question of set.questions) {
    const result = await kb.search(workspaceId, question.text, question.language);
    const step = composeAnswer({ message: question.text, language: question.language, passages: result.passages });
    const reply = fold(step.text);
    const found = result.passages.map((p) => p.externalId);
    const answerable = question.page !== null;
    const holds = (text: string) => question.answer.some((a) => text.includes(fold(a)));
    outcomes.push({
      question,
      reply: step.text,
      source: step.source,
      found,
      bestScore: result.passages[0]?.score ?? null,
      answered: answerable && step.source !== 'fallback' && holds(reply),
      recalled: answerable && found.includes(question.page!),
      factHandedOver: answerable && result.passages.some((p) => holds(fold(p.text))),
      share: passages === 0 ? 0 : result.passages.length / passages,
      wrong: !answerable && step.source !== 'fallback',
    });
  }
  const byLanguage: EvalReport['byLanguage'] = {};
  for (const language of new Set(outcomes.map((o) => o.question.language))) {
    byLanguage[language] = tally(outcomes.filter((o) => o.question.language === language));
  }
  const shares = outcomes.map((o) => o.share);
  return {
    set,
    outcomes,
    passages,
    ...tally(outcomes),
    share: { mean: shares.length ? shares.reduce((a, b) => a + b, 0) / shares.length : 0, max: Math.max(0, ...shares) },
    byLanguage,
  };
}
