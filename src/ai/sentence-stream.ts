/**
 * Cutting a reply that arrives bit by bit (an LLM's token stream) into pieces a voice can speak as soon as they are
 * complete. Speech rendering (./render.ts) works on whole sentences: a price, a date, an address or a markdown link
 * split between two tokens would come out wrong, and a list reads as "a, b and c" only when it is seen whole. So a
 * piece ends only where nothing later can change how it is said:
 *
 * - at a sentence end (`.`, `!`, `?`, `…`, optionally followed by closing quotes or brackets) followed by white space
 *   and a next word that does not start a list item; or at a blank line;
 * - never inside a paragraph that has list or table lines: a list stays whole up to its blank line or the end;
 * - never inside a code fence.
 *
 * The pieces are consecutive slices of the text: `consumed` says how many characters of the text they cover (the
 * white space between them included), so the rest of the text is `text.slice(consumed)`.
 */

/** A sentence end with its closing quotes or brackets, then white space. */
const sentenceEnd = /[.!?…]["'”’)\]]*(?=\s)/gu;
const paragraphBreak = /\n[ \t]*\n/g;
const listLine = /^\s*(?:[-*+•]|\d{1,3}[.)]|\|)(?:\s|$)/mu;
const listStart = /^(?:[-*+•]|\d{1,3}[.)]|\|)$/u;

export interface SentenceStream {
  /** Adds text; answers the pieces that became complete (often none). */
  push(text: string): string[];
  /** How many characters of all the text pushed the pieces so far cover. */
  readonly consumed: number;
  /** All the text pushed so far. */
  readonly text: string;
}

export function createSentenceStream(): SentenceStream {
  let text = '';
  let consumed = 0;

  /** The end of the next piece in `text` from `consumed`, and where the piece after it starts; null: none yet. */
  function nextPiece(): { end: number; next: number } | null {
    const from = consumed;
    let best: { end: number; next: number } | null = null;

    paragraphBreak.lastIndex = from;
    const paragraph = paragraphBreak.exec(text);
    if (paragraph) {
      const next = skipSpace(paragraph.index + paragraph[0].length);
      // A blank line ends a piece once the next paragraph has begun (trailing blank lines are nothing yet).
      if (next < text.length) best = { end: paragraph.index, next };
    }

    sentenceEnd.lastIndex = from;
    for (let m = sentenceEnd.exec(text); m; m = sentenceEnd.exec(text)) {
      const end = m.index + m[0].length;
      if (best && end > best.end) break;
      const next = skipSpace(end);
      // The next word must be complete to tell whether it starts a list item ("1." needs the space after it).
      const wordEnd = text.slice(next).search(/\s/u);
      if (wordEnd < 0) break;
      const word = text.slice(next, next + wordEnd);
      const sinceParagraph = text.slice(paragraphStart(end), end);
      if (listStart.test(word) || listLine.test(sinceParagraph) || insideFence(end)) continue;
      best = { end, next };
      break;
    }
    if (best && insideFence(best.end)) return null;
    return best;
  }

  function skipSpace(at: number): number {
    let i = at;
    while (i < text.length && /\s/u.test(text[i]!)) i++;
    return i;
  }

  /** Where the paragraph holding `at` starts (after the last blank line before it, and not before `consumed`). */
  function paragraphStart(at: number): number {
    let start = consumed;
    const breaks = /\n[ \t]*\n/g;
    breaks.lastIndex = consumed;
    for (let m = breaks.exec(text); m && m.index < at; m = breaks.exec(text)) start = m.index + m[0].length;
    return start;
  }

  function insideFence(at: number): boolean {
    return (text.slice(0, at).match(/```/g)?.length ?? 0) % 2 === 1;
  }

  return {
    push(more: string): string[] {
      text += more;
      const pieces: string[] = [];
      for (let p = nextPiece(); p; p = nextPiece()) {
        const piece = text.slice(consumed, p.end).trim();
        consumed = p.next;
        if (piece !== '') pieces.push(piece);
      }
      return pieces;
    },
    get consumed() {
      return consumed;
    },
    get text() {
      return text;
    },
  };
}
