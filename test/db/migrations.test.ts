import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../db/database.ts';
import { migrations } from '../../db/migrations/index.ts';
import { describeEachDatabase } from '../helpers/db.ts';

describeEachDatabase('migrations', (get) => {
  it('create every table of the schema', async () => {
    const { db } = get();
    const tables = await db.introspection.getTables();
    expect(tables.map((t) => t.name).sort()).toEqual(expect.arrayContaining(['integrations', 'tokens', 'users', 'workspaces']));
  });

  it('are idempotent: a second run applies nothing and fails nothing', async () => {
    const { db, schema } = get();
    await expect(migrate(db, schema)).resolves.toBeUndefined();
    const { rows } = await sql<{ n: string }>`select count(*) as n from kysely_migration`.execute(db);
    expect(Number(rows[0]!.n)).toBe(Object.keys(migrations).length);
  });

  it('enforce the role check in the database itself', async () => {
    const { db } = get();
    const id = crypto.randomUUID();
    await db.insertInto('workspaces').values({ id, name: 'w' }).execute();
    await expect(
      sql`insert into users (id, workspace_id, email, role) values (${crypto.randomUUID()}, ${id}, 'a@b.c', 'superuser')`.execute(db),
    ).rejects.toThrow();
  });
});


describe('test isolation', () => {
  it('gives each file its own schema on PostgreSQL (public stays empty of our tables)', async () => {
    if (!process.env.TEST_DATABASE_URL) return expect(process.env.TEST_DATABASE_URL).toBeUndefined();
    const { openDatabase } = await import('../../db/database.ts');
    const opened = await openDatabase({ url: process.env.TEST_DATABASE_URL, poolSize: 1 });
    const { rows } = await sql<{ n: string }>`select count(*) as n from information_schema.tables where table_schema = 'public' and table_name = 'integrations'`.execute(opened.db);
    await opened.close();
    expect(Number(rows[0]!.n)).toBe(0);
  });
});
