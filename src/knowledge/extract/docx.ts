/**
 * A Word document's text: mammoth turns its paragraphs into semantic HTML (headings from the heading styles, lists,
 * tables), and that HTML is read whole, without Readability's scoring: a document is all content.
 */
import mammoth from 'mammoth';
import { htmlBodyText } from './html.ts';
import { withoutTitleLine } from './lines.ts';
import { readZipEntry } from './zip.ts';
import { primaryLanguage } from '../../text/language.ts';
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
  const heading = first ? cleanLine(htmlBodyText(first[1]!)) : '';
  const meta = metadata(bytes);
  // The opening heading before the metadata's title: Word fills that from templates and old file names.
  const title = heading || meta.title;
  return { title, text: withoutTitleLine(text, title), language: meta.language };
}

/**
 * The document's own title and language: docProps/core.xml's dc:title and dc:language, else the language of the
 * default paragraph style (word/styles.xml), which Word sets from the author's proofing language.
 */
function metadata(bytes: Uint8Array): { title: string; language: string | null } {
  const core = readZipEntry(bytes, 'docProps/core.xml')?.toString('utf8') ?? '';
  const title = cleanLine(decodeXml(/<dc:title>([^<]*)<\/dc:title>/.exec(core)?.[1] ?? ''));
  let tag = /<dc:language>([^<]*)<\/dc:language>/.exec(core)?.[1] ?? '';
  if (!tag) {
    const styles = readZipEntry(bytes, 'word/styles.xml')?.toString('utf8') ?? '';
    const defaults = /<w:docDefaults>[\s\S]*?<\/w:docDefaults>/.exec(styles)?.[0] ?? '';
    tag = /<w:lang\b[^>]*\bw:val="([^"]*)"/.exec(defaults)?.[1] ?? '';
  }
  const language = primaryLanguage(tag);
  return { title, language: language.length === 2 ? language : null };
}

function decodeXml(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|apos);/g, (_whole, name: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" })[name]!);
}
