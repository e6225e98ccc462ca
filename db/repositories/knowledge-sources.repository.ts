/**
 * Knowledge sources (migration 0028): websites, sitemaps and uploaded files, the pages a website's sync keeps, and the
 * documents they write (origin `website` or `file`, each pointing to its source). A sync is claimed by one engine at
 * a time with an UPDATE of the source's own row while its claim has run out (as job_claims does): that holds through a
 * transaction pooler, unlike a session advisory lock.
 */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { KnowledgeSource, KnowledgeSourceKind, KnowledgeSourcePage, KnowledgeSourceSchedule, KnowledgeSourceStatus, SkippedUrl } from '../schema.ts';
import { knowledgeSyncQueries, type ChunkWrite } from './knowledge-sync.repository.ts';

export interface SourceWrite {
  id: string;
  workspaceId: string;
  kind: KnowledgeSourceKind;
  url: string | null;
  name: string;
  schedule: KnowledgeSourceSchedule;
  language: string | null;
  status: KnowledgeSourceStatus;
  nextSyncAt: Date | null;
  fileBytes?: number | null;
  fileType?: string | null;
}

/** A source's document (a page of its site, or the file), cleaned and hashed, with its passages. */
export interface SourceDocumentWrite {
  id: string;
  workspaceId: string;
  sourceId: string;
  origin: 'website' | 'file';
  externalId: string;
  title: string;
  url: string | null;
  language: string | null;
  body: string;
  contentHash: string;
  config: string;
  chunks: ChunkWrite[];
  at: Date;
}

export interface SyncProgress {
  found: number;
  fetched: number;
  skipped: SkippedUrl[];
}

export function knowledgeSourcesRepository(db: Db) {
  return {
    async create(source: SourceWrite): Promise<KnowledgeSource> {
      return db
        .insertInto('knowledge_sources')
        .values({
          id: source.id,
          workspace_id: source.workspaceId,
          kind: source.kind,
          url: source.url,
          name: source.name,
          schedule: source.schedule,
          language: source.language,
          status: source.status,
          next_sync_at: source.nextSyncAt,
          file_bytes: source.fileBytes ?? null,
          file_type: source.fileType ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** The workspace's sources, newest first. */
    async list(workspaceId: string): Promise<KnowledgeSource[]> {
      return db.selectFrom('knowledge_sources').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    },

    async get(workspaceId: string, id: string): Promise<KnowledgeSource | undefined> {
      return db.selectFrom('knowledge_sources').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },

    /** Deletes the source; its documents, passages and pages go with it (on delete cascade). */
    async remove(workspaceId: string, id: string): Promise<boolean> {
      const result = await db.deleteFrom('knowledge_sources').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** Due now; a sync already running keeps running (and the next one is due when it ends, per its schedule). */
    async requestSync(workspaceId: string, id: string, at: Date): Promise<KnowledgeSource | undefined> {
      return db
        .updateTable('knowledge_sources')
        .set({ next_sync_at: at, status: sql`case when lease_until > ${at} then status else 'queued' end`, updated_at: at })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .where('kind', '<>', 'file')
        .returningAll()
        .executeTakeFirst();
    },

    /**
     * Claims the source due first whose claim has run out, for `engine` until `until`; undefined when none is due.
     * SKIP LOCKED lets two engines claim two sources at once; the claim's own condition keeps one source to one engine.
     */
    async claimDue(engine: string, at: Date, until: Date): Promise<KnowledgeSource | undefined> {
      return db
        .updateTable('knowledge_sources')
        .set({ lease_owner: engine, lease_until: until, status: 'syncing', found: 0, fetched: 0, skipped: '[]', error: null, updated_at: at })
        .where('id', '=', (eb) =>
          eb
            .selectFrom('knowledge_sources')
            .select('id')
            .where('next_sync_at', '<=', at)
            .where('lease_until', '<=', at)
            .where('kind', '<>', 'file')
            .orderBy('next_sync_at')
            .limit(1)
            .forUpdate()
            .skipLocked(),
        )
        .where('lease_until', '<=', at)
        .returningAll()
        .executeTakeFirst();
    },

    /** Writes the running sync's progress and renews its claim; false when the claim is no longer this engine's. */
    async progress(id: string, engine: string, progress: SyncProgress, until: Date): Promise<boolean> {
      const result = await db
        .updateTable('knowledge_sources')
        .set({ found: progress.found, fetched: progress.fetched, skipped: JSON.stringify(progress.skipped), lease_until: until, updated_at: new Date() })
        .where('id', '=', id)
        .where('lease_owner', '=', engine)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** The sync ended: its outcome, when the next one is due, and the claim given back. */
    async finish(
      id: string,
      engine: string,
      outcome: SyncProgress & { status: 'done' | 'failed'; error: string | null; claimedAt: Date; at: Date; nextSyncAt: Date | null },
    ): Promise<void> {
      await db
        .updateTable('knowledge_sources')
        .set((eb) => ({
          status: outcome.status,
          error: outcome.error,
          found: outcome.found,
          fetched: outcome.fetched,
          skipped: JSON.stringify(outcome.skipped),
          pages: eb.selectFrom('knowledge_source_pages').select((p) => p.fn.countAll<number>().as('n')).where('source_id', '=', id),
          last_synced_at: outcome.at,
          // Asked for again while it ran (due after the sync was claimed): still due at once.
          next_sync_at: sql`case when next_sync_at > ${outcome.claimedAt} then next_sync_at else ${outcome.nextSyncAt} end`,
          lease_owner: null,
          lease_until: sql`'epoch'::timestamptz`,
          updated_at: outcome.at,
        }))
        .where('id', '=', id)
        .where('lease_owner', '=', engine)
        .execute();
    },

    /** A sync stopped with its engine: the claim given back, still due, so another engine (or the next start) runs it. */
    async release(id: string, engine: string): Promise<void> {
      await db
        .updateTable('knowledge_sources')
        .set({ status: 'queued', lease_owner: null, lease_until: sql`'epoch'::timestamptz`, updated_at: new Date() })
        .where('id', '=', id)
        .where('lease_owner', '=', engine)
        .execute();
    },

    async pages(sourceId: string): Promise<KnowledgeSourcePage[]> {
      return db.selectFrom('knowledge_source_pages').selectAll().where('source_id', '=', sourceId).execute();
    },

    /** Pages the workspace's other sources keep: what is left of its page limit for this one. */
    async pagesElsewhere(workspaceId: string, sourceId: string): Promise<number> {
      const row = await db
        .selectFrom('knowledge_source_pages as p')
        .innerJoin('knowledge_sources as s', 's.id', 'p.source_id')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('s.workspace_id', '=', workspaceId)
        .where('s.id', '<>', sourceId)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    /** A page fetched again unchanged (304, or the same text): only its conditions are kept. */
    async touchPage(sourceId: string, url: string, etag: string | null, lastModified: string | null, at: Date): Promise<void> {
      await db
        .updateTable('knowledge_source_pages')
        .set({ etag, last_modified: lastModified, fetched_at: at })
        .where('source_id', '=', sourceId)
        .where('url', '=', url)
        .execute();
    },

    /** A page's document written (created or replaced with its passages) and the page's state, in one transaction. */
    async writePage(doc: SourceDocumentWrite, page: { url: string; etag: string | null; lastModified: string | null }): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const id = await upsertDocument(trx, doc);
        await writeChunks(trx, id, doc);
        await trx
          .insertInto('knowledge_source_pages')
          .values({
            source_id: doc.sourceId,
            url: page.url,
            etag: page.etag,
            last_modified: page.lastModified,
            content_hash: doc.contentHash,
            document_id: id,
            fetched_at: doc.at,
          })
          .onConflict((oc) =>
            oc.columns(['source_id', 'url']).doUpdateSet((eb) => ({
              etag: eb.ref('excluded.etag'),
              last_modified: eb.ref('excluded.last_modified'),
              content_hash: eb.ref('excluded.content_hash'),
              document_id: eb.ref('excluded.document_id'),
              fetched_at: eb.ref('excluded.fetched_at'),
            })),
          )
          .execute();
      });
    },

    /** Pages gone from the site: their documents (and passages) and their state deleted. */
    async removePages(sourceId: string, urls: readonly string[]): Promise<number> {
      if (urls.length === 0) return 0;
      return db.transaction().execute(async (trx) => {
        const gone = await trx.deleteFrom('knowledge_source_pages').where('source_id', '=', sourceId).where('url', 'in', urls).returning('document_id').execute();
        const ids = gone.map((g) => g.document_id).filter((id): id is string => id !== null);
        if (ids.length) await trx.deleteFrom('knowledge_documents').where('source_id', '=', sourceId).where('id', 'in', ids).execute();
        return gone.length;
      });
    },

    /**
     * An uploaded file as a source with its one document; a file of the same name in the workspace is replaced (its
     * source, document and passages deleted in the same transaction).
     */
    async replaceFile(source: SourceWrite, doc: Omit<SourceDocumentWrite, 'sourceId'>): Promise<KnowledgeSource> {
      return db.transaction().execute(async (trx) => {
        await trx.deleteFrom('knowledge_sources').where('workspace_id', '=', source.workspaceId).where('kind', '=', 'file').where('name', '=', source.name).execute();
        const made = await knowledgeSourcesRepository(trx).create(source);
        const id = await upsertDocument(trx, { ...doc, sourceId: made.id });
        await writeChunks(trx, id, doc);
        return trx
          .updateTable('knowledge_sources')
          .set({ pages: 1, last_synced_at: doc.at })
          .where('id', '=', made.id)
          .returningAll()
          .executeTakeFirstOrThrow();
      });
    },
  };
}

function writeChunks(db: Db, documentId: string, doc: Omit<SourceDocumentWrite, 'sourceId'>): Promise<void> {
  const { workspaceId, language, config, title, chunks } = doc;
  return knowledgeSyncQueries(db).replaceChunks({ documentId, workspaceId, language, config, title, chunks });
}

/** Inserts the source's document or overwrites it (same source and external id); its id. */
async function upsertDocument(db: Db, doc: SourceDocumentWrite): Promise<string> {
  const row = await db
    .insertInto('knowledge_documents')
    .values({
      id: doc.id,
      workspace_id: doc.workspaceId,
      origin: doc.origin,
      source_id: doc.sourceId,
      kind: 'page',
      external_id: doc.externalId,
      title: doc.title,
      url: doc.url,
      language: doc.language,
      body: doc.body,
      price: null,
      currency: null,
      sku: null,
      availability: null,
      content_hash: doc.contentHash,
      updated_at: doc.at,
    })
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'origin', 'kind', 'external_id']).doUpdateSet((eb) => ({
        title: eb.ref('excluded.title'),
        url: eb.ref('excluded.url'),
        language: eb.ref('excluded.language'),
        body: eb.ref('excluded.body'),
        content_hash: eb.ref('excluded.content_hash'),
        source_id: eb.ref('excluded.source_id'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export type KnowledgeSourcesRepository = ReturnType<typeof knowledgeSourcesRepository>;
