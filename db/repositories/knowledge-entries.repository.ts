/** The dashboard's statements: hand-made entries (origin `dashboard`, migration 0017) written, and every document read. */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { Availability, KnowledgeKind, KnowledgeOrigin } from '../schema.ts';

/** A hand-made entry as the dashboard writes it: a page, or a question-and-answer pair (title: the question). */
export interface EntryWrite {
  workspaceId: string;
  title: string;
  language: string | null;
  body: string;
  qa: boolean;
  contentHash: string;
}

/** A document as the dashboard lists it: `body` cut to `excerptChars` characters unless asked whole. */
export interface EntryRow {
  id: string;
  origin: KnowledgeOrigin;
  kind: KnowledgeKind;
  qa: boolean;
  external_id: string;
  title: string;
  url: string | null;
  language: string | null;
  body: string;
  price: string | null;
  currency: string | null;
  sku: string | null;
  availability: Availability | null;
  created_at: Date;
  updated_at: Date;
  chunks: number;
}

/** Where a chunk the search found comes from (the Try box tells hand-made entries from synced pages). */
export interface ChunkOrigin {
  chunk_id: string;
  document_id: string;
  origin: KnowledgeOrigin;
  qa: boolean;
}

/** Hand-made entries inserted, updated, deleted; documents found and listed; where found chunks come from. */
export function knowledgeEntryQueries(db: Db) {
  return {
    /** A new hand-made entry (origin dashboard); its external_id is its own id, which no sync statement reads. */
    async insertEntry(entry: EntryWrite, id: string, at: Date): Promise<{ id: string; createdAt: Date; updatedAt: Date }> {
      const row = await db
        .insertInto('knowledge_documents')
        .values({
          id,
          workspace_id: entry.workspaceId,
          origin: 'dashboard',
          kind: 'page',
          qa: entry.qa,
          external_id: id,
          title: entry.title,
          url: null,
          language: entry.language,
          body: entry.body,
          price: null,
          currency: null,
          sku: null,
          availability: null,
          content_hash: entry.contentHash,
          created_at: at,
          updated_at: at,
        })
        .returning(['id', 'created_at', 'updated_at'])
        .executeTakeFirstOrThrow();
      return { id: row.id, createdAt: row.created_at, updatedAt: row.updated_at };
    },

    /**
     * Rewrites a hand-made entry; undefined when the workspace has no hand-made entry with that id (a synced document
     * is never changed here). `changed` is false when the content hash was the same (nothing was written).
     */
    async updateEntry(entry: EntryWrite, id: string, at: Date): Promise<{ id: string; changed: boolean; updatedAt: Date } | undefined> {
      const row = await db
        .updateTable('knowledge_documents')
        .set({ title: entry.title, language: entry.language, body: entry.body, qa: entry.qa, content_hash: entry.contentHash, updated_at: at })
        .where('workspace_id', '=', entry.workspaceId)
        .where('origin', '=', 'dashboard')
        .where('id', '=', id)
        .where('content_hash', '<>', entry.contentHash)
        .returning(['id', 'updated_at'])
        .executeTakeFirst();
      if (row) return { id: row.id, changed: true, updatedAt: row.updated_at };
      const same = await db
        .selectFrom('knowledge_documents')
        .select(['id', 'updated_at'])
        .where('workspace_id', '=', entry.workspaceId)
        .where('origin', '=', 'dashboard')
        .where('id', '=', id)
        .executeTakeFirst();
      return same && { id: same.id, changed: false, updatedAt: same.updated_at };
    },

    /** Deletes a hand-made entry (its chunks go with it); false when the workspace has none with that id. */
    async deleteEntry(workspaceId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('knowledge_documents')
        .where('workspace_id', '=', workspaceId)
        .where('origin', '=', 'dashboard')
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** One document of the workspace by id, whatever its origin; undefined when it has none with that id. */
    async findEntry(workspaceId: string, id: string): Promise<EntryRow | undefined> {
      const rows = await entryQuery(db, workspaceId, null).where('d.id', '=', id).execute();
      return rows[0] && toEntryRow(rows[0]);
    },

    /**
     * Documents of one origin, most recently changed first (then by id), after `after` in that order (keyset pagination:
     * documents written in one millisecond, as a sync batch's are, are neither skipped nor repeated), each with its
     * body cut to `excerptChars` characters.
     */
    async listEntries(
      workspaceId: string,
      origin: KnowledgeOrigin,
      options: { after?: { updatedAt: Date; id: string } | undefined; limit: number; excerptChars: number },
    ): Promise<EntryRow[]> {
      let query = entryQuery(db, workspaceId, options.excerptChars).where('d.origin', '=', origin);
      const after = options.after;
      if (after !== undefined) {
        query = query.where((eb) => eb.or([eb('d.updated_at', '<', after.updatedAt), eb.and([eb('d.updated_at', '=', after.updatedAt), eb('d.id', '<', after.id)])]));
      }
      const rows = await query.orderBy('d.updated_at', 'desc').orderBy('d.id', 'desc').limit(options.limit).execute();
      return rows.map(toEntryRow);
    },

    /** Where each of these chunks of the workspace comes from (the Try box); chunks not found are left out. */
    async chunkOrigins(workspaceId: string, chunkIds: readonly string[]): Promise<ChunkOrigin[]> {
      if (chunkIds.length === 0) return [];
      return db
        .selectFrom('knowledge_chunks as c')
        .innerJoin('knowledge_documents as d', 'd.id', 'c.document_id')
        .select(['c.id as chunk_id', 'd.id as document_id', 'd.origin', 'd.qa'])
        .where('c.workspace_id', '=', workspaceId)
        .where('c.id', 'in', [...chunkIds])
        .execute();
    },
  };
}

/** The dashboard's view of documents; `excerptChars` null: the whole body. */
function entryQuery(db: Db, workspaceId: string, excerptChars: number | null) {
  return db
    .selectFrom('knowledge_documents as d')
    .select(['d.id', 'd.origin', 'd.kind', 'd.qa', 'd.external_id', 'd.title', 'd.url', 'd.language'])
    .select(['d.price', 'd.currency', 'd.sku', 'd.availability', 'd.created_at', 'd.updated_at'])
    .select(excerptChars === null ? sql<string>`d.body`.as('body') : sql<string>`left(d.body, ${excerptChars})`.as('body'))
    .select((eb) => eb.selectFrom('knowledge_chunks as c').whereRef('c.document_id', '=', 'd.id').select(eb.fn.countAll<string>().as('n')).as('chunks'))
    .where('d.workspace_id', '=', workspaceId);
}

function toEntryRow(row: Omit<EntryRow, 'chunks'> & { chunks: string | number | null }): EntryRow {
  return { ...row, chunks: Number(row.chunks ?? 0) };
}
