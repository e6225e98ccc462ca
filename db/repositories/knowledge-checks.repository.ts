/**
 * Answers a knowledge change moved (migration 0040; docs/scenarios.md, "Answers a knowledge change moved"): the saved
 * checks, the mark each knowledge write leaves for its workspace, and the re-runs' results.
 *
 * A mark is one row per workspace: `first_at` the first write since the last re-run, `last_at` the latest. The re-run
 * of a workspace is claimed in job_claims under `knowledge-recheck:<workspace id>` (workspace-job-claims.ts), so one
 * engine runs it however many engines saw the writes.
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.ts';
import { jsonb } from '../json.ts';
import type { KnowledgeChecksTable, KnowledgeRechecksTable } from '../schema.ts';
import { isUniqueViolation } from '../unique-violation.ts';
import { workspaceJobClaims } from './workspace-job-claims.ts';

const JOB_PREFIX = 'knowledge-recheck:';

export type KnowledgeCheckRow = Selectable<KnowledgeChecksTable>;
export type KnowledgeRecheckRow = Selectable<KnowledgeRechecksTable>;

/** A web-chat scenario with its latest finished run: what a re-run plays again and compares with. */
export interface KnowledgeScenarioRow {
  id: string;
  name: string;
  definition: unknown;
  run_id: string;
  runs: number;
  passed: number;
}

export function knowledgeChecksRepository(db: Db) {
  return {
    // ── Saved checks ──────────────────────────────────────────────────────────────────────────────────────────────
    async listChecks(workspaceId: string, limit: number): Promise<KnowledgeCheckRow[]> {
      return db.selectFrom('knowledge_checks').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('id').limit(limit).execute();
    },

    async countChecks(workspaceId: string): Promise<number> {
      const row = await db.selectFrom('knowledge_checks').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** The new check, or 'taken' when the workspace has this question in this language already. */
    async insertCheck(row: { id: string; workspace_id: string; question: string; language: string; answer: string; source: string }): Promise<KnowledgeCheckRow | 'taken'> {
      try {
        return await db.insertInto('knowledge_checks').values(row).returningAll().executeTakeFirstOrThrow();
      } catch (err) {
        if (isUniqueViolation(err)) return 'taken';
        throw err;
      }
    },

    async findCheck(workspaceId: string, id: string): Promise<KnowledgeCheckRow | undefined> {
      return db.selectFrom('knowledge_checks').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },

    async removeCheck(workspaceId: string, id: string): Promise<boolean> {
      const result = await db.deleteFrom('knowledge_checks').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** A new expected answer for the check (the owner accepted a re-run's); undefined when the check is gone. */
    async setAnswer(workspaceId: string, id: string, answer: string, source: string): Promise<KnowledgeCheckRow | undefined> {
      return db
        .updateTable('knowledge_checks')
        .set({ answer, source, updated_at: sql<Date>`now()` })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
    },

    // ── Marks: the knowledge of a workspace was written ────────────────────────────────────────────────────────────
    async markChanged(workspaceId: string, at: Date): Promise<void> {
      await db
        .insertInto('knowledge_change_marks')
        .values({ workspace_id: workspaceId, first_at: at, last_at: at })
        .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ last_at: sql<Date>`greatest(knowledge_change_marks.last_at, excluded.last_at)` }))
        .execute();
    },

    /** The workspace's mark, when a write waits for a re-run. */
    async mark(workspaceId: string): Promise<{ first_at: Date; last_at: Date } | undefined> {
      return db.selectFrom('knowledge_change_marks').select(['first_at', 'last_at']).where('workspace_id', '=', workspaceId).executeTakeFirst();
    },

    /**
     * Workspaces whose mark is due at `at` (no write for `quietMs`, or the first one `maxWaitMs` ago) and whose
     * re-run no engine holds; disabled workspaces are left out.
     */
    async dueWorkspaces(at: Date, quietMs: number, maxWaitMs: number): Promise<string[]> {
      const quiet = new Date(at.getTime() - quietMs);
      const waited = new Date(at.getTime() - maxWaitMs);
      const { rows } = await sql<{ workspace_id: string }>`
        select m.workspace_id
        from knowledge_change_marks m
        join workspaces w on w.id = m.workspace_id and w.disabled_at is null
        left join job_claims j on j.name = ${JOB_PREFIX} || m.workspace_id::text
        where (m.last_at <= ${quiet} or m.first_at <= ${waited})
          and (j.lease_until is null or j.lease_until <= ${at})
        order by m.first_at`.execute(db);
      return rows.map((r) => r.workspace_id);
    },

    /**
     * The writes up to `upTo` were re-run: the mark goes, unless a write came meanwhile, whose wait then starts
     * at `upTo`.
     */
    async clearMark(workspaceId: string, upTo: Date): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('knowledge_change_marks').where('workspace_id', '=', workspaceId).where('last_at', '<=', upTo).execute();
        await trx.updateTable('knowledge_change_marks').set({ first_at: upTo }).where('workspace_id', '=', workspaceId).where('first_at', '<', upTo).execute();
      });
    },

    ...workspaceJobClaims(db, JOB_PREFIX),

    // ── Re-runs ──────────────────────────────────────────────────────────────────────────────────────────────────
    async latestRecheck(workspaceId: string): Promise<KnowledgeRecheckRow | undefined> {
      return db.selectFrom('knowledge_rechecks').selectAll().where('workspace_id', '=', workspaceId).orderBy('finished_at', 'desc').limit(1).executeTakeFirst();
    },

    /** A finished re-run; the workspace's older ones beyond the newest `keep` go. */
    async insertRecheck(
      row: { id: string; workspace_id: string; started_at: Date; finished_at: Date; knowledge_version: string; checks: unknown; scenarios: unknown },
      keep: number,
    ): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('knowledge_rechecks').values({ ...row, checks: jsonb(row.checks), scenarios: jsonb(row.scenarios) }).execute();
        await trx
          .deleteFrom('knowledge_rechecks')
          .where('id', 'in', (eb) =>
            eb.selectFrom('knowledge_rechecks').select('id').where('workspace_id', '=', row.workspace_id).orderBy('finished_at', 'desc').offset(keep).limit(1_000),
          )
          .execute();
      });
    },

    /** Web-chat scenarios of the workspace that have a finished run, each with its latest, by name. */
    async knowledgeScenarios(workspaceId: string, limit: number): Promise<KnowledgeScenarioRow[]> {
      const { rows } = await sql<KnowledgeScenarioRow>`
        select s.id, s.name, s.definition, r.id as run_id, r.runs, r.passed
        from scenarios s
        join lateral (
          select id, runs, passed from scenario_runs r where r.scenario_id = s.id and r.status = 'done' order by r.created_at desc limit 1
        ) r on true
        where s.workspace_id = ${workspaceId} and s.definition->>'channel' = 'webchat'
        order by s.name
        limit ${limit}`.execute(db);
      return rows.map((r) => ({ ...r, runs: Number(r.runs), passed: Number(r.passed) }));
    },

    /** The runs of these ids that are still kept. */
    async runs(workspaceId: string, ids: readonly string[]): Promise<{ id: string; status: string; runs: number; passed: number }[]> {
      if (ids.length === 0) return [];
      return db.selectFrom('scenario_runs').select(['id', 'status', 'runs', 'passed']).where('workspace_id', '=', workspaceId).where('id', 'in', [...ids]).execute();
    },
  };
}

export type KnowledgeChecksRepository = ReturnType<typeof knowledgeChecksRepository>;
