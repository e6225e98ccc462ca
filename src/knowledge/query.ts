/**
 * What a customer's question asks the knowledge base (docs/architecture.md, "Knowledge answers"): its meaningful words
 * as groups, one per thing it is about, each group with the words that mean the same (the shop-talk thesaurus, then a
 * general lexicon's related words, which count less), the known word a typo stands for, and the known head of an
 * unknown compound. Politeness and names never make a group (greetings, "I'm Jan", a signature); a name the knowledge
 * base does not hold weighs little. The precise search wants every group the knowledge base can hold (each by any of
 * its words), the recall search any word of any group; a passage's relevance is the weighted share of the groups it
 * holds (`relevance`), rare words weighing more, so a word no page holds lowers the score instead of stopping the
 * search, and the threshold decides.
 */
import { stem } from '../text/stems.ts';
import { GREETINGS, keywords, STOPWORDS, wordFound, words } from '../text/words.ts';
import { SCENE_PHRASES, thesaurusFor, type Thesaurus } from './thesaurus.ts';
import type { Vocabulary } from './vocabulary.ts';

/**
 * General related words and translations (src/knowledge/lexicon/, from open word nets): words folded as
 * src/text/words.ts folds them, never the word itself, possibly none.
 */
export interface Lexicon {
  relatedWords(language: string, foldedWord: string): readonly string[];
  translations(from: string, to: string, foldedWord: string): readonly string[];
}

/** A lexicon that knows no word: the search without general synonyms. */
export const NO_LEXICON: Lexicon = { relatedWords: () => [], translations: () => [] };

/**
 * A general related word found where the customer's word is not counts this much of it (the thesaurus's count whole):
 * below the confidence threshold (0.45), so a question that a related word alone finds is never answered on it.
 */
export const RELATED_MATCH = 0.4;
/** Related words count only in a passage whose own matches (words, thesaurus) hold more than this share of the question. */
export const RELATED_BASIS = 0.5;
/** A capitalised word the knowledge base does not hold (a place, a brand) weighs this share of an unknown word. */
export const PROPER_NOUN_SHARE = 0.25;
/** Related words taken per word: those the knowledge base holds, or the first ones without a vocabulary. */
const MAX_RELATED = 8;

export interface QueryGroup {
  /** What the customer wrote for it (folded). */
  said: string;
  /** Ways to find it, each a phrase (a list of words, all of which must be there); what was said comes first. */
  alternatives: string[][];
  /** The known words the workspace's vocabulary reads a typo or an unknown compound as (what the customer meant). */
  meant?: string[];
  /** Alternatives from this index on are the lexicon's related words: found, they count RELATED_MATCH. */
  relatedFrom?: number;
  /** The workspace's vocabulary holds none of its words: it cannot be found, so the precise search does not require it. */
  unknown?: boolean;
  /** Its share of its weight (PROPER_NOUN_SHARE for an unknown name of a place or a brand); 1 when absent. */
  share?: number;
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

/** A word of the question with what its writing says about it. */
interface Token {
  word: string;
  /** Written with a capital. */
  capital: boolean;
  /** Capitalised, and not the first word of its sentence: a name of a person, a place or a brand. */
  proper: boolean;
  /** In politeness: a clause that opens with a greeting ("Hi Jan"), after "I'm" or "ik ben", or a signature. */
  name: boolean;
}

/** Words that introduce the writer's name: "I'm Jan", "mijn naam is", "ich bin", "je m'appelle". */
const INTRODUCTIONS: readonly (readonly string[])[] = [
  ['i', 'm'], ['im'], ['i', 'am'], ['my', 'name', 'is'], ['ik', 'ben'], ['mijn', 'naam', 'is'],
  ['ich', 'bin'], ['mein', 'name', 'ist'], ['ich', 'heisse'], ['ich', 'heiße'], ['je', 'm', 'appelle'],
];
/** Most words of a clause that opens with a greeting and is still only politeness ("hi there jan", "dank je wel"). */
const MAX_GREETING_CLAUSE = 4;
/** Most words of a last clause of capitalised words alone that is read as a signature ("Marieke", "Jan de Vries"). */
const MAX_SIGNATURE = 3;

/** Languages that write every noun with a capital: there a capital does not mark a name. */
const CAPITALISED_NOUNS: ReadonlySet<string> = new Set(['de', 'lb']);

/** The question's words, in order, with what case and punctuation say of each (politeness and names). */
function tokenize(text: string, language: string): Token[] {
  // Capitals mark names only where most words have none: not in German, not in a message in capitals or Title Case.
  const all = text.match(/[\p{L}\p{M}\p{N}]+/gu) ?? [];
  const capitalised = all.filter((raw) => /^\p{Lu}/u.test(raw)).length;
  const nounsCapitalised = CAPITALISED_NOUNS.has(language) || capitalised * 2 > all.length;
  const out: Token[] = [];
  const sentences = text.split(/[.!?\n]+/u);
  let lastClause: Token[] = [];
  for (const sentence of sentences) {
    let first = true;
    for (const clause of sentence.split(/[,;:()]+/u)) {
      const tokens: Token[] = [];
      const raws = clause.match(/[\p{L}\p{M}\p{N}]+/gu) ?? [];
      for (const raw of raws) {
        const capital = /^\p{Lu}/u.test(raw);
        const proper = capital && !first && !nounsCapitalised;
        first = false;
        for (const word of words(raw)) tokens.push({ word, capital, proper, name: false });
      }
      if (tokens.length === 0) continue;
      if (GREETINGS.has(tokens[0]!.word) && tokens.length <= MAX_GREETING_CLAUSE) for (const t of tokens) t.name = true;
      for (let i = 0; i < tokens.length; i++) {
        const intro = INTRODUCTIONS.find((p) => p.every((w, k) => tokens[i + k]?.word === w));
        if (intro) for (let k = 0; k <= intro.length && i + k < tokens.length; k++) tokens[i + k]!.name = true;
      }
      out.push(...tokens);
      lastClause = tokens;
    }
  }
  // A message that ends in a name alone ("…, thanks. Marieke", "Jan de Vries") is signed.
  const signed = lastClause.length <= MAX_SIGNATURE && lastClause.length < out.length && lastClause[0]!.capital;
  if (signed && lastClause.every((t) => t.capital || STOPWORDS.has(t.word))) {
    for (const t of lastClause) t.name = true;
  }
  return out;
}

/**
 * The groups of a question in a language (a primary subtag: en, nl, de, fr; the thesaurus has en, nl and de). With
 * the workspace's vocabulary, an unknown word is corrected to the nearest known word, read as a hyphenated word it
 * writes as one ("ebike": e-bike), or found by the head of its compound; a name the knowledge base does not hold is
 * politeness (dropped) or a place or brand (weighs little); a number it does not hold (an order number) is dropped; a
 * group none of whose words it holds is marked `unknown`. With a lexicon, each word's general related words join its
 * group (with a vocabulary, those it holds as they are).
 */
export function understandQuery(text: string, language: string, vocabulary?: Vocabulary, lexicon: Lexicon = NO_LEXICON): QueryGroup[] {
  const tokenList = tokenize(text, language);
  const tokens = tokenList.map((t) => t.word);
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
    const { word: written, proper, name } = tokenList[i++]!;
    const token = language === 'de' ? umlautsWrittenOut(written, vocabulary) : written;
    if (STOPWORDS.has(token) || (token.length < 2 && !/\p{N}/u.test(token))) continue;
    const numeric = /^\p{N}+$/u.test(token);
    // Politeness and order numbers: what the knowledge base does not hold of them is not what is asked.
    if (vocabulary && (numeric ? !vocabulary.has(token) : name && !vocabulary.knows(token) && vocabulary.corrections(token).length === 0)) continue;
    const single = singleEntry(entries, token);
    if (single) {
      groups.push(withRelated({ said: token, alternatives: [[token], ...phrasesOf(single.group)] }, language, vocabulary, lexicon));
      continue;
    }
    const alternatives: string[][] = [[token]];
    const meant: string[] = [];
    let tail: string | null = null;
    if (vocabulary && !vocabulary.has(token) && !numeric) {
      // A word of the language (one the lexicon knows) is what was meant, not a typo of another word ("kitten" is no
      // "katten"): it is read only as another form of itself, a known word it shares its first four letters with
      // ("aufgegeben": aufgeben).
      const aWord = !vocabulary.knows(token) && lexicon.relatedWords(language, token).length > 0;
      for (const known of vocabulary.corrections(token).filter((k) => !aWord || k.slice(0, 4) === token.slice(0, 4))) {
        const group = singleEntry(entries, known)?.group;
        meant.push(known);
        alternatives.push([known], ...(group ? phrasesOf(group) : []));
      }
      const parts = vocabulary.hyphenParts(token);
      if (parts) {
        meant.push(...parts.filter((w) => w.length > 1));
        alternatives.push([...parts]);
      }
      const head = alternatives.length === 1 ? vocabulary.compoundHead(token) : null;
      if (head) {
        const group = singleEntry(entries, head)?.group;
        meant.push(head);
        alternatives.push([head], ...(group ? phrasesOf(group) : []));
      }
      // An unknown compound's known last part says what kind of thing it is ("treuekarte" is a karte), not which one
      // ("zelfwasplaats" is a plaats, not the shop's): it counts as a related word does.
      tail = alternatives.length === 1 ? vocabulary.compoundTail(token) : null;
    }
    const group = withRelated({ said: token, alternatives, ...(meant.length ? { meant } : {}) }, language, vocabulary, lexicon, tail);
    if (proper && group.unknown) group.share = PROPER_NOUN_SHARE;
    groups.push(group);
  }
  return dedupe(groups);
}

/**
 * A German word with its umlauts written out ("fuer", "geschaeftszeiten", "koennen") as the knowledge base and the
 * stopwords spell it folded (fur, geschaftszeiten, konnen), when that spelling is a stopword or a word the knowledge
 * base holds and the written one is not: "treue" stays treue, a word of its own.
 */
function umlautsWrittenOut(word: string, vocabulary: Vocabulary | undefined): string {
  if (!/[aou]e/u.test(word)) return word;
  const folded = word.replace(/([aou])e/gu, '$1');
  if (STOPWORDS.has(folded)) return folded;
  if (!vocabulary || vocabulary.knows(word)) return word;
  if (vocabulary.knows(folded)) return folded;
  const parts = (w: string) => Boolean(vocabulary.compoundHead(w) ?? vocabulary.compoundTail(w));
  return !parts(word) && parts(folded) ? folded : word;
}

/** The group with the lexicon's related words of what was said (those the knowledge base holds) and whether it is unknown. */
function withRelated(group: QueryGroup, language: string, vocabulary: Vocabulary | undefined, lexicon: Lexicon, tail: string | null = null): QueryGroup {
  const had = new Set(group.alternatives.map((a) => a.join(' ')));
  const related: string[][] = tail ? [[tail]] : [];
  if (tail) had.add(tail);
  if (group.alternatives[0]!.length === 1) {
    for (const word of lexicon.relatedWords(language, group.said)) {
      if (related.length >= MAX_RELATED) break;
      const phrase = words(word);
      if (phrase.length === 0 || had.has(phrase.join(' ')) || phrase.some((w) => STOPWORDS.has(w))) continue;
      // Only a word the knowledge base holds as it is: a related word found by its beginning is too loose a bridge.
      if (vocabulary && !phrase.every((w) => vocabulary.has(w))) continue;
      had.add(phrase.join(' '));
      related.push(phrase);
    }
  }
  const out: QueryGroup = related.length
    ? { ...group, alternatives: [...group.alternatives, ...related], relatedFrom: group.alternatives.length }
    : { ...group };
  if (vocabulary && !out.alternatives.some((phrase) => phrase.every((w) => vocabulary.knows(w)))) out.unknown = true;
  return out;
}

/** Translations taken per group: the first ones of each of its words, the lexicon's most common first. */
const MAX_TRANSLATIONS = 12;

/**
 * The question's groups in another language, for a question whose answer may be on a page in that language: each
 * group by the lexicon's translations of its words (what was said, the thesaurus's words, the corrections), with the
 * target language's thesaurus, then the translations' related words (counting RELATED_MATCH); a group without a translation (a name, a number, a brand: PayPal) stays as it was said.
 * With the vocabulary, only translations the knowledge base holds are kept. `translated` is false when no group had a
 * translation (searching again would find what the first search found).
 */
export function translateGroups(
  groups: readonly QueryGroup[],
  from: string,
  to: string,
  lexicon: Lexicon,
  vocabulary?: Vocabulary,
): { groups: QueryGroup[]; translated: boolean } {
  const entries = entriesFor(to);
  let translated = false;
  const out = groups.map((g): QueryGroup => {
    const sources = [...g.alternatives.slice(0, g.relatedFrom).map((a) => a.join(' ')), ...(g.meant ?? [])];
    const found: string[][] = [];
    /** Every single-word translation, held or not: its related words may be held ("huren" → hire → rent). */
    const all: string[] = [];
    const seen = new Set<string>();
    for (const source of sources) {
      for (const t of lexicon.translations(from, to, source)) {
        const phrase = words(t).filter((w) => !STOPWORDS.has(w));
        if (phrase.length === 1 && all.length < MAX_TRANSLATIONS) all.push(phrase[0]!);
        const key = phrase.join(' ');
        if (phrase.length === 0 || seen.has(key) || (vocabulary && !phrase.every((w) => vocabulary.knows(w)))) continue;
        const thesaurus = phrase.length === 1 ? phrasesOf(singleEntry(entries, phrase[0]!)?.group ?? []) : [];
        for (const alt of [phrase, ...thesaurus]) {
          if (seen.has(alt.join(' '))) continue;
          seen.add(alt.join(' '));
          found.push(alt);
        }
        if (found.length >= MAX_TRANSLATIONS) break;
      }
      if (found.length >= MAX_TRANSLATIONS) break;
    }
    // The translations' related words count less, as a question's own related words do ("huren" → hire → rent).
    const related: string[][] = [];
    for (const t of all) {
      for (const r of lexicon.relatedWords(to, t)) {
        const phrase = words(r).filter((w) => !STOPWORDS.has(w));
        const key = phrase.join(' ');
        if (phrase.length === 0 || seen.has(key) || (vocabulary && !phrase.every((w) => vocabulary.knows(w)))) continue;
        seen.add(key);
        related.push(phrase);
        if (related.length >= MAX_RELATED) break;
      }
      if (related.length >= MAX_RELATED) break;
    }
    if (found.length === 0 && related.length === 0) {
      const kept: QueryGroup = { said: g.said, alternatives: [g.alternatives[0]!] };
      if (g.unknown) kept.unknown = true;
      if (g.share !== undefined) kept.share = g.share;
      return kept;
    }
    translated = true;
    if (found.length === 0) return { said: g.said, alternatives: [g.alternatives[0]!, ...related], relatedFrom: 1 };
    return { said: found[0]!.join(' '), alternatives: [...found, ...related], ...(related.length ? { relatedFrom: found.length } : {}) };
  });
  return { groups: out, translated };
}

/** One group per meaning: a question that says "return" twice, or "shipping costs" with two words of one group. */
function dedupe(groups: QueryGroup[]): QueryGroup[] {
  const out: QueryGroup[] = [];
  const seen = new Set<string>();
  for (const g of groups) {
    const own = unique(g.alternatives.slice(0, g.relatedFrom));
    const alternatives = unique([...own, ...g.alternatives.slice(g.relatedFrom ?? g.alternatives.length)]);
    const key = own.map((a) => a.join(' ')).sort().join('|');
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({
      said: g.said,
      alternatives,
      ...(g.meant ? { meant: g.meant } : {}),
      ...(g.relatedFrom !== undefined && alternatives.length > own.length ? { relatedFrom: own.length } : {}),
      ...(g.unknown ? { unknown: true } : {}),
      ...(g.share !== undefined ? { share: g.share } : {}),
    });
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
 * The precise search as tsquery input: every group the knowledge base may hold (all of them when it holds none), each
 * by any of its phrases. Words are letters and digits only
 * (src/text/words.ts), quoted, so no text of the question is ever read as tsquery syntax.
 */
export function toTsquery(groups: readonly QueryGroup[]): string {
  // A group the knowledge base cannot hold would make every precise search fail; its weight still counts in the ranking.
  const findable = groups.filter((g) => !g.unknown);
  return (findable.length ? findable : groups)
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

/**
 * How much finding a group says: its most telling word's weight (1 each without a vocabulary), times its share (a
 * name of a place or brand the knowledge base does not hold says little about what is asked).
 */
export function groupWeight(group: QueryGroup, vocabulary?: Vocabulary): number {
  const share = group.share ?? 1;
  if (!vocabulary) return share;
  // As common as its most common way of saying it: a group of synonyms is not rare because one synonym is. The
  // lexicon's related words do not count: they are another word's meaning, and a common one would hide a rare word.
  let chunks = 0;
  for (const phrase of group.alternatives.slice(0, group.relatedFrom)) for (const w of phrase) chunks = Math.max(chunks, vocabulary.chunksWith(w));
  return share * Math.log(1 + vocabulary.totalChunks / (1 + chunks));
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
  /** The language the words are compared by stem in (src/text/stems.ts); absent: not by stem. */
  language?: string;
}

function push(map: Map<string, string[]>, key: string, word: string): void {
  const list = map.get(key);
  if (list) list.push(word);
  else map.set(key, [word]);
}

/** A text's words for matching; with a language, also their Snowball stems (deliveries finds delivery). */
export function textWords(words_: readonly string[], language?: string): TextWords {
  const set = new Set(words_);
  const byStart = new Map<string, string[]>();
  const byEnd = new Map<string, string[]>();
  const byFirst = new Map<string, string[]>();
  for (const w of set) {
    if (w.length >= 4) push(byStart, w.slice(0, 4), w);
    if (w.length >= 5) push(byEnd, w.slice(-5), w);
    push(byFirst, w[0]!, w);
  }
  return language === undefined ? { list: [...set], set, byStart, byEnd, byFirst } : { list: [...set], set, byStart, byEnd, byFirst, language };
}

const NONE: readonly string[] = [];

/**
 * A word of the text with the word's Snowball stem. Only the words that could share it are stemmed: those with the
 * same first four letters (the first letter for a word under six letters, whose stem may be shorter: taxes, tax), so a
 * passage is not stemmed whole for every search.
 */
function sameStemPresent(w: string, present: TextWords, language: string): boolean {
  const candidates = (w.length >= 6 ? present.byStart.get(w.slice(0, 4)) : present.byFirst.get(w[0]!)) ?? NONE;
  if (candidates.length === 0) return false;
  const wanted = stem(language, w);
  return candidates.some((p) => stem(language, p) === wanted);
}

function wordPresent(w: string, present: TextWords, typos: boolean): boolean {
  if (present.set.has(w)) return true;
  if (present.language !== undefined && sameStemPresent(w, present, present.language)) return true;
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

/**
 * How much of the group a text holds: 1 for what the customer said, a typo of it, the word it stands for or a word of
 * the thesaurus; RELATED_MATCH for only a lexicon's related word; else 0.
 */
export function groupFound(group: QueryGroup, present: TextWords): number {
  const related = group.relatedFrom ?? group.alternatives.length;
  for (let i = 0; i < related; i++) if (phraseFound(group.alternatives[i]!, present, i === 0)) return 1;
  for (let i = related; i < group.alternatives.length; i++) if (phraseFound(group.alternatives[i]!, present)) return RELATED_MATCH;
  return 0;
}

/** A synonym's find counts this much of the customer's own word's: a sentence in the customer's words is more likely the answer. */
export const SYNONYM_MATCH = 0.8;

/**
 * 1 when the text holds what the customer said, SYNONYM_MATCH when only another way of saying it (the thesaurus, a
 * correction), RELATED_MATCH × SYNONYM_MATCH when only a lexicon's related word, else 0.
 */
export function groupMatch(group: QueryGroup, present: TextWords): number {
  if (phraseFound(group.alternatives[0]!, present, true)) return 1;
  const related = group.relatedFrom ?? group.alternatives.length;
  for (let i = 1; i < related; i++) if (phraseFound(group.alternatives[i]!, present)) return SYNONYM_MATCH;
  for (let i = related; i < group.alternatives.length; i++) if (phraseFound(group.alternatives[i]!, present)) return RELATED_MATCH * SYNONYM_MATCH;
  return 0;
}

/**
 * A passage's relevance to the question, 0..1: the weighted share of the question's groups it holds (a group found
 * only by a lexicon's related word counts RELATED_MATCH of its weight), a title holding them counting a fifth more (a
 * page titled "Warranty" is about warranty; the passage's phrasings count as its title). Words are compared by stem in `language` (src/text/stems.ts) as well as
 * by wordFound. 0 when the question has no meaningful word. `own`: the share of the groups it holds in the customer's
 * own words (a tie-break among equal relevance). The passage's words are read once for both.
 */
/**
 * What a lexicon's related word counts in a group whose own word no page holds (BRIDGE_MATCH): "Fahrstuhl" on a page
 * that says "Aufzug" has no other way to be found, so the related word stands for it, without the basis a related
 * word otherwise needs (RELATED_BASIS), but less than the customer's own word. Chosen on the development sets.
 */
export const BRIDGE_MATCH = 0.6;

/**
 * A group whose own word the knowledge base does not hold, found only through the lexicon's related words, none of
 * which is a part of that word ("Schwimmbad" → Bad, "zelfwasplaats" → plaats are broader words, not the same thing).
 */
function onlyBridge(g: QueryGroup, vocabulary: Vocabulary | undefined): boolean {
  if (vocabulary === undefined || g.unknown === true || g.relatedFrom !== 1 || vocabulary.knows(g.said)) return false;
  return !g.alternatives.slice(1).some((a) => g.said.includes(a.join('')));
}

export function rankPassage(
  groups: readonly QueryGroup[],
  title: string,
  text: string,
  vocabulary?: Vocabulary,
  language?: string,
  phrasings: readonly string[] = [],
  /** Whether the passage is in the question's language: only there does a related word stand for an unheld one. */
  sameLanguage = true,
): { relevance: number; own: number } {
  if (groups.length === 0) return { relevance: 0, own: 0 };
  // A taught phrasing says what the passage answers, as its title does: a question in its words is a full match.
  const titleWords = textWords(keywords(phrasings.length ? [title, ...phrasings].join('\n') : title), language);
  const bodyWords = textWords(words(text), language);
  let total = 0;
  /** Found by the customer's words or the thesaurus; found by a related word only (credited below). */
  let found = 0;
  let inTitle = 0;
  let related = 0;
  let relatedInTitle = 0;
  let own = 0;
  for (const g of groups) {
    const w = groupWeight(g, vocabulary);
    total += w;
    const t = groupFound(g, titleWords);
    const b = t === 1 ? 1 : Math.max(t, groupFound(g, bodyWords));
    const bridged = b > 0 && sameLanguage && onlyBridge(g, vocabulary);
    if (b === 1) found += w;
    else if (bridged) found += w * BRIDGE_MATCH;
    else related += w * b;
    if (t === 1) inTitle += w;
    else if (bridged && t > 0) inTitle += w * BRIDGE_MATCH;
    else relatedInTitle += w * t;
    const said = g.alternatives[0]!;
    if (phraseFound(said, titleWords, true) || phraseFound(said, bodyWords, true)) own += 1;
  }
  if (total === 0) return { relevance: 0, own: 0 };
  // A related word is another meaning's word as often as this one's ("ring" for phone, in "a ring lock"): it adds to a
  // passage that holds most of the question already, and never makes one that holds half of it.
  if (found / total > RELATED_BASIS) {
    found += related;
    inTitle += relatedInTitle;
  }
  return { relevance: Math.min(1, (0.8 * found + 0.2 * inTitle) / total), own: own / groups.length };
}

export function relevance(groups: readonly QueryGroup[], title: string, text: string, vocabulary?: Vocabulary, language?: string): number {
  return rankPassage(groups, title, text, vocabulary, language).relevance;
}
