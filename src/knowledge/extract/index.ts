/**
 * Text from where a shop keeps its knowledge: web pages and files (docs/knowledge.md, "Websites and files" → "How text
 * is read"). Everything here is pure: bytes or markup in, plain text out; fetching and storing are the sources' work.
 */
export type { ExtractedText } from './types.ts';
export { extractHtml } from './html.ts';
export { extractFile } from './files.ts';
export { cutText, joinBrokenLines } from './lines.ts';
