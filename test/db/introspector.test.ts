import { randomBytes } from 'node:crypto';
import { PostgresIntrospector, sql, type TableMetadata } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/database.ts';
import { SnapshotIntrospector } from '../../db/introspector.ts';
import { describeEachDatabase } from '../helpers/db.ts';

const url = process.env.TEST_DATABASE_URL;

describeEachDatabase('the introspector', (get) => {
  it("lists this database's tables as Kysely's own introspector does", async () => {
    const { db, kind } = get();
    if (kind !== 'postgres') return expect(kind).toBe('pglite');
    const ours = (await new SnapshotIntrospector(db).getTables({ withInternalKyselyTables: true })).filter((t) => t.schema === 'public');
    // Kysely's own read fails when another test file drops its schema meanwhile (what ours is for): read again then.
    const kyselyTables = async (attempt = 1): Promise<TableMetadata[]> => {
      try {
        return await new PostgresIntrospector(db).getTables({ withInternalKyselyTables: true });
      } catch (err) {
        if (attempt >= 10 || !['3F000', '42P01'].includes((err as { code?: string }).code ?? '')) throw err;
        return kyselyTables(attempt + 1);
      }
    };
    const kysely = (await kyselyTables()).filter((t) => t.schema === 'public');
    expect(ours.map((t) => t.name)).toContain('kysely_migration');
    expect(ours).toEqual(kysely.map((t) => ({ ...t, columns: t.columns.map((c) => ({ ...c })) })));
    const withoutKysely = await new SnapshotIntrospector(db).getTables();
    expect(withoutKysely.map((t) => t.name)).not.toContain('kysely_migration');
  });
});

describe.runIf(url)('the introspector while other sessions drop schemas', () => {
  it('reads every time, never failing on a schema or table dropped while it reads', async () => {
    const reader = await openDatabase({ url: url!, poolSize: 1 });
    const churner = await openDatabase({ url: url!, poolSize: 1 });
    const introspector = new SnapshotIntrospector(reader.db);
    let churning = true;
    let dropped = 0;
    const churn = (async () => {
      while (churning) {
        const name = `x_${randomBytes(6).toString('hex')}`;
        await sql`create schema ${sql.id(name)}`.execute(churner.db);
        await sql`create table ${sql.id(name, 'items')} (id serial primary key, label text)`.execute(churner.db);
        await sql`drop schema ${sql.id(name)} cascade`.execute(churner.db);
        dropped++;
      }
    })();
    try {
      // Kysely's own introspector fails here within a few reads, on 3F000 or 42P01.
      let reads = 0;
      while (reads < 30 || dropped < 30) {
        await introspector.getTables({ withInternalKyselyTables: true });
        reads++;
      }
      expect(reads).toBeGreaterThanOrEqual(30);
    } finally {
      churning = false;
      await churn;
      await reader.close();
      await churner.close();
    }
  }, 60_000);
});
