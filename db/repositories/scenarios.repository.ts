/**
 * Test scenarios and their runs (migration 0039, docs/scenarios.md). A run is claimed by one engine with a lease
 * (FOR UPDATE SKIP LOCKED), renewed while it plays, and finished fenced by that claim, so two engines never both play
 * it and a run another engine took over is never written twice.
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.ts';
import { jsonb } from '../json.ts';
import type { ScenarioRunsTable, ScenariosTable } from '../schema.ts';
import { isUniqueViolation } from '../unique-violation.ts';
import { interval } from './whatsapp-queue.ts';

export type ScenarioRow = Selectable<ScenariosTable>;
export type ScenarioRunRow = Selectable<ScenarioRunsTable>;

/** A scenario in the list, with its latest run. */
export interface ScenarioListRow {
  id: string;
  name: string;
  definition: unknown;
  created_at: Date;
  updated_at: Date;
  last_run_id: string | null;
  last_run_status: string | null;
  last_run_runs: number | null;
  last_run_passed: number | null;
  last_run_finished_at: Date | null;
}

/** A run in a scenario's list of runs: no failures or transcripts. */
export type ScenarioRunListRow = Pick<ScenarioRunRow, 'id' | 'status' | 'runs' | 'passed' | 'created_at' | 'started_at' | 'finished_at'>;

export interface RunResult {
  passed: number;
  failures: unknown[];
  transcripts: unknown[];
}

export function scenariosRepository(db: Db) {
  return {
    async list(workspaceId: string, limit: number): Promise<ScenarioListRow[]> {
      const { rows } = await sql<ScenarioListRow>`
        select s.id, s.name, s.definition, s.created_at, s.updated_at,
          r.id as last_run_id, r.status as last_run_status, r.runs as last_run_runs, r.passed as last_run_passed, r.finished_at as last_run_finished_at
        from scenarios s
        left join lateral (select * from scenario_runs r where r.scenario_id = s.id order by r.created_at desc limit 1) r on true
        where s.workspace_id = ${workspaceId}
        order by s.name
        limit ${limit}`.execute(db);
      return rows;
    },

    /** The workspace's scenario names (a starter suite's drafts take none of them). */
    async names(workspaceId: string): Promise<string[]> {
      const rows = await db.selectFrom('scenarios').select('name').where('workspace_id', '=', workspaceId).execute();
      return rows.map((r) => r.name);
    },

    /**
     * The passages a starter suite is written from (docs/scenarios.md, "A starter suite"): the first passage of each of
     * the `limit` most recently changed documents, so that they are spread over the pages rather than one page's parts.
     */
    async starterPassages(workspaceId: string, limit: number): Promise<{ title: string; url: string | null; text: string; language: string | null }[]> {
      const { rows } = await sql<{ title: string; url: string | null; text: string; language: string | null }>`
        select d.title, d.url, c.text, coalesce(c.language, d.language) as language
        from knowledge_documents d
        join lateral (select k.text, k.language from knowledge_chunks k where k.document_id = d.id order by k.ordinal limit 1) c on true
        where d.workspace_id = ${workspaceId}
        order by d.updated_at desc, d.id
        limit ${limit}`.execute(db);
      return rows;
    },

    async count(workspaceId: string): Promise<number> {
      const row = await db.selectFrom('scenarios').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async find(workspaceId: string, id: string): Promise<ScenarioRow | undefined> {
      return db.selectFrom('scenarios').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },

    /** The new scenario, or 'taken' when the workspace has one of that name. */
    async insert(row: { id: string; workspace_id: string; name: string; definition: unknown }): Promise<ScenarioRow | 'taken'> {
      try {
        return await db.insertInto('scenarios').values({ ...row, definition: jsonb(row.definition) }).returningAll().executeTakeFirstOrThrow();
      } catch (err) {
        if (isUniqueViolation(err)) return 'taken';
        throw err;
      }
    },

    /** The changed scenario; undefined when there is none; 'taken' when another of the workspace has that name. */
    async update(workspaceId: string, id: string, name: string, definition: unknown): Promise<ScenarioRow | undefined | 'taken'> {
      try {
        return await db
          .updateTable('scenarios')
          .set({ name, definition: jsonb(definition), updated_at: sql<Date>`now()` })
          .where('workspace_id', '=', workspaceId)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirst();
      } catch (err) {
        if (isUniqueViolation(err)) return 'taken';
        throw err;
      }
    },

    /** Deletes the scenario; its runs and their test conversations go with it. */
    async remove(workspaceId: string, id: string): Promise<boolean> {
      const result = await db.deleteFrom('scenarios').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** Runs of the workspace waiting or being played. */
    async openRuns(workspaceId: string): Promise<number> {
      const row = await db
        .selectFrom('scenario_runs')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('status', '<>', 'done')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /**
     * A new run, queued; the scenario's finished runs beyond the newest `keep` go (with their test conversations).
     */
    async insertRun(row: { id: string; workspace_id: string; scenario_id: string; definition: unknown; runs: number }, keep: number): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('scenario_runs').values({ ...row, definition: jsonb(row.definition) }).execute();
        await trx
          .deleteFrom('scenario_runs')
          .where('status', '=', 'done')
          .where('id', 'in', (eb) =>
            eb.selectFrom('scenario_runs').select('id').where('scenario_id', '=', row.scenario_id).orderBy('created_at', 'desc').offset(keep).limit(1_000),
          )
          .execute();
      });
    },

    /** A scenario's runs, newest first, without their failures and transcripts (the list of older runs). */
    async listRuns(workspaceId: string, scenarioId: string, limit: number): Promise<ScenarioRunListRow[]> {
      return db
        .selectFrom('scenario_runs')
        .select(['id', 'status', 'runs', 'passed', 'created_at', 'started_at', 'finished_at'])
        .where('workspace_id', '=', workspaceId)
        .where('scenario_id', '=', scenarioId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
    },

    async findRun(workspaceId: string, id: string): Promise<ScenarioRunRow | undefined> {
      return db.selectFrom('scenario_runs').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },

    /** Claims up to `limit` runs nobody plays (waiting, or left by an engine whose lease ran out), oldest first. */
    async claimRuns(owner: string, leaseMs: number, limit: number): Promise<ScenarioRunRow[]> {
      if (limit <= 0) return [];
      return db
        .updateTable('scenario_runs')
        .set((eb) => ({ status: 'running', lease_owner: owner, lease_until: interval(leaseMs), attempts: eb('attempts', '+', 1), started_at: sql<Date>`coalesce(started_at, now())` }))
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('scenario_runs')
            .select('id')
            .where('status', '<>', 'done')
            .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', sql<Date>`now()`)]))
            .orderBy('created_at')
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .returningAll()
        .execute();
    },

    async renewRuns(ids: readonly string[], owner: string, leaseMs: number): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await db
        .updateTable('scenario_runs')
        .set({ lease_until: interval(leaseMs) })
        .where('id', '=', sql<string>`any(${sql.val(ids)}::uuid[])`)
        .where('lease_owner', '=', owner)
        .where('status', '=', 'running')
        .returning('id')
        .execute();
      return new Set(rows.map((r) => r.id));
    },

    /** The run is done, written only while `owner` still holds it; false when another engine took it over. */
    async finishRun(id: string, owner: string, result: RunResult): Promise<boolean> {
      const done = await db
        .updateTable('scenario_runs')
        .set({
          status: 'done',
          passed: result.passed,
          failures: jsonb(result.failures),
          transcripts: jsonb(result.transcripts),
          finished_at: sql<Date>`now()`,
          lease_owner: null,
          lease_until: null,
        })
        .where('id', '=', id)
        .where('lease_owner', '=', owner)
        .where('status', '=', 'running')
        .executeTakeFirst();
      return done.numUpdatedRows > 0n;
    },

    /** The engine stops mid-run: the run waits for the next claim (here or on another engine). */
    async releaseRun(id: string, owner: string): Promise<void> {
      // Not counted as an attempt: the engine stopped in good order.
      await db
        .updateTable('scenario_runs')
        .set((eb) => ({ status: 'queued', lease_owner: null, lease_until: null, attempts: eb('attempts', '-', 1) }))
        .where('id', '=', id)
        .where('lease_owner', '=', owner)
        .where('status', '=', 'running')
        .execute();
    },
  };
}

export type ScenariosRepository = ReturnType<typeof scenariosRepository>;
