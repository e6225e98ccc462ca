/**
 * What an evaluation set of the knowledge evaluation is (docs/performance.md, "Knowledge answers"): a shop's pages and
 * the questions its customers ask, each answerable one naming its page and the words that carry the fact. The tuning
 * set (./shop.ts) and the held-out sets (./held-out/) share this shape; evaluate.ts runs any of them.
 */
import type { SyncUpsertItem } from '../../src/knowledge/knowledge-service.ts';

export type EvalSetLanguage = 'en' | 'nl' | 'de';

export interface EvalSetQuestion {
  language: EvalSetLanguage;
  text: string;
  /** The page that answers it (external_id), or null when no page does. */
  page: string | null;
  /** The reply carries the answer when it contains one of these (case and spaces folded). */
  answer: string[];
}

export interface EvalSet {
  /** kebab-case, names the set's metrics in the benchmark (`second_trade_answered_pct`). */
  name: string;
  /** What the set is, in a few words, for the benchmark's table. */
  title: string;
  /** Held out: never used to tune the search, so its figures are the honest ones. */
  heldOut: boolean;
  pages: readonly SyncUpsertItem[];
  questions: readonly EvalSetQuestion[];
}

/** A page builder for one shop's site: its paragraphs joined as the plugins send a page's text. */
export function pageBuilder(site: string) {
  return (external_id: string, language: EvalSetLanguage, title: string, paragraphs: string[]): SyncUpsertItem => ({
    kind: 'page',
    external_id,
    language,
    title,
    url: `${site}/${external_id}`,
    body: paragraphs.join('\n\n'),
  });
}

/** A question; no page (null) means the pages do not answer it and the reply must be "I don't know". */
export const question = (language: EvalSetLanguage, page: string | null, text: string, ...answer: string[]): EvalSetQuestion => ({ language, text, page, answer });
