/**
 * Cutting a reply that arrives bit by bit (an LLM's token stream) into pieces a voice can speak as soon as they are
 * complete. Speech rendering (./render.ts) works on whole sentences: a price, a date, an address or a markdown link
 * split between two tokens would come out wrong, and a list reads as "a, b and c" only when it is seen whole. So a
 * piece ends only where nothing later can change how it is said:
 *
 * - at a sentence end (`.`, `!`, `?`, `…`, optionally followed by closing quotes or brackets) followed by white space
 *   and a next word that does not start a list item; or at a blank line;
 * - never inside a paragraph that has list or table lines before that point: a list stays whole up to its blank line
 *   or the end;
 * - never inside a code fence.
 *
 * The pieces are consecutive slices of the text: `consumed` says how many characters of the text they cover (the
 * white space between them included), so the rest of the text is `text.slice(consumed)`.
 *
 * Lines, fences and sentence ends are each looked at once, what was learnt kept as sorted positions, so the scanning
 * does not depend on how the text is split into pushes. The text itself is one growing string, which V8 copies whole
 * when it is read after an append; so the stream takes at most `maxChars` (further text is ignored): a model's output
 * is bounded only by the response cap (1 MB), and copying that on every token would hold the event loop for minutes.
 */

/** A sentence end with its closing quotes or brackets, then white space. */
const sentenceEnd = /[.!?…]["'”’)\]]*(?=\s)/gu;
const sentenceEndChar = /[.!?…"'”’)\]]/u;
const whiteSpace = /\s/gu;
const notSpaceOrTab = /[^ \t]/g;
/** The start of a line that is a list item or a table row (tested on the line's first characters). */
const listLine = /^[ \t]*(?:[-*+•]|\d{1,3}[.)]|\|)(?:\s|$)/u;
/** How much of a line the list test reads: the marker after a little indentation. */
const LIST_TEST_CHARS = 64;
const listStart = /^(?:[-*+•]|\d{1,3}[.)]|\|)$/u;
const FENCE = '```';

export interface SentenceStream {
  /** Adds text; answers the pieces that became complete (often none). Past `maxChars`, text is ignored. */
  push(text: string): string[];
  /** How many characters of all the text pushed the pieces so far cover. */
  readonly consumed: number;
  /** All the text pushed so far. */
  readonly text: string;
}

/** The number of sorted `values` that are ≤ `at`. */
function countUpTo(values: readonly number[], at: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function createSentenceStream(options: { maxChars: number }): SentenceStream {
  let text = '';
  let consumed = 0;
  /** Sentence ends before this position have been judged (none of them is a boundary). */
  let scan = 0;
  /**
   * The sentence end waiting for its next word: `next` where that word starts (or how far the white space before it
   * was skipped), `searched` how far white space after it was looked for.
   */
  let waiting: { end: number; next: number; searched: number } | null = null;
  /** The blank line waiting for the next paragraph to begin, and how far the white space after it was skipped. */
  let blankWaiting: { start: number; skipped: number } | null = null;

  // What the lines tell, kept as sorted positions: each line is read once, when it is complete.
  /** Where the first incomplete line starts. */
  let lineScan = 0;
  /** Blank lines: `end` where the text before them ends (the newline before), `start` where the next paragraph starts. */
  const blanks: { end: number; start: number }[] = [];
  const paragraphStarts: number[] = [0];
  /** Starts of the lines that are list items or table rows. */
  const listLines: number[] = [];
  /** Where the search for the next blank line that ends a piece starts (an index into `blanks`). */
  let blankIndex = 0;

  /** Ends of code fences (```), in order; `fenceScan`: where the search goes on. */
  const fences: number[] = [];
  let fenceScan = 0;

  function readLines(): void {
    for (let nl = text.indexOf('\n', lineScan); nl >= 0; nl = text.indexOf('\n', lineScan)) {
      notSpaceOrTab.lastIndex = lineScan;
      const first = notSpaceOrTab.exec(text);
      const blank = !first || first.index >= nl;
      if (blank && lineScan > 0) {
        blanks.push({ end: lineScan - 1, start: nl + 1 });
        paragraphStarts.push(nl + 1);
      } else if (!blank && listLine.test(text.slice(lineScan, Math.min(nl, lineScan + LIST_TEST_CHARS)))) {
        listLines.push(lineScan);
      }
      lineScan = nl + 1;
    }
  }

  function findFences(): void {
    for (let i = text.indexOf(FENCE, fenceScan); i >= 0; i = text.indexOf(FENCE, fenceScan)) {
      fences.push(i + FENCE.length);
      fenceScan = i + FENCE.length;
    }
    // A fence may be cut by the push boundary: its first characters are looked at again next time.
    fenceScan = Math.max(fenceScan, text.length - (FENCE.length - 1));
  }

  /** An odd number of fences ended at or before `at` means a code block is open there. */
  function insideFence(at: number): boolean {
    return countUpTo(fences, at) % 2 === 1;
  }

  /** Whether the paragraph holding `at`, from its start (and not before `consumed`), has a list line before `at`. */
  function listBefore(at: number): boolean {
    const from = Math.max(paragraphStarts[countUpTo(paragraphStarts, at) - 1] ?? 0, consumed);
    // Where the last piece ended counts as a line start (the white space after it was skipped): "- b" there is a list.
    if (listLine.test(text.slice(from, Math.min(at, from + LIST_TEST_CHARS)))) return true;
    const i = countUpTo(listLines, from - 1); // the first list line at or after `from`
    if (i < listLines.length && listLines[i]! < at) return true;
    // The line `at` is in may not be complete yet.
    return lineScan >= from && lineScan < at && listLine.test(text.slice(lineScan, Math.min(at, lineScan + LIST_TEST_CHARS)));
  }

  function skipSpace(at: number): number {
    let i = at;
    while (i < text.length && /\s/u.test(text[i]!)) i++;
    return i;
  }

  /**
   * The word after the sentence end at `end`, once it is complete (white space after it), with where it starts; null
   * while it is not. What was skipped and searched is remembered, so waiting through many pushes stays linear.
   */
  function wordAfter(end: number): { next: number; word: string } | null {
    const resume = waiting?.end === end ? waiting : null;
    const next = skipSpace(resume ? resume.next : end);
    if (next >= text.length) {
      waiting = { end, next, searched: next };
      return null;
    }
    whiteSpace.lastIndex = resume ? Math.max(next, resume.searched) : next;
    const space = whiteSpace.exec(text);
    if (!space) {
      waiting = { end, next, searched: text.length };
      return null;
    }
    waiting = null;
    return { next, word: text.slice(next, space.index) };
  }

  /** The end of the next piece in `text` from `consumed`, and where the piece after it starts; null: none yet. */
  function nextPiece(): { end: number; next: number } | null {
    let best: { end: number; next: number } | null = null;
    while (blankIndex < blanks.length && blanks[blankIndex]!.end < consumed) blankIndex++;
    const blank = blanks[blankIndex];
    if (blank) {
      const next = skipSpace(blankWaiting?.start === blank.start ? blankWaiting.skipped : blank.start);
      // A blank line ends a piece once the next paragraph has begun (trailing blank lines are nothing yet).
      blankWaiting = next < text.length ? null : { start: blank.start, skipped: next };
      if (next < text.length && !insideFence(blank.end)) best = { end: blank.end, next };
    }

    sentenceEnd.lastIndex = Math.max(consumed, scan);
    let m = sentenceEnd.exec(text);
    for (; m; m = sentenceEnd.exec(text)) {
      const end = m.index + m[0].length;
      if (best && end > best.end) break;
      // The next word must be complete to tell whether it starts a list item ("1." needs the space after it).
      const after = wordAfter(end);
      if (after === null) break;
      scan = end; // judged, whatever the verdict
      if (listStart.test(after.word) || listBefore(end) || insideFence(end)) continue;
      best = { end, next: after.next };
      break;
    }
    if (!m && !waiting) {
      // No sentence end up to the text's end, but one may still be forming there ('.' or '."' waiting for a space).
      let i = text.length;
      while (i > scan && sentenceEndChar.test(text[i - 1]!)) i--;
      scan = Math.max(scan, i);
    }
    return best;
  }

  return {
    push(more: string): string[] {
      if (more === '' || text.length >= options.maxChars) return [];
      text += more.slice(0, options.maxChars - text.length);
      readLines();
      findFences();
      const pieces: string[] = [];
      for (let p = nextPiece(); p; p = nextPiece()) {
        const piece = text.slice(consumed, p.end).trim();
        consumed = p.next;
        scan = Math.max(scan, consumed);
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
