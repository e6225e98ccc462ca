/**
 * The knowledge evaluation's development sets (docs/performance.md, "knowledge-answers"): fit to measure with (every
 * answer on its page, no price inside another), and chosen alone with EVAL_SETS=dev.
 */
import { describe, expect, it } from 'vitest';
import { devSets } from '../../harness/knowledge-eval/dev/index.ts';
import { setProblems } from '../../harness/knowledge-eval/evaluate.ts';
import { chooseEvalSets, evalSets, tuningSet } from '../../harness/knowledge-eval/sets.ts';

const fold = (text: string) => text.normalize('NFC').toLowerCase().replace(/\s+/gu, ' ');

describe('the development sets', () => {
  it('name, for every answerable question, a page of the set that holds its answer', () => {
    expect(devSets.map((set) => set.name)).toEqual(['pet-shop', 'hotel']);
    expect(devSets.flatMap((set) => setProblems(set))).toEqual([]);
  });

  it('hold no answer that is part of a longer number on any page of its set ("95 €" in "4,95 €")', () => {
    const inside: string[] = [];
    for (const set of devSets) {
      const bodies = set.pages.map((p) => fold(p.kind === 'page' ? p.body : ''));
      for (const answer of set.questions.flatMap((q) => q.answer).map(fold)) {
        for (const body of bodies) {
          for (let at = body.indexOf(answer); at >= 0; at = body.indexOf(answer, at + 1)) {
            const before = body.slice(Math.max(0, at - 2), at);
            const after = body.slice(at + answer.length, at + answer.length + 2);
            if ((/^[\d€]/u.test(answer) && /[\d.,€] ?$/u.test(before)) || (/[\d€]$/u.test(answer) && /^ ?[.,]?\d/u.test(after))) {
              inside.push(`${set.name}: "${answer}" in "${body.slice(at - 6, at + answer.length + 6)}"`);
            }
          }
        }
      }
    }
    expect(inside).toEqual([]);
  });

  it('are the only sets EVAL_SETS=dev runs, every set runs without it, and an unknown group is refused', () => {
    expect(chooseEvalSets('dev')).toEqual(devSets);
    expect(chooseEvalSets(undefined)).toEqual(evalSets);
    expect(chooseEvalSets(' tuning , dev ')).toEqual([tuningSet, ...devSets]);
    expect(() => chooseEvalSets('constructor')).toThrow(/unknown set group "constructor"/);
  });
});
