/**
 * A PDF's text (docs/knowledge.md, "How text is read"), with pdf.js through unpdf.
 *
 * A PDF has no paragraphs, only positioned runs of text. Runs on one baseline make a line; a gap between lines
 * clearly wider than the page's usual line spacing ends a paragraph; lines inside a paragraph follow the paragraph
 * rule of {@link joinBrokenLines} (a line break is a space, a hyphenated word is joined). A page that does not end a
 * sentence continues on the next one: the sentence is one sentence. Lines at the top or bottom of the page that
 * repeat on most pages (the same words, or the same words with another page number) are a running header or footer
 * and are dropped.
 */
import { getDocumentProxy } from 'unpdf';
import { primaryLanguage } from '../../text/language.ts';
import { cleanLine } from '../text.ts';
import { unreadable } from './unreadable.ts';
import { joinBrokenLines } from './lines.ts';
import type { ExtractedText } from './types.ts';

/** A line starts a new paragraph when its gap to the line above is this many times the page's usual line spacing. */
const PARAGRAPH_GAP = 1.4;
/** Lines this close to a page's top or bottom (by position) are candidates for a running header or footer. */
const EDGE_LINES = 2;
/** A candidate repeating on at least this share of the pages (and at least two) is a running header or footer. */
const REPEAT_SHARE = 0.6;

interface Line {
  text: string;
  /** Baseline, in PDF units from the page's bottom. */
  y: number;
  /** The tallest run's height: the font size, near enough. */
  height: number;
}

interface TextRun {
  str: string;
  transform: number[];
  height: number;
  hasEOL: boolean;
}

export async function extractPdf(bytes: Uint8Array, name: string): Promise<ExtractedText> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js may take the buffer over (transfer it to its worker): it gets a copy.
    pdf = await getDocumentProxy(new Uint8Array(bytes), { stopAtErrors: false });
  } catch (error) {
    if ((error as { name?: string } | null)?.name === 'PasswordException') {
      throw unreadable(`"${name}" is protected with a password. Save a copy without the password and upload that.`);
    }
    throw unreadable(`"${name}" is not a readable PDF: it may be damaged. Open it and save it as PDF again.`);
  }
  try {
    const pages: Line[][] = [];
    for (let number = 1; number <= pdf.numPages; number++) {
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      pages.push(linesOf(content.items.filter((item): item is TextRun & typeof item => 'str' in item)));
      page.cleanup();
    }
    const meta = await pdf.getMetadata().catch(() => null);
    const info = (meta?.info ?? {}) as { Title?: unknown; Language?: unknown };
    const language = primaryLanguage(typeof info.Language === 'string' ? info.Language : '');
    return {
      title: typeof info.Title === 'string' ? cleanLine(info.Title) : '',
      text: pdfText(pages),
      language: language.length === 2 ? language : null,
    };
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'unprocessable') throw error;
    throw unreadable(`"${name}" is not a readable PDF: it may be damaged. Open it and save it as PDF again.`);
  } finally {
    await pdf.loadingTask.destroy();
  }
}

/** The page's runs as lines, in the order the page draws them. */
function linesOf(runs: readonly TextRun[]): Line[] {
  const lines: Line[] = [];
  let current: Line | null = null;
  let ended = false;
  for (const run of runs) {
    const y = run.transform[5] ?? 0;
    const height = Math.abs(run.height) || Math.abs(run.transform[3] ?? 0) || 1;
    if (current && !ended && Math.abs(current.y - y) <= Math.max(current.height, height) * 0.5) {
      current.text += run.str;
      current.height = Math.max(current.height, height);
    } else if (run.str.trim() !== '' || run.hasEOL) {
      current = { text: run.str, y, height };
      lines.push(current);
    }
    ended = run.hasEOL;
  }
  return lines.map((line) => ({ ...line, text: line.text.replace(/\s+/g, ' ').trim() })).filter((line) => line.text !== '');
}

/**
 * Pages' lines as paragraphs (see the module comment). Exported for the tests, which check the rules on lines
 * without going through a PDF.
 */
export function pdfText(pages: readonly (readonly Line[])[]): string {
  const repeated = runningLines(pages);
  const bodies = pages.map((page) => {
    const edges = edgeLines(page);
    return page.filter((line, i) => !(edges.has(i) && repeated.has(repeatKey(line.text))));
  });
  const spacing = usualSpacing(bodies);
  const paragraphs: string[][] = [];
  let continues = false;
  for (const lines of bodies) {
    lines.forEach((line, i) => {
      const previous = lines[i - 1];
      const gap = previous ? previous.y - line.y : 0;
      // A new paragraph: a wide gap, a line above this one (a new column), or a new page after a finished sentence.
      const starts = previous ? gap > spacing * PARAGRAPH_GAP || gap < 0 : !continues;
      if (starts || paragraphs.length === 0) paragraphs.push([line.text]);
      else paragraphs.at(-1)!.push(line.text);
    });
    const last = lines.at(-1)?.text ?? '';
    // A page that stops mid-sentence (no end punctuation) goes on in the next page's first line.
    continues = last !== '' && !/[.!?…:;)"”’]$/u.test(last);
  }
  return joinBrokenLines(paragraphs.map((lines) => lines.join('\n')).join('\n\n'));
}

/**
 * The distance between consecutive lines of a paragraph: the gap a fifth of the way up the downward gaps between lines
 * over all pages (not the median: a document of short paragraphs has nearly as many paragraph gaps as line gaps), at
 * least a line of the font.
 */
function usualSpacing(pages: readonly (readonly Line[])[]): number {
  const gaps: number[] = [];
  for (const lines of pages) {
    for (let i = 1; i < lines.length; i++) {
      const gap = lines[i - 1]!.y - lines[i]!.y;
      if (gap > 0) gaps.push(gap);
    }
  }
  const height = pages.find((lines) => lines.length > 0)?.[0]?.height ?? 12;
  if (gaps.length === 0) return height * 1.2;
  gaps.sort((a, b) => a - b);
  return Math.max(gaps[Math.floor((gaps.length - 1) / 5)]!, height * 1.05);
}

/** Indexes of the page's EDGE_LINES highest and EDGE_LINES lowest lines (by position, not by drawing order). */
function edgeLines(page: readonly Line[]): Set<number> {
  const byHeight = page.map((_line, i) => i).sort((a, b) => page[b]!.y - page[a]!.y);
  return new Set([...byHeight.slice(0, EDGE_LINES), ...byHeight.slice(-EDGE_LINES)]);
}

/** The same words with any number in place of each number: "Page 3 of 12" and "Page 4 of 12" are one footer. */
function repeatKey(text: string): string {
  return text.toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim();
}

/** Keys of the edge lines that repeat on most pages: running headers and footers. */
function runningLines(pages: readonly (readonly Line[])[]): Set<string> {
  const counts = new Map<string, number>();
  for (const page of pages) {
    const keys = new Set([...edgeLines(page)].map((i) => repeatKey(page[i]!.text)));
    for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const needed = Math.max(2, Math.ceil(pages.length * REPEAT_SHARE));
  return new Set([...counts].filter(([, count]) => count >= needed).map(([key]) => key));
}
