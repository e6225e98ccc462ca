/**
 * The knowledge evaluation as a test (docs/performance.md, "Knowledge answers"): the targets hold on both databases.
 * `npm run eval` prints the same figures with every question that missed.
 */
import { expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { evaluateKnowledge } from '../../harness/knowledge-eval/evaluate.ts';

describeEachDatabase('the built-in AI answers what the knowledge base says (the evaluation)', (get) => {
  it('answers at least 90 % without a model, gives a model the right page for 97 %, and never answers what the pages do not say', async () => {
    const report = await evaluateKnowledge(get().db);
    const missed = report.outcomes.filter((o) => o.question.page !== null && !o.answered).map((o) => `${o.question.text} → ${o.reply}`);
    const wrong = report.outcomes.filter((o) => o.wrong).map((o) => `${o.question.text} → ${o.reply}`);
    expect(report.answerable).toBeGreaterThanOrEqual(120);
    expect(report.unanswerable).toBeGreaterThanOrEqual(20);
    expect(report.answered / report.answerable, missed.join('\n')).toBeGreaterThanOrEqual(0.9);
    expect(report.recalled / report.answerable).toBeGreaterThanOrEqual(0.97);
    expect(wrong).toEqual([]);
    for (const language of ['en', 'nl']) expect(report.byLanguage[language]!.answered / report.byLanguage[language]!.answerable).toBeGreaterThanOrEqual(0.85);
  }, 60_000);
});
