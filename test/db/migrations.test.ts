import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { Migrator, type MigrationResultSet } from 'kysely/migration';
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
    const { db } = get();
    await expect(migrate(db)).resolves.toBeUndefined();
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

describe('the migration lock', () => {
  const url = process.env.TEST_DATABASE_URL;
  it('of a run in one transaction ends with a failed migration: its own error is reported, and the next run elsewhere is not held up', async () => {
    if (!url) return expect(url).toBeUndefined();
    const { openDatabase } = await import('../../db/database.ts');
    // One connection each: a lock left behind would stay with `a`'s only connection, as with a pooler's server connection.
    const a = await openDatabase({ url, poolSize: 1 });
    const b = await openDatabase({ url, poolSize: 1 });
    const schema = `lock_${randomBytes(4).toString('hex')}`;
    try {
      await sql`create schema ${sql.id(schema)}`.execute(a.db);
      // As migrate() runs through a transaction pooler: the whole run in one transaction.
      const run = () =>
        a.db
          .transaction()
          .execute(async (trx) => {
            const result = await new Migrator({
              db: trx,
              provider: { getMigrations: async () => ({ '0001-fails': { up: async (db) => void (await sql`select 1 / 0`.execute(db)) } }) },
              migrationTableSchema: schema,
            }).migrateToLatest();
            if (result.error) throw result.error; // rolled back, as migrate() does
            return result;
          })
          .catch((err: unknown): MigrationResultSet => ({ error: err, results: undefined }));
      const { error } = await run();
      // The migration's own error, not "current transaction is aborted" from releasing the lock after it.
      expect((error as Error).message).toMatch(/division by zero/);
      // Another process takes the lock (other files' migrations may hold it for a moment, never for long).
      const deadline = Date.now() + 10_000;
      let got = false;
      while (!got && Date.now() < deadline) {
        got = (await sql<{ got: boolean }>`select pg_try_advisory_lock(3853314791062309107) as got`.execute(b.db)).rows[0]!.got;
        if (!got) await new Promise((r) => setTimeout(r, 50));
      }
      expect(got).toBe(true);
      await sql`select pg_advisory_unlock(3853314791062309107)`.execute(b.db);
    } finally {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(b.db);
      await a.close();
      await b.close();
    }
  });
});

