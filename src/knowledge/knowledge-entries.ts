/**
 * Knowledge written by hand in the dashboard (docs/knowledge.md): pages and question-and-answer pairs that owners and
 * admins add beside what the sync API sends.
 *
 * - They live in the knowledge base's own tables with origin `dashboard`, chunked and indexed exactly as a synced page
 *   is (the title with weight A, the text with weight D), so the search finds them with no change of its own. A
 *   question-and-answer pair is a page whose title is the question and whose text is the answer: the question weighs
 *   as a title does.
 * - The sync API never lists, overwrites or deletes them (its statements read origin `sync` only), and nothing here
 *   changes a synced document: an id of a synced page is answered 409 on a write.
 * - Every read and write is scoped to the workspace: another workspace's id is not there (404).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { EntryRow, EntryWrite, KnowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import type { KnowledgeOrigin } from '../../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import { primaryLanguage } from '../text/language.ts';
import { chunkText, searchConfigFor } from './chunking.ts';
import type { KnowledgeService } from './knowledge-service.ts';
import { ENTRY_EXCERPT_CHARS, MAX_DOCUMENT_BODY_BYTES } from './limits.ts';
import { joinBrokenLines, withoutTitleLine } from './extract/lines.ts';
import { cleanLine, normaliseText } from './text.ts';

/**
 * Part of every hand-made entry's content hash. Raise it with the chunking (knowledge-service.ts's INDEX_VERSION): an
 * entry saved again is then re-chunked even when its text is the same.
 */
const ENTRY_INDEX_VERSION = 1;

/** page: a title and its text; qa: a question (the title) and its answer (the text). */
export type EntryType = 'page' | 'qa';

export interface EntryInput {
  type: EntryType;
  /** The page's title, or the question. */
  title: string;
  /** The page's text, or the answer: plain text, paragraphs separated by blank lines. */
  text: string;
  /** Language tag (en, nl, de, fr…); null or absent: indexed without stemming. */
  language?: string | null;
}

/** A document as the dashboard shows it. */
export interface EntryView {
  id: string;
  /** dashboard: written here, editable by owners and admins; sync: sent by the shop's or CMS's plugin, read-only. */
  origin: KnowledgeOrigin;
  type: 'page' | 'qa' | 'product';
  title: string;
  /** The whole text (one entry), or its first ENTRY_EXCERPT_CHARS characters (a list; `text_cut` says so). */
  text: string;
  text_cut: boolean;
  language: string | null;
  /** Synced documents: the plugin's own id and the page's address; null for hand-made entries. */
  external_id: string | null;
  url: string | null;
  /** Passages the search can find. */
  chunks: number;
  editable: boolean;
  created_at: string;
  updated_at: string;
}

export interface EntryListing {
  entries: EntryView[];
  /** Pass as ?cursor= for the next page; null on the last page. */
  next_cursor: string | null;
}

export function createKnowledgeEntries(deps: { knowledge: KnowledgeRepository; service: Pick<KnowledgeService, 'writing'>; now?: () => Date }) {
  const { knowledge, service } = deps;
  const now = deps.now ?? (() => new Date());

  /** Writes the entry's chunks as a synced page's are written (knowledge-service.ts `write`). */
  async function index(queries: Parameters<Parameters<KnowledgeRepository['inTransaction']>[0]>[0], id: string, entry: EntryWrite): Promise<void> {
    const texts = chunkText(entry.body);
    await queries.replaceChunks({
      documentId: id,
      workspaceId: entry.workspaceId,
      language: entry.language,
      config: searchConfigFor(entry.language),
      title: entry.title,
      chunks: (texts.length ? texts : [entry.title]).map((text, ordinal) => ({ id: randomUUID(), ordinal, text })),
    });
  }

  async function one(workspaceId: string, id: string): Promise<EntryView> {
    const row = await knowledge.findEntry(workspaceId, id);
    if (!row) throw notFound('The knowledge entry');
    return view(row, false);
  }

  return {
    /** GET /v1/knowledge/entries: one origin's documents, most recently changed first, texts cut to an excerpt. */
    async list(workspaceId: string, options: { origin: KnowledgeOrigin; limit: number; cursor?: string | undefined }): Promise<EntryListing> {
      const rows = await knowledge.listEntries(workspaceId, options.origin, {
        after: options.cursor === undefined ? undefined : decodeCursor(options.cursor),
        limit: options.limit + 1,
        excerptChars: ENTRY_EXCERPT_CHARS + 1,
      });
      const page = rows.slice(0, options.limit);
      return {
        entries: page.map((row) => view(row, true)),
        next_cursor: rows.length > options.limit ? encodeCursor(page.at(-1)!) : null,
      };
    },

    /** GET /v1/knowledge/entries/{id}: one document of the workspace, whole, whatever its origin. */
    get: one,

    /** POST /v1/knowledge/entries: a new hand-made entry, searchable as soon as this returns. */
    async create(workspaceId: string, input: EntryInput): Promise<EntryView> {
      const entry = prepare(workspaceId, input);
      const id = randomUUID();
      await service.writing(workspaceId, () =>
        knowledge.inTransaction(async (queries) => {
          await queries.insertEntry(entry, id, now());
          await index(queries, id, entry);
        }),
      );
      return one(workspaceId, id);
    },

    /** PUT /v1/knowledge/entries/{id}: replaces a hand-made entry; 409 for a synced document, 404 for none. */
    async update(workspaceId: string, id: string, input: EntryInput): Promise<EntryView> {
      const entry = prepare(workspaceId, input);
      const written = await service.writing(workspaceId, () =>
        knowledge.inTransaction(async (queries) => {
          const saved = await queries.updateEntry(entry, id, now());
          if (saved?.changed) await index(queries, id, entry);
          return saved;
        }),
      );
      if (!written) await refuseSynced(workspaceId, id);
      return one(workspaceId, id);
    },

    /** DELETE /v1/knowledge/entries/{id}: removes a hand-made entry and its passages; 409 for a synced document. */
    async remove(workspaceId: string, id: string): Promise<void> {
      const deleted = await service.writing(workspaceId, () => knowledge.deleteEntry(workspaceId, id));
      if (!deleted) await refuseSynced(workspaceId, id);
    },
  };

  /** After a write found no hand-made entry: 409 when the id is a synced document of the workspace, else 404. */
  async function refuseSynced(workspaceId: string, id: string): Promise<never> {
    const row = await knowledge.findEntry(workspaceId, id);
    if (row && row.origin === 'sync') {
      throw new AppError('conflict', "This page comes from your shop's or CMS's plugin: change it there, and the next sync brings it here.", [
        { field: 'id', message: 'names a synced document, which only the sync API changes' },
      ]);
    }
    if (row && (row.origin === 'website' || row.origin === 'file')) {
      throw new AppError('conflict', 'This page comes from a website or file you added: update or remove that source, and its passages follow.', [
        { field: 'id', message: 'names a page of a knowledge source, which only its sync or upload changes' },
      ]);
    }
    throw notFound('The knowledge entry');
  }
}

export type KnowledgeEntries = ReturnType<typeof createKnowledgeEntries>;

/** Cleans the entry as the sync API cleans a page, checks what a schema cannot (visible text, bytes) and hashes it. */
function prepare(workspaceId: string, input: EntryInput): EntryWrite {
  const title = cleanLine(input.title);
  // The editor's rule (docs/knowledge.md, "How text is read"): a line break is a space, a blank line a paragraph; a
  // first line that repeats the title (pasted with it) is dropped, so it is not joined into the first sentence.
  const pasted = normaliseText(input.text);
  const untitled = withoutTitleLine(pasted, title);
  const body = joinBrokenLines(/[\p{L}\p{N}]/u.test(untitled) ? untitled : pasted);
  const problems: { field: string; message: string }[] = [];
  if (!title) problems.push({ field: 'title', message: 'has no visible characters' });
  if (!body) problems.push({ field: 'text', message: 'has no visible characters' });
  const bytes = Buffer.byteLength(input.text, 'utf8');
  if (bytes > MAX_DOCUMENT_BODY_BYTES) problems.push({ field: 'text', message: `is ${bytes} bytes, more than ${MAX_DOCUMENT_BODY_BYTES}` });
  if (problems.length) throw new AppError('unprocessable', `${problems[0]!.field} ${problems[0]!.message}.`, problems);
  const language = primaryLanguage(input.language ?? undefined) || null;
  const qa = input.type === 'qa';
  const contentHash = createHash('sha256').update(JSON.stringify([ENTRY_INDEX_VERSION, qa, title, language, body])).digest('hex');
  return { workspaceId, title, language, body, qa, contentHash };
}

/** The cursor names the last document listed: its change time (ms, as every write sets it) and id, opaque. */
function encodeCursor(row: EntryRow): string {
  return Buffer.from(`${new Date(row.updated_at).toISOString()}_${row.id}`, 'utf8').toString('base64url');
}

const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

function decodeCursor(cursor: string): { updatedAt: Date; id: string } {
  const match = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? CURSOR.exec(Buffer.from(cursor, 'base64url').toString('utf8')) : null;
  const updatedAt = match ? new Date(match[1]!) : undefined;
  if (!match || !updatedAt || Number.isNaN(updatedAt.getTime())) {
    throw new AppError('validation_failed', 'cursor is not one this API gave out.', [{ field: 'cursor', message: 'is not one this API gave out' }]);
  }
  return { updatedAt, id: match[2]! };
}

function view(row: EntryRow, excerpt: boolean): EntryView {
  const cut = excerpt && row.body.length > ENTRY_EXCERPT_CHARS;
  const synced = row.origin === 'sync';
  return {
    id: row.id,
    origin: row.origin,
    type: row.kind === 'product' ? 'product' : row.qa ? 'qa' : 'page',
    title: row.title,
    text: cut ? `${row.body.slice(0, ENTRY_EXCERPT_CHARS).trimEnd()}…` : row.body,
    text_cut: cut,
    language: row.language,
    external_id: synced ? row.external_id : null,
    url: row.url,
    chunks: row.chunks,
    editable: row.origin === 'dashboard',
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}
