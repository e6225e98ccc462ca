/** The sync API's statements: synced documents (origin `sync`, migration 0017) and their chunks written, deleted, listed. */
import type { Db } from '../database.ts';
import type { Availability, KnowledgeKind } from '../schema.ts';
import { chunkTsv } from './knowledge-phrasings.repository.ts';

export interface DocumentWrite {
  workspaceId: string;
  kind: KnowledgeKind;
  externalId: string;
  title: string;
  url: string | null;
  language: string | null;
  body: string;
  price: string | number | null;
  currency: string | null;
  sku: string | null;
  availability: Availability | null;
  contentHash: string;
}

export interface ChunkWrite {
  id: string;
  ordinal: number;
  text: string;
}

export interface DocumentSummary {
  id: string;
  external_id: string;
  title: string;
  url: string | null;
  language: string | null;
  price: string | null;
  currency: string | null;
  sku: string | null;
  availability: Availability | null;
  content_hash: string;
  created_at: Date;
  updated_at: Date;
  chunks: number;
}

export type UpsertOutcome = 'created' | 'updated' | 'unchanged';

/** Upserts and deletes of synced documents, their chunks replaced (tsv computed in the database), their list. */
export function knowledgeSyncQueries(db: Db) {
  return {
    /**
     * Inserts the document or overwrites it when its content hash differs; answers `unchanged` (and writes nothing)
     * when the stored hash is the same. One statement decides, so two equal PUTs at once cannot both insert.
     */
    async upsertDocument(doc: DocumentWrite, newId: string, at: Date): Promise<{ id: string; outcome: UpsertOutcome; updatedAt: Date }> {
      const values = {
        id: newId,
        workspace_id: doc.workspaceId,
        origin: 'sync' as const,
        kind: doc.kind,
        external_id: doc.externalId,
        title: doc.title,
        url: doc.url,
        language: doc.language,
        body: doc.body,
        price: doc.price,
        currency: doc.currency,
        sku: doc.sku,
        availability: doc.availability,
        content_hash: doc.contentHash,
        updated_at: at,
      };
      const written = await db
        .insertInto('knowledge_documents')
        .values(values)
        .onConflict((oc) =>
          oc
            .columns(['workspace_id', 'origin', 'kind', 'external_id'])
            .doUpdateSet((eb) => ({
              title: eb.ref('excluded.title'),
              url: eb.ref('excluded.url'),
              language: eb.ref('excluded.language'),
              body: eb.ref('excluded.body'),
              price: eb.ref('excluded.price'),
              currency: eb.ref('excluded.currency'),
              sku: eb.ref('excluded.sku'),
              availability: eb.ref('excluded.availability'),
              content_hash: eb.ref('excluded.content_hash'),
              updated_at: eb.ref('excluded.updated_at'),
            }))
            .where('knowledge_documents.content_hash', '<>', (eb) => eb.ref('excluded.content_hash')),
        )
        .returning(['id', 'updated_at'])
        .executeTakeFirst();
      if (written) return { id: written.id, outcome: written.id === newId ? 'created' : 'updated', updatedAt: written.updated_at };
      const existing = await db
        .selectFrom('knowledge_documents')
        .select(['id', 'updated_at'])
        .where('workspace_id', '=', doc.workspaceId)
        .where('origin', '=', 'sync')
        .where('kind', '=', doc.kind)
        .where('external_id', '=', doc.externalId)
        .executeTakeFirstOrThrow();
      return { id: existing.id, outcome: 'unchanged', updatedAt: existing.updated_at };
    },

    /**
     * Replaces the document's chunks. tsv is computed here, in the database, with the chunk's configuration: the
     * title with weight A (a title match ranks highest), the passage's phrasings with weight B (other wordings of it,
     * knowledge-phrasings.repository.ts) and the chunk text with weight D. A phrasing of a passage the new chunks no
     * longer have (the document got shorter) is kept on the first passage.
     */
    async replaceChunks(input: {
      documentId: string;
      workspaceId: string;
      language: string | null;
      config: string;
      title: string;
      chunks: ChunkWrite[];
    }): Promise<void> {
      await db.deleteFrom('knowledge_chunks').where('document_id', '=', input.documentId).execute();
      if (input.chunks.length === 0) return;
      await db
        .updateTable('knowledge_phrasings')
        .set({ chunk_ordinal: 0 })
        .where('document_id', '=', input.documentId)
        .where('chunk_ordinal', '>=', input.chunks.length)
        .execute();
      await db
        .insertInto('knowledge_chunks')
        .values(
          input.chunks.map((chunk) => ({
            id: chunk.id,
            document_id: input.documentId,
            workspace_id: input.workspaceId,
            ordinal: chunk.ordinal,
            text: chunk.text,
            language: input.language,
            tsv: chunkTsv(input.config, input.title, chunk.text, input.documentId, chunk.ordinal),
          })),
        )
        .execute();
    },

    /** Deletes the synced document (its chunks go with it); false when there was none. */
    async deleteDocument(workspaceId: string, kind: KnowledgeKind, externalId: string): Promise<boolean> {
      const result = await db
        .deleteFrom('knowledge_documents')
        .where('workspace_id', '=', workspaceId)
        .where('origin', '=', 'sync')
        .where('kind', '=', kind)
        .where('external_id', '=', externalId)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** Synced documents of a kind in external_id order, after `after` (keyset pagination). */
    async listDocuments(workspaceId: string, kind: KnowledgeKind, options: { after?: string | undefined; limit: number }): Promise<DocumentSummary[]> {
      let query = db
        .selectFrom('knowledge_documents as d')
        .select(['d.id', 'd.external_id', 'd.title', 'd.url', 'd.language', 'd.price', 'd.currency', 'd.sku', 'd.availability', 'd.content_hash', 'd.created_at', 'd.updated_at'])
        .select((eb) =>
          eb
            .selectFrom('knowledge_chunks as c')
            .whereRef('c.document_id', '=', 'd.id')
            .select(eb.fn.countAll<string>().as('n'))
            .as('chunks'),
        )
        .where('d.workspace_id', '=', workspaceId)
        .where('d.origin', '=', 'sync')
        .where('d.kind', '=', kind);
      if (options.after !== undefined) query = query.where('d.external_id', '>', options.after);
      const rows = await query.orderBy('d.external_id').limit(options.limit).execute();
      return rows.map((row) => ({ ...row, chunks: Number(row.chunks ?? 0) }));
    },
  };
}
