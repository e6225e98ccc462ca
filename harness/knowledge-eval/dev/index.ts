/**
 * Development sets: tuned on; the held-out sets are the figure we report.
 *
 * Other trades than the tuning shop (./pet-shop.ts: a pet shop with a grooming salon in English, Dutch and German;
 * ./hotel.ts: a small hotel with a restaurant in English and German), for tuning the search's general mechanisms
 * while the held-out sets stay unseen. The benchmark reports them apart, as "development", without targets;
 * `EVAL_SETS=dev npm run eval` runs only these (docs/performance.md, "knowledge-answers").
 */
import type { EvalSet } from '../eval-set.ts';
import { hotelSet } from './hotel.ts';
import { petShopSet } from './pet-shop.ts';

export const devSets: readonly EvalSet[] = [petShopSet, hotelSet];
