/** The shared health of each workspace's bot-link endpoint (migration 0012): one row per workspace. */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.ts';
import { jsonb } from '../json.ts';
import type { EndpointHealthTable } from '../schema.ts';

export type EndpointHealthRow = Selectable<EndpointHealthTable>;
export type EndpointHealthWrite = Omit<EndpointHealthRow, 'recent' | 'probed_at'> & { recent: unknown };

export function endpointHealthRepository(db: Db) {
  return {
    async find(workspaceId: string): Promise<EndpointHealthRow | undefined> {
      return db.selectFrom('endpoint_health').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
    },

    /** The row under its lock until the transaction `db` belongs to ends; undefined when there is none yet. */
    async lock(workspaceId: string): Promise<EndpointHealthRow | undefined> {
      return db.selectFrom('endpoint_health').selectAll().where('workspace_id', '=', workspaceId).forUpdate().executeTakeFirst();
    },

    async save(row: EndpointHealthWrite): Promise<EndpointHealthRow> {
      const values = { ...row, recent: jsonb(row.recent) };
      const { workspace_id: _, ...changes } = values;
      return db
        .insertInto('endpoint_health')
        .values(values)
        .onConflict((oc) => oc.column('workspace_id').doUpdateSet(changes))
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /**
     * Claims the endpoints that are down and were not probed for `intervalMs` (by any process): their probe time is set
     * to `at` in the same statement, so across processes each is probed at most once per interval.
     */
    async claimProbes(at: Date, intervalMs: number, limit: number): Promise<{ workspace_id: string; endpoint_url: string }[]> {
      const before = new Date(at.getTime() - intervalMs);
      const { rows } = await sql<{ workspace_id: string; endpoint_url: string }>`
        update endpoint_health set probed_at = ${at}
        where workspace_id in (
          select workspace_id from endpoint_health
          where state = 'down' and (probed_at is null or probed_at < ${before})
          order by probed_at nulls first limit ${limit}
          for update skip locked
        )
        returning workspace_id::text as workspace_id, endpoint_url
      `.execute(db);
      return rows;
    },

    async remove(workspaceId: string): Promise<void> {
      await db.deleteFrom('endpoint_health').where('workspace_id', '=', workspaceId).execute();
    },
  };
}

export type EndpointHealthRepository = ReturnType<typeof endpointHealthRepository>;
