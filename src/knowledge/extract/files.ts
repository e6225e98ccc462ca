/**
 * An uploaded file's text, by what the file is: its first bytes (magic numbers) first, its name and content type
 * after, since a name can lie. PDF, DOCX, TXT, Markdown and HTML are read; anything else, or a file that cannot be
 * read, is refused with AppError('unprocessable', …) in a sentence its owner understands (the route answers 422).
 */
import { MAX_FILE_BYTES } from '../limits.ts';
import { cleanLine } from '../text.ts';
import { extractDocx } from './docx.ts';
import { extractHtml } from './html.ts';
import { joinBrokenLines } from './lines.ts';
import { markdownToText } from './markdown.ts';
import { extractPdf } from './pdf.ts';
import type { ExtractedText } from './types.ts';
import { unreadable } from './unreadable.ts';

export type FileKind = 'pdf' | 'docx' | 'txt' | 'markdown' | 'html';

export interface FileInfo {
  name: string;
  contentType?: string | null;
}

const SUPPORTED = 'Botlink reads PDF, Word (.docx), text (.txt), Markdown (.md) and HTML files';

/** PDF, DOCX, TXT, Markdown, HTML by content (magic bytes) and name; AppError('unprocessable', …) when unreadable or unsupported. */
export async function extractFile(bytes: Uint8Array, file: FileInfo): Promise<ExtractedText> {
  const name = cleanLine(file.name) || 'file';
  if (bytes.byteLength > MAX_FILE_BYTES) {
    throw unreadable(`"${name}" is ${megabytes(bytes.byteLength)} MB; a file can be at most ${megabytes(MAX_FILE_BYTES)} MB.`);
  }
  const kind = fileKind(bytes, file);
  const extracted = await read(kind, bytes, name);
  if (!/[\p{L}\p{N}]/u.test(extracted.text)) {
    throw unreadable(
      kind === 'pdf'
        ? `"${name}" has no text to read: a scanned PDF holds pictures of pages. Export it with its text, or paste the text.`
        : `"${name}" has no text to read.`,
    );
  }
  return { ...extracted, title: extracted.title || titleFromName(name) };
}

async function read(kind: FileKind, bytes: Uint8Array, name: string): Promise<ExtractedText> {
  switch (kind) {
    case 'pdf':
      return extractPdf(bytes, name);
    case 'docx':
      return extractDocx(bytes, name);
    case 'html':
      return extractHtml(decodeText(bytes, name), `file:///${encodeURIComponent(name)}`);
    case 'markdown':
      return markdownToText(decodeText(bytes, name));
    case 'txt':
      return { title: '', text: joinBrokenLines(decodeText(bytes, name)), language: null };
  }
}

/** What the file is: its magic bytes when it has any, else its name's extension, else its content type. */
export function fileKind(bytes: Uint8Array, file: FileInfo): FileKind {
  const name = file.name.toLowerCase();
  const extension = /\.([a-z0-9]{1,10})$/.exec(name)?.[1] ?? '';
  const type = (file.contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (startsWith(bytes, '%PDF-')) return 'pdf';
  if (startsWith(bytes, 'PK\x03\x04')) {
    // A DOCX is a zip; so are XLSX, ODT and plain archives, which mammoth cannot read.
    if (extension === 'docx' || type === 'application/vnd.openxmlformats-officedocument.wordprocessingml.document') return 'docx';
    throw unreadable(`"${file.name}" is an archive or an office file that is not a Word document. ${SUPPORTED}.`);
  }
  if (extension === 'pdf' || type === 'application/pdf') throw unreadable(`"${file.name}" is not a readable PDF: it may be damaged. Open it and save it as PDF again.`);
  if (extension === 'docx') throw unreadable(`"${file.name}" is not a readable Word document: it may be damaged, or an old .doc renamed. Save it as .docx again.`);
  if (extension === 'doc') throw unreadable(`"${file.name}" is an old Word document (.doc). Save it as .docx and upload that.`);
  if (looksBinary(bytes)) throw unreadable(`"${file.name}" is not a document Botlink can read. ${SUPPORTED}.`);
  if (extension === 'md' || extension === 'markdown' || type === 'text/markdown') return 'markdown';
  if (extension === 'html' || extension === 'htm' || type === 'text/html') return 'html';
  if (extension === 'txt' || extension === 'text' || type === 'text/plain') return 'txt';
  throw unreadable(`"${file.name}" is not a file type Botlink reads. ${SUPPORTED}.`);
}

function startsWith(bytes: Uint8Array, magic: string): boolean {
  if (bytes.byteLength < magic.length) return false;
  for (let i = 0; i < magic.length; i++) if (bytes[i] !== magic.charCodeAt(i)) return false;
  return true;
}

/** Text never holds NUL; executables, images and archives do within their first kilobytes. */
function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

/** UTF-8 (with or without a byte-order mark), else Windows-1252, which every byte sequence is. */
function decodeText(bytes: Uint8Array, name: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    try {
      return new TextDecoder('windows-1252').decode(bytes);
    } catch {
      throw unreadable(`"${name}" is not text Botlink can read: save it as UTF-8.`);
    }
  }
}

function titleFromName(name: string): string {
  return cleanLine(name.replace(/\.[A-Za-z0-9]{1,10}$/, '').replace(/[_]+/g, ' ')) || name;
}

function megabytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(bytes % (1024 * 1024) === 0 ? 0 : 1);
}
