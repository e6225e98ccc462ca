/** The knowledge search and what is read beside it (whether there is anything, the vocabulary, the version). */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { KnowledgeKind } from '../schema.ts';

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
  /** The document's language (a primary subtag), or null: the passage's words are stemmed in it. */
  language: string | null;
  /**
   * The ways customers ask what the passage answers, taught by the team or generated (knowledge_phrasings: those of
   * its chunk and of its whole document, oldest first, at most MAX_HIT_PHRASINGS): the ranking reads them as a title.
   */
  phrasings: string[];
}

/** Phrasings returned with a hit (the lead's contract, docs/architecture.md "Knowledge answers"). */
export const MAX_HIT_PHRASINGS = 20;

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
  /**
   * Precise: at most this many matching chunks are ranked (null: all), the `rankedLimit` best of them by ts_rank with
   * ts_rank_cd. Set when the question had words the knowledge base does not hold, which the precise search then does
   * not require (src/knowledge/query.ts): what is left may be common words found in thousands of chunks, a question
   * the recall search's bounds served before.
   */
  preciseCandidateLimit?: number | null;
  /** Recall: of the candidates, this many with the most of the query's words are ranked with ts_rank_cd. */
  rankedLimit: number;
  signal?: AbortSignal | undefined;
}

/** The full-text search in one round trip, and the reads the service decides with. */
export function knowledgeSearchQueries(db: Db) {
  return {
    /** Whether the workspace has any chunk to search (an index lookup that stops at the first). */
    async hasChunks(workspaceId: string): Promise<boolean> {
      const row = await db.selectFrom('knowledge_chunks').select('id').where('workspace_id', '=', workspaceId).limit(1).executeTakeFirst();
      return row !== undefined;
    },

    /**
     * The knowledge search, in one round trip.
     *
     * The precise search: chunks matching `precise` (every group of the question, each by any of its words: see
     * src/knowledge/query.ts; at most `preciseCandidateLimit` of them), ranked by ts_rank_cd over any of the query's words. Ranking with the AND query itself would measure how
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
     * ranks but not thousands of joins. Each hit carries its phrasings (an index lookup by document per hit). `precise` is materialized (referenced twice); the recall branch's `not exists
     * (select from precise)` refers to none of its rows, so PostgreSQL makes it a one-time filter: the recall scan does
     * not run when the precise search has hits.
     */
    async search(q: SearchQuery): Promise<ChunkHit[]> {
      const words = sql`knowledge_any_term(knowledge_query_terms(${q.config}::regconfig, ${q.rankQuery ?? q.query}, ${q.maxTerms}, null))`;
      const prefixTerms = sql`knowledge_query_terms(${q.config}::regconfig, ${q.query}, ${q.maxTerms}, ${q.prefixMinChars})`;
      const weights = sql`${q.weights}::float4[]`;
      const matches = sql`c.workspace_id = ${q.workspaceId} and c.tsv @@ to_tsquery(${q.config}::regconfig, ${q.precise})`;
      // Bounded as the recall search is: at most preciseCandidateLimit matches, the rankedLimit best by the cheaper
      // ts_rank of them ranked with ts_rank_cd.
      const preciseChunks = q.preciseCandidateLimit
        ? sql`(
            select c.id, c.document_id, c.ordinal, c.text, c.tsv
            from (select c.id, c.document_id, c.ordinal, c.text, c.tsv from knowledge_chunks c where ${matches} limit ${q.preciseCandidateLimit}) c
            order by ts_rank(${weights}, c.tsv, ${words}, 32) desc
            limit ${q.rankedLimit}
          )`
        : sql`(select c.id, c.document_id, c.ordinal, c.text, c.tsv from knowledge_chunks c where ${matches})`;
      const { rows } = await sql<ChunkHit>`
        with precise as materialized (
          select c.id, c.document_id, c.ordinal, c.text, ts_rank_cd(${weights}, c.tsv, ${words}, 32)::float8 as score
          from ${preciseChunks} c
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
        select h.id, d.kind, d.external_id, d.title, d.url, h.text, h.score, h.strategy, d.language,
          array(
            select p.text from knowledge_phrasings p
            where p.document_id = h.document_id and (p.chunk_ordinal = h.ordinal or p.chunk_ordinal is null)
            order by p.created_at, p.id
            limit ${MAX_HIT_PHRASINGS}
          ) as phrasings
        from hits h
        join knowledge_documents d on d.id = h.document_id
        order by h.score desc, d.external_id, h.ordinal
        limit ${q.limit}`.execute(db, { signal: q.signal });
      return rows;
    },

    /**
     * The words of a workspace's chunks, titles and phrasings as the `simple` configuration splits them (lowercase,
     * unstemmed), with how many chunks hold each (a phrasing counts once): the most used `limit`, how many chunks there
     * are, and the languages its documents are in (src/knowledge/vocabulary.ts).
     */
    async vocabulary(workspaceId: string, limit: number): Promise<{ entries: { word: string; chunks: number }[]; totalChunks: number; languages: string[] }> {
      const { rows } = await sql<{ word: string; chunks: number }>`
        select word, sum(chunks)::int as chunks
        from (
          select w.lexeme as word, count(*) as chunks
          from knowledge_chunks c
          join knowledge_documents d on d.id = c.document_id
          cross join lateral unnest(to_tsvector('simple', c.text) || to_tsvector('simple', d.title)) as w
          where c.workspace_id = ${workspaceId}
          group by w.lexeme
          union all
          select w.lexeme as word, count(*) as chunks
          from knowledge_phrasings p
          cross join lateral unnest(to_tsvector('simple', p.text)) as w
          where p.workspace_id = ${workspaceId}
          group by w.lexeme
        ) words
        group by word
        order by chunks desc, word
        limit ${limit}`.execute(db);
      const total = await db.selectFrom('knowledge_chunks').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirst();
      const languages = await db
        .selectFrom('knowledge_documents')
        .select('language')
        .distinct()
        .where('workspace_id', '=', workspaceId)
        .where('language', 'is not', null)
        .execute();
      return { entries: rows, totalChunks: Number(total?.n ?? 0), languages: languages.map((l) => l.language!).sort() };
    },

    /** What changes when a workspace's knowledge changes: its documents' and phrasings' counts and newest writes. */
    async version(workspaceId: string): Promise<string> {
      const { rows } = await sql<{ n: number; latest: Date | null; phrasings: number; taught: Date | null }>`
        select
          (select count(*)::int from knowledge_documents where workspace_id = ${workspaceId}) as n,
          (select max(updated_at) from knowledge_documents where workspace_id = ${workspaceId}) as latest,
          (select count(*)::int from knowledge_phrasings where workspace_id = ${workspaceId}) as phrasings,
          (select max(created_at) from knowledge_phrasings where workspace_id = ${workspaceId}) as taught`.execute(db);
      const row = rows[0];
      const time = (at: Date | null | undefined) => (at ? new Date(at).getTime() : 0);
      return `${Number(row?.n ?? 0)}:${time(row?.latest)}:${Number(row?.phrasings ?? 0)}:${time(row?.taught)}`;
    },
  };
}
