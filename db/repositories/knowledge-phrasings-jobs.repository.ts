/**
 * The work of writing the AI's questions for passages (docs/knowledge.md, "Questions written by the AI"): which
 * workspaces have passages to look at, one engine at a time per workspace, and which passages need questions.
 *
 * A workspace's run is claimed in job_claims (migration 0023) under `knowledge-ai-questions:<workspace id>`, with an
 * UPDATE while the claim has run out, as the retention purge and the knowledge sources do; the claim is renewed while
 * the run goes on. `last_run_at` holds the newest document change the last complete run started from (its
 * watermark): a workspace is due again when a document changed after it. A run the model failed leaves the watermark
 * and holds the claim until its retry time, so no engine tries before then.
 *
 * A passage's hash is SHA-256 hex over its document's title, a newline and its text: what the questions are written
 * from. A passage needs questions when none of its generated phrasings carry its hash; the ones that carry another
 * hash (of an earlier text, or of a passage that was moved onto this one by a re-chunk) are out of date.
 */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { workspaceJobClaims } from './workspace-job-claims.ts';

const JOB_PREFIX = 'knowledge-ai-questions:';

/** A passage whose questions are missing or out of date. */
export interface PendingPassage {
  chunk_id: string;
  document_id: string;
  ordinal: number;
  title: string;
  text: string;
  language: string | null;
  /** The hash of the passage as it is now. */
  hash: string;
  /** Its generated phrasings already carry this hash: only the out-of-date ones need to go, without the model. */
  current: boolean;
  /** Its generated phrasings that carry another hash. */
  stale_ids: string[];
}

/** What the Knowledge screen says of the AI's questions: how many, for how many passages, and their tokens. */
export interface QuestionsSummary {
  questions: number;
  passages: number;
  tokens: number;
}

export function knowledgePhrasingsJobsRepository(db: Db) {
  return {
    /**
     * Workspaces with a document changed after their last complete run (every workspace with knowledge when
     * `everything`), whose claim has run out at `at`. A disabled workspace spends no tokens; once enabled again, the
     * next look at every workspace finds it.
     */
    async dueWorkspaces(at: Date, everything: boolean): Promise<string[]> {
      const rows = await sql<{ workspace_id: string }>`
        select d.workspace_id
        from knowledge_documents d
        join workspaces w on w.id = d.workspace_id and w.disabled_at is null
        left join job_claims j on j.name = ${JOB_PREFIX} || d.workspace_id::text
        group by d.workspace_id, j.last_run_at, j.lease_until
        having (${everything} or j.last_run_at is null or max(d.updated_at) > j.last_run_at)
          and (j.lease_until is null or j.lease_until <= ${at})
        order by max(d.updated_at)`.execute(db);
      return rows.rows.map((r) => r.workspace_id);
    },

    ...workspaceJobClaims(db, JOB_PREFIX),

    /** The newest change of the workspace's documents (a run's watermark); null without documents. */
    async latestChange(workspaceId: string): Promise<Date | null> {
      const row = await db
        .selectFrom('knowledge_documents')
        .select((eb) => eb.fn.max('updated_at').as('at'))
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirst();
      return row?.at == null ? null : new Date(row.at as Date | string);
    },

    /** The languages of the workspace's documents, most documents first, at most `limit`. */
    async workspaceLanguages(workspaceId: string, limit: number): Promise<string[]> {
      const rows = await db
        .selectFrom('knowledge_documents')
        .select(['language', (eb) => eb.fn.countAll<string>().as('n')])
        .where('workspace_id', '=', workspaceId)
        .where('language', 'is not', null)
        .groupBy('language')
        .orderBy(sql`count(*)`, 'desc')
        .orderBy('language')
        .limit(limit)
        .execute();
      return rows.map((r) => r.language as string);
    },

    /**
     * The workspace's passages whose generated questions are missing or out of date, in (document, ordinal) order
     * after `after`, at most `limit`.
     */
    async pendingPassages(workspaceId: string, after: { documentId: string; ordinal: number } | null, limit: number): Promise<PendingPassage[]> {
      // The generated phrasings are grouped by passage first, then joined once (a hash join), so each passage is one
      // row: a lookup per passage was planned as a scan per passage on a table not yet analysed (seconds at 10,000).
      const rows = await sql<PendingPassage>`
        with generated as (
          select g.document_id, g.chunk_ordinal, array_agg(g.id::text order by g.id) as ids, array_agg(g.passage_hash order by g.id) as hashes
          from knowledge_phrasings g
          where g.workspace_id = ${workspaceId} and g.origin = 'generated'
          group by g.document_id, g.chunk_ordinal
        ), passages as (
          select c.id as chunk_id, c.document_id, c.ordinal, d.title, c.text, coalesce(c.language, d.language) as language,
            encode(sha256(convert_to(d.title || chr(10) || c.text, 'UTF8')), 'hex') as hash, g.ids, g.hashes
          from knowledge_chunks c
          join knowledge_documents d on d.id = c.document_id
          left join generated g on g.document_id = c.document_id and g.chunk_ordinal = c.ordinal
          where c.workspace_id = ${workspaceId}
            and (${after === null} or (c.document_id, c.ordinal) > (${after?.documentId ?? null}::uuid, ${after?.ordinal ?? null}::int))
        ), judged as (
          select chunk_id, document_id, ordinal, title, text, language, hash,
            coalesce(hash = any(hashes), false) as current,
            array(select u.id from unnest(ids, hashes) as u(id, hash) where u.hash is distinct from passages.hash order by u.id) as stale_ids
          from passages
        )
        select * from judged
        where not current or cardinality(stale_ids) > 0
        order by document_id, ordinal
        limit ${limit}`.execute(db);
      return rows.rows.map((r) => ({ ...r, stale_ids: [...r.stale_ids] }));
    },

    /** The generated questions the workspace holds now, the passages they belong to, and the tokens they cost. */
    async summary(workspaceId: string): Promise<QuestionsSummary> {
      const row = await db
        .selectFrom('knowledge_phrasings')
        .select([
          (eb) => eb.fn.countAll<string>().as('questions'),
          sql<string>`count(distinct (document_id, chunk_ordinal))`.as('passages'),
          sql<string>`coalesce(sum(tokens), 0)`.as('tokens'),
        ])
        .where('workspace_id', '=', workspaceId)
        .where('origin', '=', 'generated')
        .executeTakeFirst();
      return { questions: Number(row?.questions ?? 0), passages: Number(row?.passages ?? 0), tokens: Number(row?.tokens ?? 0) };
    },
  };
}

export type KnowledgePhrasingsJobsRepository = ReturnType<typeof knowledgePhrasingsJobsRepository>;
