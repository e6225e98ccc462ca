/**
 * Knowledge sources as the API shows them (docs/knowledge.md, "Websites and files"; docs/interfaces.md, "Knowledge
 * sources"): a website or sitemap added by its URL (checked against the outbound rules when it is saved, so a refused
 * address is a 422 naming the rule), synced by the scheduler; a file uploaded, read at once, kept as a source with one
 * document (a file of the same name replaces it). Deleting a source deletes its passages.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { KnowledgeSourcesRepository } from '../../../db/repositories/knowledge-sources.repository.ts';
import type { KnowledgeSource, KnowledgeSourceSchedule, SkippedUrl } from '../../../db/schema.ts';
import { AppError, notFound } from '../../errors.ts';
import type { GuardedClient } from '../../net/index.ts';
import { primaryLanguage } from '../../text/language.ts';
import { chunkText, searchConfigFor } from '../chunking.ts';
import { cutText } from '../extract/index.ts';
import { cleanLine } from '../text.ts';
import type { ExtractionPool } from './extraction-pool.ts';
import { MAX_FILE_TEXT_BYTES } from './limits.ts';

export interface SourceInput {
  kind: 'website' | 'sitemap';
  url: string;
  schedule?: KnowledgeSourceSchedule;
  language?: string | null;
}

export interface FileInput {
  name: string;
  contentType: string | null;
  bytes: Uint8Array;
  language?: string | null;
}

/** A source as GET /v1/knowledge/sources/{id} answers it. */
export interface SourceView {
  id: string;
  kind: KnowledgeSource['kind'];
  url: string | null;
  name: string;
  schedule: KnowledgeSourceSchedule;
  language: string | null;
  status: KnowledgeSource['status'];
  found: number;
  fetched: number;
  pages: number;
  skipped: SkippedUrl[];
  error: string | null;
  last_synced_at: string | null;
  next_sync_at: string | null;
  file: { bytes: number | null; type: string | null } | null;
  created_at: string;
  updated_at: string;
}

export interface KnowledgeSourcesDeps {
  sources: KnowledgeSourcesRepository;
  http: Pick<GuardedClient, 'validateUrl'>;
  /** The knowledge service's `writing`: the next search looks again whether the workspace has knowledge. */
  writing: <T>(workspaceId: string, work: () => Promise<T>) => Promise<T>;
  /** A sync was asked for: the scheduler looks now. */
  wake: () => void;
  /** Where files are read: a worker thread, off the engine's loop. */
  extraction: Pick<ExtractionPool, 'readFile'>;
}

export type KnowledgeSources = ReturnType<typeof createKnowledgeSources>;

export function createKnowledgeSources(deps: KnowledgeSourcesDeps) {
  const { sources, http, writing, wake, extraction } = deps;

  async function found(workspaceId: string, id: string): Promise<KnowledgeSource> {
    const source = await sources.get(workspaceId, id);
    if (!source) throw notFound(`Knowledge source ${id}`);
    return source;
  }

  return {
    /** POST /v1/knowledge/sources: saved and queued; the URL must pass the outbound rules now (422 naming the rule). */
    async create(workspaceId: string, input: SourceInput): Promise<SourceView> {
      const checked = await http.validateUrl(input.url);
      if (!checked.ok) {
        throw new AppError('unprocessable', `The URL cannot be fetched: ${checked.reason}.`, [{ field: 'url', message: checked.reason }]);
      }
      const source = await sources.create({
        id: randomUUID(),
        workspaceId,
        kind: input.kind,
        url: checked.url.href,
        name: checked.url.host,
        schedule: input.schedule ?? 'daily',
        language: primaryLanguage(input.language ?? null) || null,
        status: 'queued',
        nextSyncAt: new Date(),
      });
      wake();
      return toView(source);
    },

    async list(workspaceId: string): Promise<SourceView[]> {
      return (await sources.list(workspaceId)).map(toView);
    },

    async get(workspaceId: string, id: string): Promise<SourceView> {
      return toView(await found(workspaceId, id));
    },

    /** DELETE: the source, its documents and passages. */
    async remove(workspaceId: string, id: string): Promise<void> {
      if (!(await writing(workspaceId, () => sources.remove(workspaceId, id)))) throw notFound(`Knowledge source ${id}`);
    },

    /** POST …/{id}/sync: due now (a file has nothing to sync: 409). */
    async requestSync(workspaceId: string, id: string): Promise<SourceView> {
      const source = await found(workspaceId, id);
      if (source.kind === 'file') throw new AppError('conflict', 'A file is not synced: upload it again to replace it.');
      const due = await sources.requestSync(workspaceId, id, new Date());
      if (!due) throw notFound(`Knowledge source ${id}`);
      wake();
      return toView(due);
    },

    /**
     * POST /v1/knowledge/files: read now (422 when unreadable, also when it takes too long or too much memory), kept as
     * a source of kind file with one document. Past MAX_FILE_TEXT_BYTES of text the rest is cut; the answer's
     * `skipped` says so (it is not kept with the source).
     */
    async uploadFile(workspaceId: string, file: FileInput): Promise<SourceView> {
      const name = cleanLine(file.name).slice(0, 255) || 'file';
      const extracted = await extraction.readFile({ bytes: file.bytes, name, contentType: file.contentType });
      const language = primaryLanguage(file.language ?? extracted.language) || null;
      const title = cleanLine(extracted.title) || name;
      const body = cutText(extracted.text, MAX_FILE_TEXT_BYTES);
      const notes: SkippedUrl[] =
        body.length < extracted.text.length
          ? [{ url: name, reason: `its text is longer than ${MAX_FILE_TEXT_BYTES / 1024 / 1024} MB: only its first ${MAX_FILE_TEXT_BYTES / 1024 / 1024} MB are kept` }]
          : [];
      const chunks = chunkText(body);
      if (!body.trim()) throw new AppError('unprocessable', `${name} holds no text that can be read.`, [{ field: 'file', message: 'holds no readable text' }]);
      const at = new Date();
      const source = await writing(workspaceId, () =>
        sources.replaceFile(
          { id: randomUUID(), workspaceId, kind: 'file', url: null, name, schedule: 'manual', language, status: 'done', nextSyncAt: null, fileBytes: file.bytes.byteLength, fileType: file.contentType },
          {
            id: randomUUID(),
            workspaceId,
            origin: 'file',
            externalId: `file:${createHash('sha256').update(name).digest('hex').slice(0, 32)}`,
            title,
            url: null,
            language,
            body,
            contentHash: createHash('sha256').update(JSON.stringify([title, language, body])).digest('hex'),
            config: searchConfigFor(language),
            chunks: (chunks.length ? chunks : [title]).map((text, ordinal) => ({ id: randomUUID(), ordinal, text })),
            at,
          },
        ),
      );
      return { ...toView(source), skipped: notes };
    },
  };
}

function toView(source: KnowledgeSource): SourceView {
  const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
  return {
    id: source.id,
    kind: source.kind,
    url: source.url,
    name: source.name,
    schedule: source.schedule,
    language: source.language,
    status: source.status,
    found: source.found,
    fetched: source.fetched,
    pages: source.pages,
    skipped: source.skipped,
    error: source.error,
    last_synced_at: iso(source.last_synced_at),
    next_sync_at: iso(source.next_sync_at),
    file: source.kind === 'file' ? { bytes: source.file_bytes, type: source.file_type } : null,
    created_at: iso(source.created_at)!,
    updated_at: iso(source.updated_at)!,
  };
}
