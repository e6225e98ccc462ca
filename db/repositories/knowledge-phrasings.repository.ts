/**
 * Phrasings (migration 0029): other wordings of a passage, written, removed, listed; and the tsv of a document's
 * chunks computed again when they change. A chunk's tsv is its document's title (weight A), its phrasings (weight B:
 * those of its ordinal and those of the whole document, chunk_ordinal null) and its text (weight D); `chunkTsv` is
 * that expression, shared with the chunk writes (knowledge-sync.repository.ts).
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../database.ts';
import type { KnowledgePhrasing, PhrasingOrigin } from '../schema.ts';

export interface PhrasingWrite {
  id: string;
  workspaceId: string;
  documentId: string;
  /** The passage's ordinal; null: the whole document. */
  chunkOrdinal: number | null;
  text: string;
  language: string | null;
  origin: PhrasingOrigin;
  createdBy: string | null;
  passageHash: string | null;
  tokens: number | null;
}

/** Which phrasings of one document a removal takes: by id, by origin, by passage (all given must hold). */
export interface PhrasingFilter {
  ids?: readonly string[] | undefined;
  origin?: PhrasingOrigin | undefined;
  /** A passage's ordinal; null: those of the whole document. */
  chunkOrdinal?: number | null | undefined;
}

/** Where a phrasing goes: a passage of a document of the workspace, with what its tsv is computed from. */
export interface PhrasingTarget {
  document_id: string;
  /** The passage's ordinal when asked by chunk id; null when asked by document id. */
  ordinal: number | null;
  language: string | null;
  title: string;
  /** The passage's text (by chunk id), or the document's first passage (by document id; '' when it has none). */
  text: string;
  chunks: number;
}

/**
 * The tsv of the chunk `ordinal` of `documentId`: title A, the phrasings of that passage and of the whole document B
 * (in the order they were taught), text D. `config` is a configuration name from a fixed list (never user input).
 */
export function chunkTsv(
  config: string,
  title: SqlValue<string>,
  text: SqlValue<string>,
  documentId: SqlValue<string>,
  ordinal: SqlValue<number>,
): RawBuilder<string> {
  const phrasings = sql`(select string_agg(p.text, ' ' order by p.created_at, p.id) from knowledge_phrasings p
    where p.document_id = ${documentId} and (p.chunk_ordinal = ${ordinal} or p.chunk_ordinal is null))`;
  return sql<string>`setweight(to_tsvector(${config}::regconfig, ${title}), 'A')
    || setweight(to_tsvector(${config}::regconfig, coalesce(${phrasings}, '')), 'B')
    || setweight(to_tsvector(${config}::regconfig, ${text}), 'D')`;
}

/** A value, or a column or expression of the statement it is used in. */
type SqlValue<T> = T | RawBuilder<unknown>;

export function knowledgePhrasingQueries(db: Db) {
  return {
    /** Inserts phrasings as given (the caller checked them and computes the chunks' tsv again). */
    async insertPhrasings(rows: readonly PhrasingWrite[]): Promise<KnowledgePhrasing[]> {
      if (rows.length === 0) return [];
      return db
        .insertInto('knowledge_phrasings')
        .values(
          rows.map((row) => ({
            id: row.id,
            workspace_id: row.workspaceId,
            document_id: row.documentId,
            chunk_ordinal: row.chunkOrdinal,
            text: row.text,
            language: row.language,
            origin: row.origin,
            created_by: row.createdBy,
            passage_hash: row.passageHash,
            tokens: row.tokens,
          })),
        )
        .returningAll()
        .execute();
    },

    /** Deletes the document's phrasings the filter names; answers those deleted. */
    async deletePhrasings(workspaceId: string, documentId: string, filter: PhrasingFilter): Promise<KnowledgePhrasing[]> {
      if (filter.ids !== undefined && filter.ids.length === 0) return [];
      let query = db.deleteFrom('knowledge_phrasings').where('workspace_id', '=', workspaceId).where('document_id', '=', documentId);
      if (filter.ids !== undefined) query = query.where('id', 'in', [...filter.ids]);
      if (filter.origin !== undefined) query = query.where('origin', '=', filter.origin);
      if (filter.chunkOrdinal === null) query = query.where('chunk_ordinal', 'is', null);
      else if (filter.chunkOrdinal !== undefined) query = query.where('chunk_ordinal', '=', filter.chunkOrdinal);
      return query.returningAll().execute();
    },

    /** One phrasing of the workspace; undefined when it has none with that id. */
    async findPhrasing(workspaceId: string, id: string): Promise<KnowledgePhrasing | undefined> {
      return db.selectFrom('knowledge_phrasings').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },

    /** A document's phrasings (of one origin, when given), by passage and then in the order they were added. */
    async listPhrasings(workspaceId: string, documentId: string, origin?: PhrasingOrigin): Promise<KnowledgePhrasing[]> {
      let query = db.selectFrom('knowledge_phrasings').selectAll().where('workspace_id', '=', workspaceId).where('document_id', '=', documentId);
      if (origin !== undefined) query = query.where('origin', '=', origin);
      return query.orderBy(sql`chunk_ordinal nulls first`).orderBy('created_at').orderBy('id').execute();
    },

    /** How many phrasings of one origin a document has (the team's limit, src/knowledge/phrasing-limits.ts). */
    async countPhrasings(workspaceId: string, documentId: string, origin: PhrasingOrigin): Promise<number> {
      const row = await db
        .selectFrom('knowledge_phrasings')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('document_id', '=', documentId)
        .where('origin', '=', origin)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    /** A passage of the workspace by its chunk id (as the search and the Try screen name it); undefined when none. */
    async phrasingTargetByChunk(workspaceId: string, chunkId: string): Promise<PhrasingTarget | undefined> {
      return db
        .selectFrom('knowledge_chunks as c')
        .innerJoin('knowledge_documents as d', 'd.id', 'c.document_id')
        .select(['c.document_id', 'c.ordinal', 'd.language', 'd.title', 'c.text'])
        .select((eb) => eb.selectFrom('knowledge_chunks as n').whereRef('n.document_id', '=', 'd.id').select(eb.fn.countAll<string>().as('n')).as('chunks'))
        .where('c.workspace_id', '=', workspaceId)
        .where('c.id', '=', chunkId)
        .executeTakeFirst()
        .then((row) => row && { ...row, chunks: Number(row.chunks ?? 0) });
    },

    /** A document of the workspace by id, whatever its origin; undefined when none. */
    async phrasingTargetByDocument(workspaceId: string, documentId: string): Promise<PhrasingTarget | undefined> {
      return db
        .selectFrom('knowledge_documents as d')
        .select(['d.id as document_id', 'd.language', 'd.title'])
        .select(sql<number | null>`null::int`.as('ordinal'))
        .select((eb) => eb.selectFrom('knowledge_chunks as c').whereRef('c.document_id', '=', 'd.id').where('c.ordinal', '=', 0).select('c.text').as('text'))
        .select((eb) => eb.selectFrom('knowledge_chunks as n').whereRef('n.document_id', '=', 'd.id').select(eb.fn.countAll<string>().as('n')).as('chunks'))
        .where('d.workspace_id', '=', workspaceId)
        .where('d.id', '=', documentId)
        .executeTakeFirst()
        .then((row) => row && { ...row, text: row.text ?? '', chunks: Number(row.chunks ?? 0) });
    },

    /** Computes the tsv of every chunk of the document again (after its phrasings changed), with its configuration. */
    async reindexChunks(documentId: string, config: string): Promise<void> {
      await sql`update knowledge_chunks c
        set tsv = ${chunkTsv(config, sql`d.title`, sql`c.text`, sql`c.document_id`, sql`c.ordinal`)}
        from knowledge_documents d
        where d.id = c.document_id and c.document_id = ${documentId}`.execute(db);
    },
  };
}
