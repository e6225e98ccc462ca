/**
 * The embedded answerer: the default AI, with no network and no model. It is extractive: it reads out the sentences
 * of the knowledge passages that best match the customer's message, and says honestly that it does not know when
 * nothing fits.
 *
 * It never asks for tools: deciding which tool to call with which arguments needs a language model, so tools work
 * only with the OpenAI-compatible adapter. It ignores earlier tool rounds for the same reason (their results are JSON
 * for a model, not sentences for a customer); it also serves as the fallback when the LLM fails mid-turn.
 *
 * Deterministic: the same input gives the same answer (no randomness, no clock; ties go to the better-ranked
 * passage, then to the earlier sentence).
 */
import { ANSWER_THRESHOLD, FOLLOW_SENTENCE_MIN_SHARE, MAX_ANSWER_CHARS, MAX_ANSWER_PASSAGES, MAX_ANSWER_SENTENCES } from './limits.ts';
import { askedKinds, holdsAsked } from '../knowledge/answer-kinds.ts';
import * as openLexicon from '../knowledge/lexicon/index.ts';
import { groupMatch, textWords, translateGroups, understandQuery, type Lexicon } from '../knowledge/query.ts';
import { primaryLanguage } from '../text/language.ts';
import { words } from '../text/words.ts';
import { phrase, sentenceSegmenter } from './phrases.ts';
import type { AiPort, AiStep, AiStepInput } from './types.ts';

export type AnswerStep = Extract<AiStep, { kind: 'answer' }>;

/**
 * What composing an answer needs; the rest of {@link AiStepInput} does not change an extractive answer. Never the
 * integrator's context: a handled-false reply is a note for a language model (protocol §1.3), and this answerer reads
 * text out to the customer, so it must not see it (docs/architecture.md, "Decisions worth knowing").
 */
export type EmbeddedAnswerInput = Pick<AiStepInput, 'message' | 'language' | 'passages'>;

/**
 * How a sentence is ranked: mostly by how much of the message it holds (that is what picks the right sentence inside
 * a passage), partly by the passage's own score (what the knowledge base thought of the whole chunk).
 */
const OVERLAP_WEIGHT = 0.7;
const PASSAGE_WEIGHT = 0.3;
/** Passages scoring this much below the best one are not read from: they share a word, the best one answers. */
const PASSAGE_SCORE_MARGIN = 0.15;
/**
 * The kind of fact the question asks for (a time for "when", a price for "how much": src/knowledge/answer-kinds.ts)
 * counts as one more group of the question in a sentence's overlap, this many times the weight a group held by as many
 * sentences has: it is what is asked ("…usually after two to three hours" answers "how long will the grooming take",
 * the grooming prices do not). Chosen on the development sets (pet shop 64.5 → 68.8 %).
 */
const KIND_WEIGHT = 1.25;


/** Re-exported for the answerer's tests and callers: the shared words live in src/text/words.ts. */
export { keywords, words, wordsMatch } from '../text/words.ts';

/**
 * Share (0..1) of the message's groups a sentence holds, each group weighted by how few of the candidate sentences hold
 * it (`weights`, `found` by group): "pay" is in every sentence of a payment page, "instalments" picks the one that
 * answers.
 */
function overlapOf(weights: readonly number[], found: readonly number[]): number {
  let total = 0;
  let hit = 0;
  weights.forEach((w, i) => {
    total += w;
    hit += w * found[i]!;
  });
  return total === 0 ? 0 : hit / total;
}

/** The sentences of a text, whitespace collapsed, each ending in punctuation (a line without any gets a period). */
export function sentences(text: string, language: string): string[] {
  const out: string[] = [];
  for (const { segment } of sentenceSegmenter(language).segment(text)) {
    const s = segment.replace(/\s+/g, ' ').trim();
    if (!/[\p{L}\p{N}]/u.test(s)) continue;
    out.push(/[.!?…:;]$/u.test(s) ? s : `${s}.`);
  }
  return out;
}

/**
 * The sentences without the passage's title: a title is never read out as part of an answer (docs/knowledge.md, "How
 * text is read"). A page's body often opens with its title line (a heading, or text pasted with it), and the sentence
 * splitter makes that line a sentence of its own ("Returns policy.") or the head of the next one ("Returns policy:
 * Shoes that…"); both go. A passage that is only its title (a page without text) then gives no sentence at all.
 */
export function untitled(all: readonly string[], title: string): string[] {
  const titleWords = words(title).join(' ');
  if (!titleWords) return [...all];
  const out: string[] = [];
  for (const sentence of all) {
    if (words(sentence).join(' ') === titleWords) continue;
    // "Title: the rest" or "Title – the rest", the title in any case.
    const head = /^(.{1,300}?)\s*[:\u2013\u2014]\s+(?=\S)/u.exec(sentence);
    out.push(head && words(head[1]!).join(' ') === titleWords ? sentence.slice(head[0].length) : sentence);
  }
  return out;
}

interface Candidate {
  passage: number;
  index: number;
  text: string;
  overlap: number;
  score: number;
}

/** Cut a single over-long sentence at a word boundary so the answer stays within MAX_ANSWER_CHARS. */
function cutSentence(text: string, max: number): string {
  if (text.length <= max) return text;
  const room = text.slice(0, max - 1);
  const space = room.lastIndexOf(' ');
  return `${(space > max / 2 ? room.slice(0, space) : room).replace(/[\s,;:.]+$/u, '')}…`;
}

/**
 * The sentence and character budget of one answer: sentences are offered in order of importance and kept while they
 * fit; duplicates (same words) are skipped.
 */
class Budget {
  #count = 0;
  #chars = 0;
  readonly #seen = new Set<string>();

  /** The sentence as it will be used (the first one is cut when it alone is too long), or null when it does not fit. */
  take(sentence: string): string | null {
    const key = words(sentence).join(' ');
    if (this.#count >= MAX_ANSWER_SENTENCES || this.#seen.has(key)) return null;
    const text = this.#count === 0 ? cutSentence(sentence, MAX_ANSWER_CHARS) : sentence;
    const cost = text.length + (this.#count === 0 ? 0 : 1);
    if (this.#chars + cost > MAX_ANSWER_CHARS) return null;
    this.#count++;
    this.#chars += cost;
    this.#seen.add(key);
    return text;
  }
}

/**
 * The extractive answer for one message.
 *
 * 1. Passages with a score of at least {@link ANSWER_THRESHOLD} and within PASSAGE_SCORE_MARGIN of the best count
 *    (the best {@link MAX_ANSWER_PASSAGES} of them). Their sentences are ranked by `0.7 × overlap + 0.3 × passage
 *    score`, where overlap is the share of the message's word groups (src/knowledge/query.ts) the sentence holds,
 *    each group weighed by how few of the sentences hold it, the customer's own word more than a synonym; a sentence
 *    holding the kind of fact the question asks for (a time for "when", a duration for "how long", a price for "how
 *    much", an address for "where": src/knowledge/answer-kinds.ts) holds one more part of the question, weighed as a
 *    group is, and is a candidate even without the question's words (on a page in the customer's language).
 * 2. The best sentence leads (when no sentence shares a word with the message, the first sentence of the best passage:
 *    the knowledge base found that passage relevant). Further sentences that share words with the message and reach
 *    half the best one's rank follow, up to {@link MAX_ANSWER_SENTENCES} sentences and {@link MAX_ANSWER_CHARS}
 *    characters (chosen by rank, so the best is never crowded out); after the lead, sentences of one passage keep
 *    their order in the passage. A chosen sentence that is a question (a page's "Missed a lesson?") brings the
 *    sentence after it, its answer.
 * 3. Nothing relevant: the honest fallback sentence in the customer's language, source 'fallback'.
 *
 * When the best passage is in another language than the customer's (the search found it across languages), only
 * passages in that language are read, the sentences are matched with the question's words translated by the lexicon,
 * and the answer says plainly, in the customer's language, that the page is in that language before quoting it.
 */
export function composeAnswer(input: EmbeddedAnswerInput, lexicon: Lexicon = openLexicon): AnswerStep {
  const language = primaryLanguage(input.language);
  let groups = understandQuery(input.message, language, undefined, lexicon);
  const usable = input.passages
    .map((p, rank) => ({ p, rank }))
    .filter(({ p }) => Number.isFinite(p.score) && p.score >= ANSWER_THRESHOLD)
    // Best first as given; a stable sort by score keeps the given order among equals.
    .sort((a, b) => b.p.score - a.p.score || a.rank - b.rank);
  const bestScore = usable[0]?.p.score ?? 0;
  const close = usable.filter(({ p }) => p.score >= bestScore - PASSAGE_SCORE_MARGIN);
  // The customer's own language first: a page in another language is read only when none in theirs comes close.
  const pageLanguage = close.some(({ p }) => p.language === undefined) ? undefined : close[0]?.p.language;
  const passages = close.filter(({ p }) => p.language === pageLanguage).slice(0, MAX_ANSWER_PASSAGES);
  if (pageLanguage) groups = translateGroups(groups, language, pageLanguage, lexicon).groups;

  const asked = askedKinds(input.message);
  const found: { passage: number; index: number; text: string; score: number; found: number[]; kind: boolean }[] = [];
  passages.forEach(({ p }, passage) => {
    untitled(sentences(p.text, pageLanguage ?? input.language), p.title).forEach((text, index) => {
      const present = textWords(words(text));
      found.push({ passage, index, text, score: p.score, found: groups.map((g) => groupMatch(g, present)), kind: holdsAsked(asked, text) });
    });
  });
  const weights = groups.map((_g, i) => Math.log(1 + found.length / (1 + found.filter((f) => f.found[i]! > 0).length)));
  // The kind of fact asked for counts as one more part of the question, weighed as the others are.
  // Only on a page in the customer's language: a page in another is quoted only where a sentence holds the words.
  const kindWeight = asked.size === 0 || pageLanguage ? 0 : KIND_WEIGHT * Math.log(1 + found.length / (1 + found.filter((f) => f.kind).length));
  const candidates: Candidate[] = found.map((f) => {
    const o = overlapOf([...weights, kindWeight], [...f.found, f.kind ? 1 : 0]);
    return { passage: f.passage, index: f.index, text: f.text, overlap: o, score: OVERLAP_WEIGHT * o + PASSAGE_WEIGHT * f.score };
  });
  const ranked = candidates
    .filter((c) => c.overlap > 0)
    .sort((a, b) => b.score - a.score || a.passage - b.passage || a.index - b.index);

  const budget = new Budget();
  const parts: string[] = [];
  // A page in another language is quoted only where a sentence holds the question's (translated) words.
  const lead = passages.length > 0 ? (ranked[0] ?? (pageLanguage ? undefined : candidates[0])) : undefined;
  if (lead !== undefined) {
    // Chosen in rank order (so the best sentence is never crowded out), then the best first and the rest in order.
    const accepted: Candidate[] = [];
    for (const c of withTheirAnswers(pick(ranked, ranked[0]?.score ?? lead.score, lead), candidates)) {
      const taken = budget.take(c.text);
      if (taken !== null) accepted.push({ ...c, text: taken });
    }
    parts.push(...inReadingOrder(accepted).map((c) => c.text));
  }

  if (parts.length === 0) return { kind: 'answer', text: phrase('dont_know', input.language), source: 'fallback' };
  const quoted = parts.join(' ');
  if (!pageLanguage) return { kind: 'answer', text: quoted, source: 'knowledge_base' };
  const intro = phrase('page_in_language', input.language).replace('{language}', languageName(pageLanguage, input.language));
  return { kind: 'answer', text: `${intro} ${quoted}`, source: 'knowledge_base' };
}

const languageNames = new Map<string, Intl.DisplayNames>();

/** A language's name in the customer's language ("Engels" in Dutch); the code when Intl does not know it. */
function languageName(code: string, inLanguage: string): string {
  const key = primaryLanguage(inLanguage) || 'en';
  let names = languageNames.get(key);
  if (!names) {
    try {
      names = new Intl.DisplayNames([key], { type: 'language', fallback: 'code' });
    } catch {
      names = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' });
    }
    if (languageNames.size >= 64) languageNames.clear();
    languageNames.set(key, names);
  }
  return names.of(code) ?? code;
}

/**
 * The lead (when given) and the ranked sentences that reach FOLLOW_SENTENCE_MIN_SHARE of the best rank, in rank
 * order; the Budget then keeps those that fit.
 */
function pick(ranked: readonly Candidate[], best: number, lead?: Candidate): Candidate[] {
  const chosen: Candidate[] = lead === undefined ? [] : [lead];
  for (const c of ranked) {
    if (c === lead || c.score < best * FOLLOW_SENTENCE_MIN_SHARE) continue;
    chosen.push(c);
  }
  return chosen;
}

/**
 * Each chosen sentence that is itself a question (a page's "Missed a lesson?", "Karte verloren?") followed by the
 * sentence after it in its passage, which answers it: the question alone tells the customer nothing.
 */
function withTheirAnswers(chosen: readonly Candidate[], all: readonly Candidate[]): Candidate[] {
  const out: Candidate[] = [];
  for (const c of chosen) {
    if (!out.includes(c)) out.push(c);
    if (!/[?？]\s*$/u.test(c.text)) continue;
    const next = all.find((n) => n.passage === c.passage && n.index === c.index + 1);
    const already = out.find((o) => next !== undefined && o.passage === next.passage && o.index === next.index);
    if (next !== undefined && already === undefined) out.push(next);
  }
  return out;
}

/**
 * The best sentence first (it answers the question), then the others passage by passage (in the order of each
 * passage's best sentence) and within a passage in the order they were written, so the rest reads like the source.
 */
function inReadingOrder(chosen: readonly Candidate[]): Candidate[] {
  const [lead, ...rest] = chosen;
  if (lead === undefined) return [];
  const passageOrder: number[] = [lead.passage];
  for (const c of rest) if (!passageOrder.includes(c.passage)) passageOrder.push(c.passage);
  rest.sort((a, b) => passageOrder.indexOf(a.passage) - passageOrder.indexOf(b.passage) || a.index - b.index);
  return [lead, ...rest];
}

export class EmbeddedAnswerer implements AiPort {
  readonly name = 'embedded';
  readonly #lexicon: Lexicon;

  /** `lexicon`: related words and translations (default the open-data lexicon, src/knowledge/lexicon/). */
  constructor(lexicon: Lexicon = openLexicon) {
    this.#lexicon = lexicon;
  }

  /** Always an answer, never tool calls (see the module comment); the integrator's context is not passed on. */
  async step(input: AiStepInput): Promise<AiStep> {
    input.signal?.throwIfAborted();
    return composeAnswer({ message: input.message, language: input.language, passages: input.passages }, this.#lexicon);
  }
}

export function createEmbeddedAnswerer(lexicon?: Lexicon): AiPort {
  return new EmbeddedAnswerer(lexicon);
}
