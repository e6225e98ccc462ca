/**
 * How well the built-in AI answers from the knowledge base (docs/performance.md, "Knowledge answers"): the evaluation
 * of harness/knowledge-eval (six pages of a small shop in English and Dutch, 120 questions worded the way customers write
 * and 26 the pages do not answer), on PGlite as `npm start` runs it. Deterministic: every run gives the same figures
 * (`npm run eval` runs it once). Also reported: where the confidence threshold sits between the highest score of an
 * unanswerable question and the lowest of an answered one, which is how it was calibrated.
 */
import { migrate, openDatabase } from '../db/database.ts';
import { KNOWLEDGE_CONFIDENCE_THRESHOLD } from '../src/knowledge/limits.ts';
import { evaluateKnowledge } from '../harness/knowledge-eval/evaluate.ts';
import type { Metric, RunResult } from './lib/benchmark.ts';

export const name = 'knowledge-answers';
export const title = 'Knowledge answers: the built-in AI without a model';

const pct = (n: number, of: number) => (of === 0 ? Number.NaN : (100 * n) / of);

export async function run(): Promise<RunResult> {
  const opened = await openDatabase({});
  try {
    await migrate(opened.db);
    const report = await evaluateKnowledge(opened.db);
    const answeredScores = report.outcomes.filter((o) => o.answered).map((o) => o.bestScore ?? 0);
    const unanswerableScores = report.outcomes.filter((o) => o.question.page === null).map((o) => o.bestScore ?? 0);
    const metrics: Metric[] = [
      { key: 'answered_pct', label: 'answerable questions answered without a model', unit: '%', digits: 1, value: pct(report.answered, report.answerable), target: { op: '>=', value: 90 } },
      { key: 'recall_pct', label: 'answerable questions whose page a model would be given (top 5)', unit: '%', digits: 1, value: pct(report.recalled, report.answerable), target: { op: '>=', value: 97 } },
      { key: 'wrong', label: 'unanswerable questions answered anyway', unit: '', value: report.wrong, target: { op: '=', value: 0 } },
    ];
    for (const [language, l] of Object.entries(report.byLanguage)) {
      metrics.push(
        { key: `${language}_answered_pct`, label: `answered without a model, ${language === 'nl' ? 'Dutch' : 'English'}`, unit: '%', digits: 1, value: pct(l.answered, l.answerable) },
        { key: `${language}_recall_pct`, label: `page given to a model, ${language === 'nl' ? 'Dutch' : 'English'}`, unit: '%', digits: 1, value: pct(l.recalled, l.answerable) },
      );
    }
    metrics.push(
      { key: 'lowest_answered_score', label: 'lowest best-passage score of an answered question', unit: '', digits: 2, value: Math.min(...answeredScores) },
      { key: 'highest_unanswerable_score', label: 'highest best-passage score of an unanswerable question', unit: '', digits: 2, value: Math.max(...unanswerableScores) },
      { key: 'confidence_threshold', label: 'confidence threshold (src/knowledge/limits.ts)', unit: '', digits: 2, value: KNOWLEDGE_CONFIDENCE_THRESHOLD },
    );
    const missed = report.outcomes
      .filter((o) => (o.question.page !== null && !o.answered) || o.wrong)
      .map((o) => ({
        language: o.question.language,
        question: o.question.text,
        expected: o.question.page,
        reply: o.reply,
        found: o.found.slice(0, 3),
        score: o.bestScore,
      }));
    return {
      metrics,
      invalid: [],
      setup:
        `${report.answerable} answerable and ${report.unanswerable} unanswerable customer questions (half English, half Dutch; other words than the pages, typos, ` +
        `no capitals) against six pages of a small shop in both languages (harness/knowledge-eval/shop.ts), synced through the knowledge service into PGlite; ` +
        'each question searched in its language and answered by the embedded answerer from the passages found, as a turn without a language model does. ' +
        'Answered: the reply holds the words that carry the answer. Page given to a model: the right page among the passages a model would get.',
      parameters: { answerable: report.answerable, unanswerable: report.unanswerable, threshold: KNOWLEDGE_CONFIDENCE_THRESHOLD },
      details: { missed },
    };
  } finally {
    await opened.close();
  }
}
