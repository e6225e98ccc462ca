/**
 * The words a workspace's knowledge base holds, with how many chunks hold each (docs/architecture.md, "Knowledge
 * answers"). Two uses: a customer's word the knowledge base does not know is corrected to the nearest word it does
 * know ("retrun" → return, "openingstyden" → openingstijden) or split at a known word it begins with (a Dutch compound:
 * "garantieclaim" → garantie); and a word found in few chunks says more about a question than one found in many
 * (its weight, an inverse document frequency).
 */
import { stem } from '../text/stems.ts';
import { editDistance, STOPWORDS, typoBudget, words, wordsMatch } from '../text/words.ts';

export interface VocabularyEntry {
  word: string;
  /** Chunks that hold it. */
  chunks: number;
}

/** The shortest known word a compound may begin with ("betaal" is too short to say much; "garantie" is not). */
const MIN_COMPOUND_HEAD = 5;
/** A short word's forms are at most this many letters longer ("cat" → "cats", "kat" → "katten"). */
const SHORT_FORM_EXTRA = 3;
/** Corrections offered for one word, nearest (then most used) first. */
const MAX_CORRECTIONS = 2;

export class Vocabulary {
  readonly totalChunks: number;
  /**
   * Whether it holds every word of the knowledge base (false when it was cut at MAX_VOCABULARY_WORDS): only then does
   * a word it lacks certainly occur nowhere (`knows`).
   */
  readonly complete: boolean;
  /** The languages (primary subtags) of the workspace's documents: where a question may be searched in translation. */
  readonly languages: readonly string[];
  readonly #chunks = new Map<string, number>();
  /** Words by their first letter and length: a typo keeps the first letter (src/text/words.ts, wordFound). */
  readonly #byStart = new Map<string, string[]>();
  /** Words by their first four letters: a word shares its stem with words that begin as it does. */
  readonly #byPrefix = new Map<string, string[]>();
  /** Hyphenated words by their letters written as one: "ebike" → e, bike. */
  readonly #joined = new Map<string, readonly string[]>();

  constructor(entries: Iterable<VocabularyEntry>, totalChunks: number, complete = true, languages: readonly string[] = []) {
    this.totalChunks = Math.max(1, totalChunks);
    this.complete = complete;
    this.languages = languages;
    // Folded as the customer's words are folded; accented and plain spellings of one word add up.
    for (const e of entries) {
      const parts = words(e.word);
      // A hyphenated word ("e-bike", "E-Mail") is also known written as one ("ebike"): by its parts.
      if (parts.length > 1 && /^[\p{L}\p{N}]+(-[\p{L}\p{N}]+)+$/u.test(e.word)) this.#joined.set(parts.join(''), parts);
      else for (const w of parts) this.#chunks.set(w, (this.#chunks.get(w) ?? 0) + e.chunks);
    }
    for (const w of this.#chunks.keys()) {
      const key = `${w[0]}${w.length}`;
      const list = this.#byStart.get(key) ?? [];
      list.push(w);
      this.#byStart.set(key, list);
      if (w.length >= 4) {
        const prefix = this.#byPrefix.get(w.slice(0, 4)) ?? [];
        prefix.push(w);
        this.#byPrefix.set(w.slice(0, 4), prefix);
      }
    }
  }

  get size(): number {
    return this.#chunks.size;
  }

  /** Chunks holding the word (0: the knowledge base does not know it). */
  chunksWith(word: string): number {
    return this.#chunks.get(word) ?? 0;
  }

  has(word: string): boolean {
    return this.#chunks.has(word);
  }

  /**
   * Whether the knowledge base may hold the word: it holds the word or a word of the same stem (src/text/words.ts,
   * wordsMatch: deliveries/delivery), or the vocabulary is not complete. A word it does not know cannot be found, so
   * it must not be required (src/knowledge/query.ts).
   */
  knows(word: string): boolean {
    if (!this.complete || this.#chunks.has(word)) return true;
    if (word.length >= 4 && (this.#byPrefix.get(word.slice(0, 4)) ?? []).some((known) => wordsMatch(word, known))) return true;
    return this.#shortForms(word).length > 0;
  }

  /**
   * Chunks holding the word in any of its forms: the word itself, else its commonest form the knowledge base holds
   * (src/text/words.ts, wordsMatch; a word of under four letters by its Snowball stem in a language of the workspace:
   * "cat" is held as "cats", "dog" as "dogs"). A word's weight is that of the forms the search finds it by.
   */
  chunksWithForms(word: string): number {
    const own = this.#chunks.get(word);
    if (own !== undefined) return own;
    let most = 0;
    if (word.length >= 4) {
      for (const known of this.#byPrefix.get(word.slice(0, 4)) ?? []) if (wordsMatch(word, known)) most = Math.max(most, this.chunksWith(known));
    } else {
      for (const known of this.#shortForms(word)) most = Math.max(most, this.chunksWith(known));
    }
    return most;
  }

  /**
   * Known words (at most SHORT_FORM_EXTRA letters longer) with the same Snowball stem as a word of under four letters,
   * in a language of the workspace: the prefix rule of wordsMatch needs four letters, so without this "cat" would be
   * a word no page holds on a page about "cats".
   */
  #shortForms(word: string): string[] {
    if (word.length >= 4 || word.length < 2 || /\p{N}/u.test(word)) return [];
    const out: string[] = [];
    for (let length = word.length + 1; length <= word.length + SHORT_FORM_EXTRA; length++) {
      for (const known of this.#byStart.get(`${word[0]}${length}`) ?? []) {
        if (!known.startsWith(word.slice(0, 2))) continue;
        if (this.languages.some((language) => stem(language, known) === stem(language, word))) out.push(known);
      }
    }
    return out;
  }

  /** The parts of a hyphenated word of the knowledge base that the word writes as one ("ebike" → e, bike), or null. */
  hyphenParts(word: string): readonly string[] | null {
    return this.#joined.get(word) ?? null;
  }

  /** How much finding this word says: ln(1 + N / (1 + chunks)); an unknown word says the most. */
  weight(word: string): number {
    return Math.log(1 + this.totalChunks / (1 + this.chunksWith(word)));
  }

  /** Known words within the word's typo budget that begin with its letter (src/text/words.ts), nearest first, then the most used. */
  corrections(word: string): string[] {
    const budget = typoBudget(word.length);
    if (budget === 0) return [];
    const found: { word: string; distance: number; chunks: number }[] = [];
    for (let length = word.length - budget; length <= word.length + budget; length++) {
      for (const known of this.#byStart.get(`${word[0]}${length}`) ?? []) {
        const distance = editDistance(word, known, budget);
        if (distance <= budget) found.push({ word: known, distance, chunks: this.chunksWith(known) });
      }
    }
    return found
      .sort((a, b) => a.distance - b.distance || b.chunks - a.chunks || (a.word < b.word ? -1 : 1))
      .slice(0, MAX_CORRECTIONS)
      .map((f) => f.word);
  }

  /** The longest known word (MIN_COMPOUND_HEAD+ letters) the word begins with, leaving at least 3 letters: its head. */
  compoundHead(word: string): string | null {
    for (let end = word.length - 3; end >= MIN_COMPOUND_HEAD; end--) {
      const head = word.slice(0, end);
      // A function word is no head: "selbstbedienung" is not about "selbst".
      if (this.#chunks.has(head) && !STOPWORDS.has(head)) return head;
    }
    return null;
  }

  /**
   * The longest known word (MIN_COMPOUND_HEAD+ letters, not a function word) the word ends with, leaving at least 3
   * letters: in Dutch and German the last part says what a compound is ("treuekarte" is a karte, "retourkosten" are
   * kosten).
   */
  compoundTail(word: string): string | null {
    for (let start = 3; start <= word.length - MIN_COMPOUND_HEAD; start++) {
      const tail = word.slice(start);
      if (this.#chunks.has(tail) && !STOPWORDS.has(tail)) return tail;
    }
    return null;
  }
}
