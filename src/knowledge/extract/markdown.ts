/**
 * Markdown as plain text: the markup goes, the words stay. Headings, list items, quotes and table rows are
 * paragraphs of their own; other lines follow the paragraph rule of {@link joinBrokenLines}. A line-based reading,
 * not a full CommonMark parser: shop documents use headings, emphasis, links and lists.
 */
import { joinBrokenLines } from './lines.ts';
import type { ExtractedText } from './types.ts';
import { cleanLine } from '../text.ts';

export function markdownToText(markdown: string): ExtractedText {
  const out: string[] = [];
  let title = '';
  let fenced = false;
  // YAML front matter (a static site's title, date, tags) is data for the site generator, not text.
  const source = markdown.replace(/\r\n?/g, '\n').replace(/^---\n[\s\S]*?\n---\n/, '');
  for (const raw of source.split('\n')) {
    if (/^\s*(```|~~~)/.test(raw)) {
      fenced = !fenced;
      out.push('');
      continue;
    }
    if (fenced) {
      // Code keeps its lines: each one a paragraph.
      out.push(raw, '');
      continue;
    }
    const line = raw.trim();
    const heading = /^#{1,6}\s+(.*?)\s*#*$/.exec(line);
    if (heading) {
      const text = inline(heading[1]!);
      if (!title && /^#\s/.test(line)) title = cleanLine(text);
      else out.push('', text, '');
      continue;
    }
    // Setext underlines, horizontal rules and table separator rows carry no words.
    if (/^(=+|-{3,}|\*{3,}|_{3,}|\|?[\s:|-]+\|[\s:|-]*)$/.test(line)) {
      out.push('');
      continue;
    }
    const item = /^(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$/.exec(line);
    if (item) {
      out.push('', inline(item[1]!));
      continue;
    }
    const quote = /^>\s?(.*)$/.exec(line);
    if (quote) {
      out.push(inline(quote[1]!));
      continue;
    }
    if (line.startsWith('|')) {
      out.push('', inline(line.replace(/^\||\|$/g, '').split('|').map((cell) => cell.trim()).join(' · ')), '');
      continue;
    }
    out.push(inline(line));
  }
  return { title, text: joinBrokenLines(out.join('\n')), language: null };
}

/**
 * Emphasis, code spans, images and links: their words, without the markup. A span is at most 500 characters, so a line
 * full of unmatched `*` costs its length times 500, not its length squared.
 */
function inline(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/<(https?:\/\/[^>\s]+)>/g, '$1')
    .replace(/`([^`]+)`/g, '$1')
    .replace(/(\*\*|__)(?=\S)(.{1,500}?)(?<=\S)\1/g, '$2')
    .replace(/\*(?=\S)(.{1,500}?)(?<=\S)\*/g, '$1')
    // Underscores inside a word (file_name) are not emphasis.
    .replace(/(?<![\p{L}\p{N}])_(?=\S)(.{1,500}?)(?<=\S)_(?![\p{L}\p{N}])/gu, '$1')
    .replace(/~~(?=\S)(.{1,500}?)(?<=\S)~~/g, '$1')
    .replace(/\\([\\`*_{}[\]()#+\-.!>|])/g, '$1');
}
