/**
 * The same suite runs on both databases: PGlite always, and real PostgreSQL when TEST_DATABASE_URL is set (CI sets
 * it). On PostgreSQL each `describeEachDatabase` block works in a schema of its own, dropped afterwards, so runs never
 * see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { listenOverConnection, migrate, openDatabase, type Db, type Listen } from '../../db/database.ts';

export type DatabaseKind = 'pglite' | 'postgres';

declare module 'vitest' {
  interface ProvidedContext {
    /** Only in the `pooler` project. */
    poolerUrl?: string;
    /** A migrated embedded database dumped once for the run (test/pglite-template.global-setup.ts). */
    pgliteTemplate?: string;
  }
}

/**
 * Provided in the `pooler` project (vitest.config.ts, test/pooler.global-setup.ts): the base URL of pgbouncer in transaction mode in front of
 * TEST_DATABASE_URL's server. Its suites then run on PostgreSQL only, through the pooler, each block in a database of
 * its own (a pooler passes no search path), with no named prepared statements and LISTEN over a direct connection, as
 * `DATABASE_POOLER=transaction` with `DATABASE_DIRECT_URL` runs the service.
 */
const poolerUrl = inject('poolerUrl');

export const databaseKinds: DatabaseKind[] = poolerUrl ? ['postgres'] : process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

export interface TestDatabase {
  db: Db;
  kind: DatabaseKind;
  /** PostgreSQL: the schema this database lives in. */
  schema?: string;
  /** LISTEN for NOTIFY, as a service that opens the database itself has it. */
  listen?: Listen;
  close(): Promise<void>;
}

const pgliteTemplatePath = inject('pgliteTemplate');
let pgliteTemplate: Promise<Blob> | undefined;

/** A fresh, migrated database: an in-memory PGlite (from the run's migrated dump), or a new schema on the real server. */
export async function openTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === 'pglite') {
    if (pgliteTemplatePath) pgliteTemplate ??= readFile(pgliteTemplatePath).then((bytes) => new Blob([bytes]));
    const opened = await openDatabase(pgliteTemplate ? { loadDataDir: await pgliteTemplate } : {});
    // Nothing to do when it came from the dump; a suite run without the setup migrates here.
    await migrate(opened.db);
    return { db: opened.db, kind, close: opened.close, ...(opened.listen ? { listen: opened.listen } : {}) };
  }
  const url = process.env.TEST_DATABASE_URL as string;
  if (poolerUrl) return openPooledDatabase(url, poolerUrl);
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = await openDatabase({ url, poolSize: 1 });
  await sql`create schema ${sql.id(schema)}`.execute(admin.db);
  await admin.close();
  const opened = await openDatabase({ url, schema, poolSize: 4 });
  await migrate(opened.db, schema);
  return {
    db: opened.db,
    kind,
    schema,
    listen: listenOverConnection(url),
    async close() {
      await sql`drop schema ${sql.id(schema)} cascade`.execute(opened.db);
      await opened.close();
    },
  };
}

/** A database of its own on the server (`<prefix>_<random>`); `drop()` removes it, whoever is still connected. */
export interface OwnDatabase {
  name: string;
  /** A direct URL to it: the server's URL with this database's name. */
  url: string;
  drop(): Promise<void>;
}

export async function createOwnDatabase(serverUrl: string, prefix: string): Promise<OwnDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = await openDatabase({ url: serverUrl, poolSize: 1 });
  await sql`create database ${sql.id(name)}`.execute(admin.db);
  await admin.close();
  const direct = new URL(serverUrl);
  direct.pathname = `/${name}`;
  return {
    name,
    url: direct.toString(),
    async drop() {
      const again = await openDatabase({ url: serverUrl, poolSize: 1 });
      await sql`drop database if exists ${sql.id(name)} with (force)`.execute(again.db);
      await again.close();
    },
  };
}

/** A new database on the server, used through the pooler; dropped at close. */
async function openPooledDatabase(url: string, pooler: string): Promise<TestDatabase> {
  const own = await createOwnDatabase(url, 'p');
  const opened = await openDatabase({ url: `${pooler}/${own.name}`, pooler: 'transaction', directUrl: own.url, poolSize: 4 });
  await migrate(opened.db, undefined, { inOneTransaction: true });
  return {
    db: opened.db,
    kind: 'postgres',
    listen: listenOverConnection(own.url),
    async close() {
      await opened.close();
      await own.drop();
    },
  };
}

/** Runs the block once per database kind; `get()` returns that run's database. */
export function describeEachDatabase(title: string, body: (get: () => TestDatabase) => void): void {
  for (const kind of databaseKinds) {
    describe(`${title} [${kind}]`, () => {
      let current: TestDatabase | undefined;
      beforeAll(async () => {
        current = await openTestDatabase(kind);
      });
      afterAll(async () => {
        await current?.close();
      });
      body(() => {
        if (!current) throw new Error('database not open yet');
        return current;
      });
    });
  }
}
