// Over 400 lines: one aggregate (documents and their chunks) whose sync, dashboard and search statements share a transaction.
/**
 * Synced pages and products (knowledge_documents) and their searchable chunks (knowledge_chunks). The full-text search
 * lives here because it is SQL: the service decides the configuration, limits and scores.
 *
 * A document's `origin` says who wrote it (migration 0017): the sync API's statements read and write `sync` documents
 * only; the dashboard's entries (`dashboard`) are written by the entry statements below. The search reads both.
 */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { Availability, KnowledgeKind, KnowledgeOrigin } from '../schema.ts';

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

export interface ChunkHit {
  id: string;
  kind: KnowledgeKind;
  external_id: string;
  title: string;
  url: string | null;
  text: string;
  /** ts_rank_cd(tsv, query, 32): rank/(rank+1), 0..1. */
  score: number;
  /** Which search found it: the precise one, or the recall one (which runs only when the precise one found none). */
  strategy: 'precise' | 'recall';
}

export interface SearchQuery {
  workspaceId: string;
  /** A text-search configuration name from a fixed list (never user input). */
  config: string;
  /** The precise search as to_tsquery input, built from words of letters and digits only (src/knowledge/query.ts). */
  precise: string;
  /** The words the recall search and its ranking use (any of them). */
  query: string;
  /**
   * The words the precise search ranks its matches by (default `query`): the customer's own, so that the synonyms
   * choose the matches without making each costlier to rank (src/knowledge/query.ts orders the best again).
   */
  rankQuery?: string;
  limit: number;
  /** ts_rank_cd weights {D, C, B, A} as a PostgreSQL array literal (chunk text has weight D, the title A). */
  weights: string;
  /** At most this many of the query's words are used (the longest). */
  maxTerms: number;
  /** Words of at least this many letters also match as prefixes in the recall search. */
  prefixMinChars: number;
  /** Recall: at most this many chunks sharing a word are ranked. */
  candidateLimit: number;
  /** Recall: of the candidates, this many with the most of the query's words are ranked with ts_rank_cd. */
  rankedLimit: number;
  signal?: AbortSignal | undefined;
}

export type UpsertOutcome = 'created' | 'updated' | 'unchanged';

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

export function knowledgeRepository(db: Db) {
  return {
    ...knowledgeQueries(db),
    /** Runs `work` in one transaction with the queries bound to it (a batch is applied all or nothing). */
    async inTransaction<T>(work: (queries: KnowledgeQueries) => Promise<T>): Promise<T> {
      return db.transaction().execute((trx) => work(knowledgeQueries(trx)));
    },
  };
}

function knowledgeQueries(db: Db) {
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
     * title with weight A (a title match ranks highest) and the chunk text with weight D.
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
        .insertInto('knowledge_chunks')
        .values(
          input.chunks.map((chunk) => ({
            id: chunk.id,
            document_id: input.documentId,
            workspace_id: input.workspaceId,
            ordinal: chunk.ordinal,
            text: chunk.text,
            language: input.language,
            tsv: sql<string>`setweight(to_tsvector(${input.config}::regconfig, ${input.title}), 'A') || setweight(to_tsvector(${input.config}::regconfig, ${chunk.text}), 'D')`,
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

    /** Whether the workspace has any chunk to search (an index lookup that stops at the first). */
    async hasChunks(workspaceId: string): Promise<boolean> {
      const row = await db.selectFrom('knowledge_chunks').select('id').where('workspace_id', '=', workspaceId).limit(1).executeTakeFirst();
      return row !== undefined;
    },

    /**
     * The knowledge search, in one round trip.
     *
     * The precise search: chunks matching `precise` (every group of the question, each by any of its words: see
     * src/knowledge/query.ts), ranked by ts_rank_cd over any of the query's words. Ranking with the AND query itself would measure how
     * close together the words stand (cover density), which is near zero when one word is in the title and another in
     * the text; letting each occurrence count is what makes one score comparable across queries.
     *
     * Only when it finds nothing, the recall search: chunks matching any of the query's words (the longer ones also as
     * prefixes, at most `candidateLimit` candidates); of those the `rankedLimit` with the most of the words (then by
     * ts_rank) are scored by ts_rank_cd times the share of the query's words the chunk contains.
     *
     * Every tsquery is a call of an immutable function on the statement's parameters (migration 0014), which the
     * planner evaluates while planning: the index conditions are constants it estimates from the column's statistics.
     * So this statement must stay unprepared (not `prepared()`, db/prepared.ts): a generic plan would call the functions
     * again for every chunk it ranks.
     * Each branch ranks chunks alone and keeps the best `limit` with ties; only those are joined to their documents
     * for the final order (score, external_id, ordinal), so a word found in thousands of chunks costs thousands of
     * ranks but not thousands of joins. `precise` is materialized (referenced twice); the recall branch's `not exists
     * (select from precise)` refers to none of its rows, so PostgreSQL makes it a one-time filter: the recall scan does
     * not run when the precise search has hits.
     */
    async search(q: SearchQuery): Promise<ChunkHit[]> {
      const words = sql`knowledge_any_term(knowledge_query_terms(${q.config}::regconfig, ${q.rankQuery ?? q.query}, ${q.maxTerms}, null))`;
      const prefixTerms = sql`knowledge_query_terms(${q.config}::regconfig, ${q.query}, ${q.maxTerms}, ${q.prefixMinChars})`;
      const weights = sql`${q.weights}::float4[]`;
      const { rows } = await sql<ChunkHit>`
        with precise as materialized (
          select c.id, c.document_id, c.ordinal, c.text, ts_rank_cd(${weights}, c.tsv, ${words}, 32)::float8 as score
          from knowledge_chunks c
          where c.workspace_id = ${q.workspaceId} and c.tsv @@ to_tsquery(${q.config}::regconfig, ${q.precise})
          order by score desc
          fetch first ${q.limit} rows with ties
        ),
        candidates as (
          select c.id, c.document_id, c.ordinal, c.tsv
          from knowledge_chunks c
          where c.workspace_id = ${q.workspaceId} and c.tsv @@ knowledge_any_term(${prefixTerms})
            and not exists (select from precise)
          limit ${q.candidateLimit}
        ),
        ranked as (
          select id, document_id, ordinal, tsv, (select count(*) from unnest(${prefixTerms}) as term where tsv @@ term) as matched
          from candidates
          order by matched desc, ts_rank(${weights}, tsv, knowledge_any_term(${prefixTerms}), 32) desc
          limit ${q.rankedLimit}
        ),
        recall as (
          select r.id, r.document_id, r.ordinal, c.text,
            ts_rank_cd(${weights}, r.tsv, knowledge_any_term(${prefixTerms}), 32)::float8 * r.matched::float8
              / cardinality(${prefixTerms}) as score
          from ranked r
          join knowledge_chunks c on c.id = r.id
          order by score desc
          fetch first ${q.limit} rows with ties
        ),
        -- At most one of the two has rows.
        hits as (
          select *, 'precise' as strategy from precise
          union all
          select *, 'recall' as strategy from recall
        )
        select h.id, d.kind, d.external_id, d.title, d.url, h.text, h.score, h.strategy
        from hits h
        join knowledge_documents d on d.id = h.document_id
        order by h.score desc, d.external_id, h.ordinal
        limit ${q.limit}`.execute(db, { signal: q.signal });
      return rows;
    },

    /**
     * The words of a workspace's chunks and titles as the `simple` configuration splits them (lowercase, unstemmed),
     * with how many chunks hold each: the most used `limit`, and how many chunks there are (src/knowledge/vocabulary.ts).
     */
    async vocabulary(workspaceId: string, limit: number): Promise<{ entries: { word: string; chunks: number }[]; totalChunks: number }> {
      const { rows } = await sql<{ word: string; chunks: number }>`
        select w.lexeme as word, count(*)::int as chunks
        from knowledge_chunks c
        join knowledge_documents d on d.id = c.document_id
        cross join lateral unnest(to_tsvector('simple', c.text) || to_tsvector('simple', d.title)) as w
        where c.workspace_id = ${workspaceId}
        group by w.lexeme
        order by chunks desc, word
        limit ${limit}`.execute(db);
      const total = await db.selectFrom('knowledge_chunks').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirst();
      return { entries: rows, totalChunks: Number(total?.n ?? 0) };
    },

    /** What changes when a workspace's knowledge changes: its documents' count and newest write. */
    async version(workspaceId: string): Promise<string> {
      const row = await db
        .selectFrom('knowledge_documents')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('updated_at').as('latest')])
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirst();
      return `${Number(row?.n ?? 0)}:${row?.latest ? new Date(row.latest as Date).getTime() : 0}`;
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

export type KnowledgeQueries = ReturnType<typeof knowledgeQueries>;
export type KnowledgeRepository = ReturnType<typeof knowledgeRepository>;
