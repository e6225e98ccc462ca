/**
 * The held-out sets of the knowledge evaluation (issue 36; docs/performance.md, "Knowledge answers"): written before
 * any change to the search's rules and never used to tune them. Changing a question after a search change voids the
 * figure.
 */
import type { EvalSet } from '../eval-set.ts';
import { acrossLanguagesSet } from './across-languages.ts';
import { germanSet } from './german.ts';
import { secondTradeSet } from './second-trade.ts';

export const heldOutSets: readonly EvalSet[] = [secondTradeSet, germanSet, acrossLanguagesSet];
