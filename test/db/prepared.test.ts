/** Prepared statements on real PostgreSQL (db/prepared.ts): a marked query is parsed once per connection. */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { prepared } from '../../db/prepared.ts';
import { sessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { databaseKinds, openTestDatabase } from '../helpers/db.ts';

describe('prepared statements', () => {
  it('rejects a name that is not a plain identifier', () => {
    expect(() => prepared("x */ drop table users; /*")).toThrow('Invalid prepared statement name');
  });

  for (const kind of databaseKinds) {
    it(`a marked query runs as a named statement with fresh parameters each time [${kind}]`, async () => {
      const database = await openTestDatabase(kind);
      try {
        const query = (n: number) => sql<{ doubled: number }>`${prepared('test_double')} select ${n}::int * 2 as doubled`.execute(database.db);
        const results = await Promise.all([1, 2, 3, 4, 5, 6].map(async (n) => (await query(n)).rows[0]!.doubled));
        expect(results).toEqual([2, 4, 6, 8, 10, 12]);
        if (kind === 'postgres') {
          // The server lists the statement among the connection's prepared statements.
          const { rows } = await sql<{ name: string; statement: string }>`${prepared('test_list')} select name, statement from pg_prepared_statements`.execute(database.db);
          expect(rows.some((r) => r.name.startsWith('test_list_') && r.statement.includes('pg_prepared_statements'))).toBe(true);
        }
        // An unmarked query is unaffected.
        expect((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows).toEqual([{ one: 1 }]);
      } finally {
        await database.close();
      }
    });
  }

  it('a session found by its external id on a table grown since its first lookups is found through sessions_external', async () => {
    if (!process.env.TEST_DATABASE_URL) return expect(process.env.TEST_DATABASE_URL).toBeUndefined();
    const database = await openTestDatabase('postgres');
    try {
      const { db } = database;
      const workspaceId = crypto.randomUUID();
      await db.insertInto('workspaces').values({ id: workspaceId, name: 'w' }).execute();
      const sessions = sessionsRepository(db);
      const open = (n: number) =>
        sessions.findOrCreate({ id: crypto.randomUUID(), workspace_id: workspaceId, channel: 'whatsapp', external_id: `wa-${n}`, language: 'en', customer_phone: null, machine_version: 1 });
      // The first lookups on a new, small, never analyzed table: a named statement would switch to a generic plan here.
      for (let i = 0; i < 8; i++) await open(0);
      await sql`insert into sessions (id, workspace_id, channel, external_id, language, machine_version)
        select gen_random_uuid(), ${workspaceId}, 'whatsapp', 'wa-' || g, 'en', 1 from generate_series(1, 5000) g`.execute(db);
      // The index scans of this lookup: the server's counts of this connection not yet reported, before and after.
      const scans = await db.transaction().execute(async (trx) => {
        const counts = async () =>
          (await sql<{ name: string; scans: number }>`select c.relname as name, pg_stat_get_xact_numscans(c.oid)::int as scans
            from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = 'sessions'::regclass`.execute(trx)).rows;
        const before = new Map((await counts()).map((r) => [r.name, r.scans]));
        expect(await sessionsRepository(trx).find(workspaceId, 'whatsapp', 'wa-2500')).toMatchObject({ external_id: 'wa-2500' });
        return Object.fromEntries((await counts()).filter((r) => r.scans > (before.get(r.name) ?? 0)).map((r) => [r.name, r.scans - (before.get(r.name) ?? 0)]));
      });
      // Not the workspace's whole list through an index that starts with workspace_id alone.
      expect(scans).toEqual({ sessions_external: 1 });
    } finally {
      await database.close();
    }
  });
});
