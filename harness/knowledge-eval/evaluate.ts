/**
 * The knowledge evaluation (docs/performance.md, "Knowledge answers"): the shop's pages (./shop.ts) synced through the
 * knowledge service into a database, then every question asked the way a turn asks it: the knowledge search in the
 * question's language, then the embedded answerer (no model) on the passages found. Three figures:
 * - answered: answerable questions whose reply carries the answer (one of its `answer` texts);
 * - recall: answerable questions whose page is among the passages a language model would be given;
 * - wrong: unanswerable questions that got anything but "I don't know".
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import { knowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import { composeAnswer } from '../../src/ai/embedded-answerer.ts';
import { createKnowledgeService } from '../../src/knowledge/knowledge-service.ts';
import { evalPages, evalQuestions, type EvalQuestion } from './shop.ts';

export interface QuestionOutcome {
  question: EvalQuestion;
  reply: string;
  source: string;
  /** The external_ids of the passages found, best first. */
  found: string[];
  bestScore: number | null;
  answered: boolean;
  recalled: boolean;
  /** Unanswerable, and answered anyway. */
  wrong: boolean;
}

export interface EvalReport {
  outcomes: QuestionOutcome[];
  answerable: number;
  unanswerable: number;
  answered: number;
  recalled: number;
  wrong: number;
  byLanguage: Record<string, { answerable: number; answered: number; recalled: number; wrong: number }>;
}

/** Case, spaces and the kind of space folded, so "€ 4,95" matches "€ 4,95" however it was typed. */
const fold = (text: string) => text.normalize('NFC').toLowerCase().replace(/\s+/gu, ' ');

export async function evaluateKnowledge(db: Db, questions: readonly EvalQuestion[] = evalQuestions): Promise<EvalReport> {
  const workspaceId = randomUUID();
  await db.insertInto('workspaces').values({ id: workspaceId, name: 'Trail shop' }).execute();
  const kb = createKnowledgeService({ knowledge: knowledgeRepository(db) });
  await kb.applyBatch(workspaceId, { upserts: evalPages, deletes: [] });
  // As a running service has it after the first question: the workspace's words read.
  await kb.warm(workspaceId);

  const outcomes: QuestionOutcome[] = [];
  for (const question of questions) {
    const result = await kb.search(workspaceId, question.text, question.language);
    const step = composeAnswer({ message: question.text, language: question.language, passages: result.passages });
    const reply = fold(step.text);
    const found = result.passages.map((p) => p.externalId);
    const answerable = question.page !== null;
    outcomes.push({
      question,
      reply: step.text,
      source: step.source,
      found,
      bestScore: result.passages[0]?.score ?? null,
      answered: answerable && step.source !== 'fallback' && question.answer.some((a) => reply.includes(fold(a))),
      recalled: answerable && found.includes(question.page!),
      wrong: !answerable && step.source !== 'fallback',
    });
  }
  const byLanguage: EvalReport['byLanguage'] = {};
  for (const o of outcomes) {
    const l = (byLanguage[o.question.language] ??= { answerable: 0, answered: 0, recalled: 0, wrong: 0 });
    if (o.question.page !== null) l.answerable += 1;
    if (o.answered) l.answered += 1;
    if (o.recalled) l.recalled += 1;
    if (o.wrong) l.wrong += 1;
  }
  return {
    outcomes,
    answerable: outcomes.filter((o) => o.question.page !== null).length,
    unanswerable: outcomes.filter((o) => o.question.page === null).length,
    answered: outcomes.filter((o) => o.answered).length,
    recalled: outcomes.filter((o) => o.recalled).length,
    wrong: outcomes.filter((o) => o.wrong).length,
    byLanguage,
  };
}
