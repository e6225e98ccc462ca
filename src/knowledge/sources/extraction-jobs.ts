/**
 * What the extraction worker does with a document (./extraction-worker.ts runs these in a worker thread, the tests run
 * them in-process): a fetched page's bytes become its text, its links and what it asks of robots; a file's bytes its
 * text. Pure: bytes in, plain data out, nothing fetched or stored.
 */
import { extractFile, extractHtml, type ExtractedText } from '../extract/index.ts';
import { decodePage, metaDirectives, sameSiteLinks, type PageDirectives } from './page-links.ts';

export interface PageJob {
  kind: 'page';
  bytes: Uint8Array;
  contentType: string | null;
  /** The page's final URL (after redirects): links are resolved against it. */
  url: string;
  /** Whether its same-site links are wanted (a website's sync; a sitemap lists its pages itself). */
  links: boolean;
}

export interface FileJob {
  kind: 'file';
  bytes: Uint8Array;
  name: string;
  contentType: string | null;
}

export type ExtractionJob = PageJob | FileJob;

export interface PageRead {
  /** Empty when the page says noindex: it is not read. */
  extracted: ExtractedText;
  /** Empty unless asked for, and when the page says nofollow. */
  links: string[];
  directives: PageDirectives;
}

export type ExtractionResult = ({ kind: 'page' } & PageRead) | { kind: 'file'; extracted: ExtractedText };

export async function runExtraction(job: ExtractionJob): Promise<ExtractionResult> {
  if (job.kind === 'file') return { kind: 'file', extracted: await extractFile(job.bytes, { name: job.name, contentType: job.contentType }) };
  return { kind: 'page', ...readPage(job) };
}

export function readPage(job: Omit<PageJob, 'kind'>): PageRead {
  const html = decodePage(job.bytes, job.contentType);
  const directives = metaDirectives(html);
  const links = job.links && !directives.nofollow ? sameSiteLinks(html, job.url) : [];
  const extracted = directives.noindex ? { title: '', text: '', language: null } : extractHtml(html, job.url);
  return { extracted, links, directives };
}
