/**
 * The paragraph rule of the knowledge base (docs/knowledge.md, "How text is read"), for any text: pasted in the
 * editor, read from a PDF, a TXT or a Markdown file.
 *
 * - A blank line separates paragraphs.
 * - A single line break inside a paragraph is a space: PDFs and e-mails break lines where the page ends, not where the
 *   sentence does, and "worn outside⏎cannot be returned" must stay one sentence.
 * - A word hyphenated at a line end is joined: "re-⏎turned" → "returned". The hyphen is kept ("pre-⏎order" →
 *   "pre-order") when the next line starts with a capital or a digit, when the part before it is a number, or when it
 *   is one of the few prefixes that are written with a hyphen ({@link HYPHENATED_PREFIXES}). A dash after a space
 *   ("one -⏎two") is a dash, joined with a space.
 * - A line that starts a list item ("- ", "* ", "• ", "1. ", "2) ") starts a paragraph of its own, so a list does not
 *   become one long sentence.
 */
import { normaliseText } from '../text.ts';

/**
 * Prefixes written with a hyphen in English and Dutch shop text (pre-order, e-mail, T-shirt, self-service, non-EU…):
 * a line that ends in one of them keeps the hyphen. Any other word split at a line end is taken to be hyphenated by
 * the line break and joined. Compared lowercase.
 */
export const HYPHENATED_PREFIXES: ReadonlySet<string> = new Set([
  'all', 'anti', 'co', 'cross', 'e', 'ex', 'half', 'multi', 'non', 'post', 'pre', 'self', 'semi', 't', 'well', 'x',
]);

/** A line that opens a list item: a bullet or a short number followed by a space. */
const LIST_ITEM = /^(?:[-*•–·]|\d{1,2}[.)])\s/u;

/** Paragraphs separated by one blank line, each one line: see the module comment for the rule. */
export function joinBrokenLines(text: string): string {
  const paragraphs: string[] = [];
  for (const block of normaliseText(text).split(/\n[ \u00a0]*\n/)) {
    // The paragraph's pieces, its last line apart: joining looks at that line's end only. Looking at the end of a
    // string built by `+=` flattens it each time, which made a PDF of one long paragraph (every line ending
    // mid-sentence) take time in the square of its length (100 pages: 19 s).
    let pieces: string[] = [];
    let last = '';
    for (const raw of block.split('\n')) {
      const line = raw.replace(/[ \u00a0]+/g, ' ').trim();
      if (!line) continue;
      if (last && LIST_ITEM.test(line)) {
        paragraphs.push(pieces.join('') + last);
        pieces = [];
        last = '';
      }
      if (last) {
        const joined = joinLine(last, line);
        pieces.push(joined.slice(0, joined.length - line.length));
      }
      last = line;
    }
    if (last) paragraphs.push(pieces.join('') + last);
  }
  return paragraphs.join('\n\n');
}

/** `before` and the next line of the same paragraph as one line. */
export function joinLine(before: string, line: string): string {
  // A soft hyphen is where a word may be broken: always joined without it.
  if (before.endsWith('\u00ad')) return before.slice(0, -1) + line;
  // Only the tail is matched: a word is not longer, and a long `before` costs nothing more.
  const split = before.endsWith('-') ? /(\p{L}+|\p{N}+)-$/u.exec(before.slice(-64)) : null;
  if (!split) return `${before} ${line}`;
  const part = split[1]!;
  const keepHyphen = /^\p{N}/u.test(part) || !/^\p{Ll}/u.test(line) || HYPHENATED_PREFIXES.has(part.toLowerCase());
  return keepHyphen ? before + line : before.slice(0, -1) + line;
}

/**
 * The text without its first line when that line only repeats the title ("Returns policy" over a returns policy, in
 * any case and punctuation): a title is never read out as part of an answer, and a title line joined to the sentence
 * under it by the line rule would be. Applied before {@link joinBrokenLines} to pasted text, after it to extracted text
 * (where a line is a paragraph).
 */
export function withoutTitleLine(text: string, title: string): string {
  const match = /^\s*([^\n]*)(?:\n|$)/.exec(text);
  return match && sameWords(match[1]!, title) ? text.slice(match[0].length).replace(/^\s+/, '') : text;
}

/** The same words, ignoring case and punctuation ("Returns policy." and "RETURNS POLICY"). */
export function sameWords(a: string, b: string): boolean {
  const key = (s: string) => s.normalize('NFC').toLowerCase().match(/[\p{L}\p{N}]+/gu)?.join(' ') ?? '';
  const k = key(a);
  return k !== '' && k === key(b);
}

/** At most `maxBytes` of UTF-8, ending at a paragraph's or a sentence's end where one is near (in the last fifth). */
export function cutText(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const cut = Buffer.from(text, 'utf8').subarray(0, maxBytes).toString('utf8').replace(/\uFFFD$/, '');
  const end = Math.max(cut.lastIndexOf('\n\n'), cut.lastIndexOf('. ') + 1);
  return (end > cut.length * 0.8 ? cut.slice(0, end) : cut).trim();
}
