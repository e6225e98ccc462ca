/**
 * The optional embeddings of passages and phrasings (docs/knowledge.md, "Embeddings"; migration 0033): which
 * workspaces have texts without an up-to-date vector, one engine at a time per workspace, the vectors themselves, and
 * the passages a question's nearest vectors name.
 *
 * A workspace's run is claimed in job_claims under `knowledge-embeddings:<workspace id>`, as the AI's questions are
 * (knowledge-phrasings-jobs.repository.ts): an UPDATE while the claim has run out, renewed while the run goes on.
 * `last_run_at` holds the newest change (a document written, a phrasing added) the last complete run started from.
 *
 * A passage's text is its document's title, a newline and its chunk's text, hashed with SHA-256 (hex) as the AI's
 * questions hash it; a phrasing's text is its own. A text needs a vector when no row of the current model carries its
 * hash.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { workspaceJobClaims } from './workspace-job-claims.ts';
import { MAX_HIT_PHRASINGS, type ChunkHit } from './knowledge-search.repository.ts';

const JOB_PREFIX = 'knowledge-embeddings:';

/** A text without an up-to-date vector: a passage (document and ordinal) or a phrasing. */
export type PendingText =
  | { kind: 'passage'; document_id: string; ordinal: number; phrasing_id: null; text: string; hash: string }
  | { kind: 'phrasing'; document_id: string; ordinal: null; phrasing_id: string; text: string; hash: string };

/** A vector to store for a text as `pending` named it. */
export interface EmbeddingWrite {
  target: PendingText;
  vector: readonly number[];
  tokens: number | null;
}

/** What the Knowledge screen says of the embeddings: vectors kept for the current model, passages they cover, tokens. */
export interface EmbeddingsSummary {
  vectors: number;
  passages: number;
  tokens: number;
}

/** `{0.1,-0.2,…}`: a real[] literal of finite numbers only (the model's answer is checked before it gets here). */
function vectorLiteral(vector: readonly number[]): string {
  return `{${vector.map((n) => (Number.isFinite(n) ? String(n) : '0')).join(',')}}`;
}

export function knowledgeEmbeddingsRepository(db: Db) {
  const passageHash = sql`encode(sha256(convert_to(d.title || chr(10) || c.text, 'UTF8')), 'hex')`;
  return {
    /**
     * Workspaces with a document written or a phrasing added after their last complete run (every workspace with
     * knowledge when `everything`), whose claim has run out at `at`; disabled workspaces are left out.
     */
    async dueWorkspaces(at: Date, everything: boolean): Promise<string[]> {
      const { rows } = await sql<{ workspace_id: string }>`
        with changes as (
          select workspace_id, max(updated_at) as at from knowledge_documents group by workspace_id
          union all
          select workspace_id, max(created_at) as at from knowledge_phrasings group by workspace_id
        )
        select ch.workspace_id
        from changes ch
        join workspaces w on w.id = ch.workspace_id and w.disabled_at is null
        left join job_claims j on j.name = ${JOB_PREFIX} || ch.workspace_id::text
        group by ch.workspace_id, j.last_run_at, j.lease_until
        having (${everything} or j.last_run_at is null or max(ch.at) > j.last_run_at)
          and (j.lease_until is null or j.lease_until <= ${at})
        order by max(ch.at)`.execute(db);
      return rows.map((r) => r.workspace_id);
    },

    ...workspaceJobClaims(db, JOB_PREFIX),

    /** The newest change of the workspace's knowledge (a document written, a phrasing added): a run's watermark. */
    async latestChange(workspaceId: string): Promise<Date | null> {
      const { rows } = await sql<{ at: Date | string | null }>`
        select greatest(
          (select max(updated_at) from knowledge_documents where workspace_id = ${workspaceId}),
          (select max(created_at) from knowledge_phrasings where workspace_id = ${workspaceId})
        ) as at`.execute(db);
      const at = rows[0]?.at;
      return at == null ? null : new Date(at);
    },

    /** At most `limit` texts of the workspace without a vector of `model` for their current hash: passages first. */
    async pending(workspaceId: string, model: string, limit: number): Promise<PendingText[]> {
      const { rows } = await sql<PendingText>`
        (
          select 'passage' as kind, c.document_id, c.ordinal, null::uuid as phrasing_id, d.title || chr(10) || c.text as text, ${passageHash} as hash
          from knowledge_chunks c
          join knowledge_documents d on d.id = c.document_id
          left join knowledge_embeddings e on e.document_id = c.document_id and e.phrasing_id is null and e.chunk_ordinal = c.ordinal
          where c.workspace_id = ${workspaceId}
            and (e.id is null or e.model <> ${model} or e.text_hash <> ${passageHash})
          order by c.document_id, c.ordinal
          limit ${limit}
        )
        union all
        (
          select 'phrasing' as kind, p.document_id, null::int as ordinal, p.id as phrasing_id, p.text, encode(sha256(convert_to(p.text, 'UTF8')), 'hex') as hash
          from knowledge_phrasings p
          left join knowledge_embeddings e on e.phrasing_id = p.id
          where p.workspace_id = ${workspaceId} and (e.id is null or e.model <> ${model})
          order by p.id
          limit ${limit}
        )
        limit ${limit}`.execute(db);
      return rows.map((r) => ({ ...r, ordinal: r.ordinal === null ? null : Number(r.ordinal) }) as PendingText);
    },

    /** Stores vectors (made by `model` at `at`), each replacing the one its passage or phrasing had. */
    async store(workspaceId: string, model: string, writes: readonly EmbeddingWrite[], at: Date): Promise<void> {
      await db.transaction().execute(async (trx) => {
        for (const { target, vector, tokens } of writes) {
          const set = sql`text_hash = excluded.text_hash, model = excluded.model, vector = excluded.vector, tokens = excluded.tokens, updated_at = excluded.updated_at`;
          const conflict = target.kind === 'passage' ? sql`(document_id, chunk_ordinal) where phrasing_id is null` : sql`(phrasing_id) where phrasing_id is not null`;
          // A phrasing or document removed meanwhile: its row would break a foreign key, so it is written only if
          // its target is still there.
          const exists =
            target.kind === 'passage'
              ? sql`exists (select from knowledge_documents where id = ${target.document_id}::uuid)`
              : sql`exists (select from knowledge_phrasings where id = ${target.phrasing_id}::uuid)`;
          await sql`
            insert into knowledge_embeddings (id, workspace_id, document_id, chunk_ordinal, phrasing_id, text_hash, model, vector, tokens, updated_at)
            select ${randomUUID()}::uuid, ${workspaceId}::uuid, ${target.document_id}::uuid, ${target.ordinal}::int, ${target.phrasing_id}::uuid,
              ${target.hash}::text, ${model}::text, ${vectorLiteral(vector)}::real[], ${tokens}::int, ${at}::timestamptz
            where ${exists}
            on conflict ${conflict} do update set ${set}`.execute(trx);
        }
      });
    },

    /** Removes the vectors of passages that no longer exist (their document was chunked again into fewer). */
    async removeStale(workspaceId: string): Promise<number> {
      const result = await sql`
        delete from knowledge_embeddings e
        where e.workspace_id = ${workspaceId} and e.phrasing_id is null
          and not exists (select from knowledge_chunks c where c.document_id = e.document_id and c.ordinal = e.chunk_ordinal)`.execute(db);
      return Number(result.numAffectedRows ?? 0);
    },

    /**
     * The workspace's vectors of `model` that fit what is there now, each with the chunk it stands for: a passage's
     * own (its hash still its text's) and its phrasings' (a phrasing of the whole document stands for each passage).
     */
    async vectors(workspaceId: string, model: string): Promise<{ chunk_id: string; vector: number[] }[]> {
      const { rows } = await sql<{ chunk_id: string; vector: number[] }>`
        select c.id as chunk_id, e.vector
        from knowledge_chunks c
        join knowledge_documents d on d.id = c.document_id
        join knowledge_embeddings e on e.document_id = c.document_id and e.phrasing_id is null and e.chunk_ordinal = c.ordinal
        where c.workspace_id = ${workspaceId} and e.model = ${model} and e.text_hash = ${passageHash}
        union all
        select c.id as chunk_id, e.vector
        from knowledge_embeddings e
        join knowledge_phrasings p on p.id = e.phrasing_id
        join knowledge_chunks c on c.document_id = p.document_id and (p.chunk_ordinal is null or c.ordinal = p.chunk_ordinal)
        where e.workspace_id = ${workspaceId} and e.model = ${model}`.execute(db);
      return rows;
    },

    /** What changes when the workspace's vectors or the passages they stand for change. */
    async version(workspaceId: string): Promise<string> {
      const { rows } = await sql<{ v: number; vat: Date | null; n: number; dat: Date | null; p: number; pat: Date | null }>`
        select
          (select count(*)::int from knowledge_embeddings where workspace_id = ${workspaceId}) as v,
          (select max(updated_at) from knowledge_embeddings where workspace_id = ${workspaceId}) as vat,
          (select count(*)::int from knowledge_documents where workspace_id = ${workspaceId}) as n,
          (select max(updated_at) from knowledge_documents where workspace_id = ${workspaceId}) as dat,
          (select count(*)::int from knowledge_phrasings where workspace_id = ${workspaceId}) as p,
          (select max(created_at) from knowledge_phrasings where workspace_id = ${workspaceId}) as pat`.execute(db);
      const row = rows[0];
      const time = (at: Date | null | undefined) => (at ? new Date(at).getTime() : 0);
      return [Number(row?.v ?? 0), time(row?.vat), Number(row?.n ?? 0), time(row?.dat), Number(row?.p ?? 0), time(row?.pat)].join(':');
    },

    /**
     * The passages of these chunk ids in the workspace, as the knowledge search gives its hits (score 0: the caller
     * ranks them); an id of another workspace, or of a chunk gone meanwhile, gives nothing.
     */
    async hits(workspaceId: string, chunkIds: readonly string[], signal?: AbortSignal): Promise<ChunkHit[]> {
      if (chunkIds.length === 0) return [];
      const { rows } = await sql<ChunkHit>`
        select c.id, d.kind, d.external_id, d.title, d.url, c.text, 0::float8 as score, 'recall' as strategy, d.language,
          array(
            select p.text from knowledge_phrasings p
            where p.document_id = c.document_id and (p.chunk_ordinal = c.ordinal or p.chunk_ordinal is null)
            order by p.created_at, p.id
            limit ${MAX_HIT_PHRASINGS}
          ) as phrasings
        from knowledge_chunks c
        join knowledge_documents d on d.id = c.document_id
        where c.workspace_id = ${workspaceId} and c.id in (${sql.join(chunkIds.map((id) => sql`${id}::uuid`))})`.execute(db, { signal });
      return rows;
    },

    /** The vectors of `model` the workspace keeps, the passages with one, and the tokens they cost. */
    async summary(workspaceId: string, model: string): Promise<EmbeddingsSummary> {
      const row = await db
        .selectFrom('knowledge_embeddings')
        .select([
          (eb) => eb.fn.countAll<string>().as('vectors'),
          sql<string>`count(*) filter (where phrasing_id is null)`.as('passages'),
          sql<string>`coalesce(sum(tokens), 0)`.as('tokens'),
        ])
        .where('workspace_id', '=', workspaceId)
        .where('model', '=', model)
        .executeTakeFirst();
      return { vectors: Number(row?.vectors ?? 0), passages: Number(row?.passages ?? 0), tokens: Number(row?.tokens ?? 0) };
    },
  };
}

export type KnowledgeEmbeddingsRepository = ReturnType<typeof knowledgeEmbeddingsRepository>;
