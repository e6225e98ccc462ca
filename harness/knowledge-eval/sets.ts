/**
 * The knowledge evaluation's sets (docs/performance.md, "Knowledge answers"): the tuning set (./shop.ts), on which
 * the search's rules were built, and the held-out sets (./held-out/), written before any rule change and never used
 * to tune them. The held-out figures are the honest ones.
 */
import type { EvalSet } from './eval-set.ts';
import { heldOutSets } from './held-out/index.ts';
import { evalPages, evalQuestions } from './shop.ts';

export const tuningSet: EvalSet = {
  name: 'tuning',
  title: 'tuning (a bicycle and outdoor shop, English and Dutch)',
  heldOut: false,
  pages: evalPages,
  questions: evalQuestions,
};

export const evalSets: readonly EvalSet[] = [tuningSet, ...heldOutSets];
