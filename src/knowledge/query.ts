/**
 * What a customer's question asks the knowledge base (docs/architecture.md, "Knowledge answers"): its meaningful words
 * as groups, one per thing it is about, each group with the words that mean the same (the thesaurus), the known word a
 * typo stands for, and the known head of an unknown compound. The search wants every group (each by any of its
 * words) for a precise hit, and any word of any group for recall; a passage's relevance is the weighted share of the
 * groups it holds (`relevance`).
 */
import { keywords, STOPWORDS, wordFound, words } from '../text/words.ts';
import { SCENE_PHRASES, thesaurusFor, type Thesaurus } from './thesaurus.ts';
import type { Vocabulary } from './vocabulary.ts';

export interface QueryGroup {
  /** What the customer wrote for it (folded). */
  said: string;
  /** Ways to find it, each a phrase (a list of words, all of which must be there); what was said comes first. */
  alternatives: string[][];
  /** The known words the workspace's vocabulary reads a typo or an unknown compound as (what the customer meant). */
  meant?: string[];
}

/** Most groups a question is searched with: the rest of a long message adds little and costs every search. */
export const MAX_QUERY_GROUPS = 12;

interface Entry {
  phrase: string[];
  group: readonly string[];
}

const entriesByLanguage = new Map<string, Entry[]>();
/** The thesaurus's entries, longest phrase first, so "send back" wins over "send". */
function entriesFor(language: string): Entry[] {
  let entries = entriesByLanguage.get(language);
  if (!entries) {
    const thesaurus: Thesaurus = thesaurusFor(language);
    entries = thesaurus.flatMap((group) => group.map((alt) => ({ phrase: words(alt), group })));
    entries.sort((a, b) => b.phrase.length - a.phrase.length);
    entriesByLanguage.set(language, entries);
  }
  return entries;
}

/** Words a two-word phrase may have between its words: "send something back", "betalen we … terug". */
const MAX_PHRASE_GAP = 2;

/**
 * Where the phrase's last word is when the phrase starts at `at`, or -1. A two-word phrase may have up to
 * MAX_PHRASE_GAP other words in between (people split "send back" and Dutch splits its verbs).
 */
function phraseAt(tokens: readonly string[], at: number, phrase: readonly string[]): number {
  if (at + phrase.length > tokens.length) return -1;
  if (phrase.every((w, i) => tokens[at + i] === w)) return at + phrase.length - 1;
  if (phrase.length !== 2 || tokens[at] !== phrase[0]) return -1;
  for (let gap = 1; gap <= MAX_PHRASE_GAP; gap++) if (tokens[at + 1 + gap] === phrase[1]) return at + 1 + gap;
  return -1;
}

/** A single word of a thesaurus group: the same word, or the same stem (shipping/shipped are listed; orders/order not). */
function singleEntry(entries: readonly Entry[], token: string): Entry | undefined {
  return entries.find((e) => e.phrase.length === 1 && e.phrase[0] === token);
}

const scenePhrases = SCENE_PHRASES.map((p) => words(p)).sort((a, b) => b.length - a.length);

const phrasesOf = (group: readonly string[]): string[][] => group.map((alt) => words(alt)).filter((p) => p.length > 0);

/**
 * The groups of a question in a language (a primary subtag: en, nl; others have no thesaurus). With the workspace's
 * vocabulary, an unknown word is corrected to the nearest known word and an unknown compound is found by its head.
 */
export function understandQuery(text: string, language: string, vocabulary?: Vocabulary): QueryGroup[] {
  const tokens = words(text);
  const entries = entriesFor(language);
  const groups: QueryGroup[] = [];
  /** Last words of phrases found with words between: already said. */
  const taken = new Set<number>();
  for (let i = 0; i < tokens.length && groups.length < MAX_QUERY_GROUPS; ) {
    if (taken.has(i)) {
      i++;
      continue;
    }
    const scene = scenePhrases.find((p) => p.every((w, k) => tokens[i + k] === w));
    if (scene) {
      i += scene.length;
      continue;
    }
    let end = -1;
    const phrase = entries.find((e) => e.phrase.length > 1 && (end = phraseAt(tokens, i, e.phrase)) >= 0);
    if (phrase) {
      groups.push({ said: phrase.phrase.join(' '), alternatives: [phrase.phrase, ...phrasesOf(phrase.group)] });
      if (end === i + phrase.phrase.length - 1) i = end + 1;
      else {
        taken.add(end);
        i += 1;
      }
      continue;
    }
    const token = tokens[i++]!;
    if (STOPWORDS.has(token) || (token.length < 2 && !/\p{N}/u.test(token))) continue;
    const single = singleEntry(entries, token);
    if (single) {
      groups.push({ said: token, alternatives: [[token], ...phrasesOf(single.group)] });
      continue;
    }
    const alternatives: string[][] = [[token]];
    const meant: string[] = [];
    if (vocabulary && !vocabulary.has(token) && !/^\p{N}+$/u.test(token)) {
      for (const known of vocabulary.corrections(token)) {
        const group = singleEntry(entries, known)?.group;
        meant.push(known);
        alternatives.push([known], ...(group ? phrasesOf(group) : []));
      }
      const head = alternatives.length === 1 ? vocabulary.compoundHead(token) : null;
      if (head) {
        const group = singleEntry(entries, head)?.group;
        meant.push(head);
        alternatives.push([head], ...(group ? phrasesOf(group) : []));
      }
    }
    groups.push({ said: token, alternatives, ...(meant.length ? { meant } : {}) });
  }
  return dedupe(groups);
}

/** One group per meaning: a question that says "return" twice, or "shipping costs" with two words of one group. */
function dedupe(groups: QueryGroup[]): QueryGroup[] {
  const out: QueryGroup[] = [];
  const seen = new Set<string>();
  for (const g of groups) {
    const alternatives = unique(g.alternatives);
    const key = alternatives.map((a) => a.join(' ')).sort().join('|');
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ said: g.said, alternatives, ...(g.meant ? { meant: g.meant } : {}) });
  }
  return out;
}

function unique(alternatives: string[][]): string[][] {
  const seen = new Set<string>();
  return alternatives.filter((a) => {
    const key = a.join(' ');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The precise search as tsquery input: every group, each by any of its phrases. Words are letters and digits only
 * (src/text/words.ts), quoted, so no text of the question is ever read as tsquery syntax.
 */
export function toTsquery(groups: readonly QueryGroup[]): string {
  return groups
    .map((g) => `(${g.alternatives.map((phrase) => phrase.map((w) => `'${w}'`).join(' & ')).join(' | ')})`)
    .join(' & ');
}

/**
 * The customer's own words (each group's first way of saying it, and the known words its typos stand for), for ranking
 * the precise search's matches.
 */
export function ownWords(groups: readonly QueryGroup[]): string {
  return [...new Set(groups.flatMap((g) => [...g.alternatives[0]!, ...(g.meant ?? [])]))].join(' ');
}

/** Every word of every group, for the recall search (any of them). */
export function anyWords(groups: readonly QueryGroup[]): string {
  return [...new Set(groups.flatMap((g) => g.alternatives.flat()))].join(' ');
}

/** How much finding a group says: its most telling word's weight (1 each without a vocabulary). */
export function groupWeight(group: QueryGroup, vocabulary?: Vocabulary): number {
  if (!vocabulary) return 1;
  // As common as its most common way of saying it: a group of synonyms is not rare because one synonym is.
  let chunks = 0;
  for (const phrase of group.alternatives) for (const w of phrase) chunks = Math.max(chunks, vocabulary.chunksWith(w));
  return Math.log(1 + vocabulary.totalChunks / (1 + chunks));
}

/**
 * A text's words as the matching reads them: each once, a set for the exact look-up that settles most, and the words
 * by their first four letters, their last five and their first letter, so a word is compared only with the words it
 * could match (src/text/words.ts, wordFound: a stem or a compound head shares four first letters, a compound tail five
 * last letters, a typo the first letter). A phone turn ranks ten passages with it.
 */
export interface TextWords {
  list: readonly string[];
  set: ReadonlySet<string>;
  byStart: ReadonlyMap<string, readonly string[]>;
  byEnd: ReadonlyMap<string, readonly string[]>;
  byFirst: ReadonlyMap<string, readonly string[]>;
}

function push(map: Map<string, string[]>, key: string, word: string): void {
  const list = map.get(key);
  if (list) list.push(word);
  else map.set(key, [word]);
}

export function textWords(words_: readonly string[]): TextWords {
  const set = new Set(words_);
  const byStart = new Map<string, string[]>();
  const byEnd = new Map<string, string[]>();
  const byFirst = new Map<string, string[]>();
  for (const w of set) {
    if (w.length >= 4) push(byStart, w.slice(0, 4), w);
    if (w.length >= 5) push(byEnd, w.slice(-5), w);
    push(byFirst, w[0]!, w);
  }
  return { list: [...set], set, byStart, byEnd, byFirst };
}

const NONE: readonly string[] = [];

function wordPresent(w: string, present: TextWords, typos: boolean): boolean {
  if (present.set.has(w)) return true;
  if (w.length >= 4 && (present.byStart.get(w.slice(0, 4)) ?? NONE).some((p) => wordFound(w, p, false))) return true;
  if (w.length >= 5 && (present.byEnd.get(w.slice(-5)) ?? NONE).some((p) => wordFound(w, p, false))) return true;
  return typos && (present.byFirst.get(w[0]!) ?? NONE).some((p) => wordFound(w, p, true));
}

/**
 * A phrase found in a text's words: each of its words found (src/text/words.ts, wordFound). `typos` only for what
 * the customer wrote: the thesaurus and the vocabulary spell their words right.
 */
export function phraseFound(phrase: readonly string[], present: TextWords, typos = false): boolean {
  return phrase.every((w) => wordPresent(w, present, typos));
}

export function groupFound(group: QueryGroup, present: TextWords): boolean {
  return group.alternatives.some((phrase, i) => phraseFound(phrase, present, i === 0));
}

/** A synonym's find counts this much of the customer's own word's: a sentence in the customer's words is more likely the answer. */
export const SYNONYM_MATCH = 0.8;

/** 1 when the text holds what the customer said, SYNONYM_MATCH when only another way of saying it, else 0. */
export function groupMatch(group: QueryGroup, present: TextWords): number {
  if (phraseFound(group.alternatives[0]!, present, true)) return 1;
  return group.alternatives.slice(1).some((phrase) => phraseFound(phrase, present)) ? SYNONYM_MATCH : 0;
}

/**
 * A passage's relevance to the question, 0..1: the weighted share of the question's groups it holds, a title holding
 * them counting a fifth more (a page titled "Warranty" is about warranty). 0 when the question has no meaningful word.
 * `own`: the share of the groups it holds in the customer's own words (a tie-break among equal relevance). The
 * passage's words are read once for both.
 */
export function rankPassage(groups: readonly QueryGroup[], title: string, text: string, vocabulary?: Vocabulary): { relevance: number; own: number } {
  if (groups.length === 0) return { relevance: 0, own: 0 };
  const titleWords = textWords(keywords(title));
  const bodyWords = textWords(words(text));
  let total = 0;
  let found = 0;
  let inTitle = 0;
  let own = 0;
  for (const g of groups) {
    const w = groupWeight(g, vocabulary);
    total += w;
    const t = groupFound(g, titleWords);
    if (t || groupFound(g, bodyWords)) found += w;
    if (t) inTitle += w;
    const said = g.alternatives[0]!;
    if (phraseFound(said, titleWords, true) || phraseFound(said, bodyWords, true)) own += 1;
  }
  return { relevance: total === 0 ? 0 : Math.min(1, (0.8 * found + 0.2 * inTitle) / total), own: own / groups.length };
}

export function relevance(groups: readonly QueryGroup[], title: string, text: string, vocabulary?: Vocabulary): number {
  return rankPassage(groups, title, text, vocabulary).relevance;
}
