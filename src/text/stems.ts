/**
 * Snowball stems of folded words (src/text/words.ts), as PostgreSQL's english, dutch, german and french text-search
 * configurations stem them, so the ranking in the process compares what the database matched ("deliveries" and
 * "delivery", "Fahrräder" and "Fahrrad"). @orama/stemmers is a maintained port of the Snowball algorithms (the ones
 * PostgreSQL ships), plain functions without dependencies; a port of our own would be the same code, unmaintained.
 *
 * A word is stemmed once per process and language: a passage of 200 words would otherwise cost about 0.4 ms, ten of
 * them each search. The cache is bounded and starts over when full (the words of a shop repeat; a cleared cache only
 * costs a few stems again).
 */
import { stemmer as dutch } from '@orama/stemmers/dutch';
import { stemmer as english } from '@orama/stemmers/english';
import { stemmer as french } from '@orama/stemmers/french';
import { stemmer as german } from '@orama/stemmers/german';

const STEMMERS: Readonly<Record<string, (word: string) => string>> = { en: english, nl: dutch, de: german, fr: french };

/** Stems kept per language before the cache starts over. */
const MAX_CACHED_STEMS = 50_000;
const caches = new Map<string, Map<string, string>>();

/** Whether a primary language subtag has a stemmer (others compare words as they are). */
export function hasStemmer(language: string): boolean {
  return STEMMERS[language] !== undefined;
}

/** The word's stem in the language (a primary subtag); the word itself for a language without a stemmer. */
export function stem(language: string, word: string): string {
  const stemmer = STEMMERS[language];
  if (stemmer === undefined) return word;
  let cache = caches.get(language);
  if (cache === undefined) caches.set(language, (cache = new Map()));
  let stemmed = cache.get(word);
  if (stemmed === undefined) {
    if (cache.size >= MAX_CACHED_STEMS) cache.clear();
    stemmed = stemmer(word);
    cache.set(word, stemmed);
  }
  return stemmed;
}
