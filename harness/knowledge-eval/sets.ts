/**
 * The knowledge evaluation's sets (docs/performance.md, "Knowledge answers"): the tuning set (./shop.ts), on which
 * the search's rules were built; the development sets (./dev/), other trades to tune general mechanisms on; and the
 * held-out sets (./held-out/), written before any rule change and never used to tune them. The held-out figures are
 * the honest ones.
 */
import { devSets } from './dev/index.ts';
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

export const evalSets: readonly EvalSet[] = [tuningSet, ...devSets, ...heldOutSets];

/** The groups `EVAL_SETS` names (docs/performance.md, "knowledge-answers"). */
export const evalSetGroups: Readonly<Record<string, readonly EvalSet[]>> = {
  tuning: [tuningSet],
  dev: devSets,
  'held-out': heldOutSets,
};

/**
 * The sets a comma-separated list of groups names (`dev`, `tuning,dev`), in evalSets' order; every set when the list
 * is empty or absent. An unknown group throws, naming the ones there are.
 */
export function chooseEvalSets(groups: string | undefined): readonly EvalSet[] {
  const names = (groups ?? '').split(',').map((g) => g.trim()).filter((g) => g !== '');
  if (names.length === 0) return evalSets;
  const chosen = new Set<EvalSet>();
  for (const name of names) {
    const group = Object.hasOwn(evalSetGroups, name) ? evalSetGroups[name] : undefined;
    if (group === undefined) throw new RangeError(`EVAL_SETS: unknown set group ${JSON.stringify(name)} (there are ${Object.keys(evalSetGroups).join(', ')})`);
    for (const set of group) chosen.add(set);
  }
  return evalSets.filter((set) => chosen.has(set));
}
