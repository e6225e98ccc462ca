/**
 * A Word document's text: mammoth turns its paragraphs into semantic HTML (headings from the heading styles, lists,
 * tables), and that HTML is read whole, without Readability's scoring: a document is all content.
 */
import mammoth from 'mammoth';
import { htmlBodyText } from './html.ts';
import { withoutTitleLine } from './lines.ts';
import type { ExtractedText } from './types.ts';
import { unreadable } from './unreadable.ts';
import { cleanLine } from '../text.ts';

export async function extractDocx(bytes: Uint8Array, name: string): Promise<ExtractedText> {
  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      // Pictures carry no text: an empty src instead of each image as a base64 data URI, and no files outside the zip.
      { convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' })), externalFileAccess: false },
    );
    html = result.value;
  } catch {
    throw unreadable(`"${name}" is not a readable Word document: it may be damaged. Open it and save it as .docx again.`);
  }
  const text = htmlBodyText(html);
  // A document that opens with a heading is titled by it; the title is then not also its first paragraph.
  const first = /^\s*<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(html);
  const title = first ? cleanLine(htmlBodyText(first[1]!)) : '';
  return { title, text: withoutTitleLine(text, title), language: null };
}
