/** Prepared statements on real PostgreSQL (db/prepared.ts): a marked query is parsed once per connection. */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { prepared } from '../../db/prepared.ts';
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
});
