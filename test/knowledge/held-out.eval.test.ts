/**
 * The held-out sets of the knowledge evaluation as a test (issue 36; docs/performance.md, "Knowledge answers"): sets
 * written before any change to the search's rules and never used to tune them, with the targets as thresholds,
 * on both databases. `npm run eval` prints the same figures with every question that missed.
 *
 * Issue 36's targets are not met yet (docs/performance.md, "Knowledge answers"). Until they are, each test holds the
 * figure the search reached when it was last recorded (`HELD`), so a change that makes customers' answers worse fails
 * here; a change that reaches a target raises its `HELD` figure to the target, and the target then stays.
 */
import { expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { evaluateKnowledge, setProblems, type EvalReport } from '../../harness/knowledge-eval/evaluate.ts';
import { acrossLanguagesSet } from '../../harness/knowledge-eval/held-out/across-languages.ts';
import { germanSet } from '../../harness/knowledge-eval/held-out/german.ts';
import { secondTradeSet } from '../../harness/knowledge-eval/held-out/second-trade.ts';

const missed = (report: EvalReport) =>
  report.outcomes.filter((o) => o.question.page !== null && !o.answered).map((o) => `${o.question.language}: ${o.question.text} → ${o.reply}`).join('\n');
const notHandedOver = (report: EvalReport) =>
  report.outcomes.filter((o) => o.question.page !== null && !o.factHandedOver).map((o) => `${o.question.language}: ${o.question.text} → ${o.found.join(', ')}`).join('\n');
const wrong = (report: EvalReport) => report.outcomes.filter((o) => o.wrong).map((o) => `${o.question.language}: ${o.question.text} → ${o.reply}`);

/** Issue 36's targets on the held-out sets. */
const TARGET = { answered: 0.8, perLanguage: 0.7, factHandedOver: 0.97, share: 0.25, wrong: 0 } as const;
/** What the search held at its last record (bench/results/knowledge-answers.json), below the targets. */
const HELD = {
  secondTrade: { answered: 0.61, en: 0.58, nl: 0.65, factHandedOver: 0.93, wrong: 8 },
  german: { answered: 0.57, factHandedOver: 0.95 },
  acrossLanguages: { factHandedOver: 0.85 },
} as const;

describeEachDatabase('the built-in AI answers customers of a shop it was not tuned on (the held-out sets)', (get) => {
  it('every answerable question names a page of its set that holds its answer', () => {
    for (const set of [secondTradeSet, germanSet, acrossLanguagesSet]) expect(setProblems(set)).toEqual([]);
  });

  it('answers a second trade without a model no worse than last recorded (target 80 %, English and Dutch 70 % each, none of what its pages do not say)', async () => {
    const report = await evaluateKnowledge(get().db, secondTradeSet);
    expect(report.answered / report.answerable, missed(report)).toBeGreaterThanOrEqual(HELD.secondTrade.answered);
    for (const language of ['en', 'nl'] as const) {
      const l = report.byLanguage[language]!;
      expect(l.answered / l.answerable, `${language}\n${missed(report)}`).toBeGreaterThanOrEqual(HELD.secondTrade[language]);
    }
    expect(wrong(report).length, wrong(report).join('\n')).toBeLessThanOrEqual(HELD.secondTrade.wrong);
    expect(report.factHandedOver / report.answerable, notHandedOver(report)).toBeGreaterThanOrEqual(HELD.secondTrade.factHandedOver);
    expect(report.share.max).toBeLessThanOrEqual(TARGET.share);
  }, 60_000);

  it('answers a German shop without a model no worse than last recorded (target 70 %) and never answers what its pages do not say', async () => {
    const report = await evaluateKnowledge(get().db, germanSet);
    expect(report.answered / report.answerable, missed(report)).toBeGreaterThanOrEqual(HELD.german.answered);
    expect(wrong(report)).toEqual([]);
    expect(report.factHandedOver / report.answerable, notHandedOver(report)).toBeGreaterThanOrEqual(HELD.german.factHandedOver);
    expect(report.share.max).toBeLessThanOrEqual(TARGET.share);
  }, 60_000);

  it('hands a model the English passage that answers a Dutch or German question no less often than last recorded (target 97 %), and never answers what the pages do not say', async () => {
    const report = await evaluateKnowledge(get().db, acrossLanguagesSet);
    expect(report.factHandedOver / report.answerable, notHandedOver(report)).toBeGreaterThanOrEqual(HELD.acrossLanguages.factHandedOver);
    expect(wrong(report)).toEqual([]);
    expect(report.share.max).toBeLessThanOrEqual(TARGET.share);
  }, 60_000);
});
