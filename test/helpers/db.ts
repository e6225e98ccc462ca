/**
 * The same suite runs on both databases: PGlite always, and real PostgreSQL when TEST_DATABASE_URL is set (CI sets
 * it). Each `describeEachDatabase` block works in a database of its own, so runs never see each other's rows: on PGlite
 * an in-memory one loaded from the run's migrated dump, on PostgreSQL a `CREATE DATABASE … TEMPLATE` copy of the run's
 * migrated template (test/postgres-template.global-setup.ts), dropped afterwards. Both are migrated once per run.
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
    /** With TEST_DATABASE_URL: the name of a database on it migrated once for the run (test/postgres-template.global-setup.ts). */
    postgresTemplate?: string;
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
  /** PostgreSQL: a direct URL to this block's own database (for a second pool, a LISTEN or a child process). */
  url?: string;
  /** LISTEN for NOTIFY, as a service that opens the database itself has it. */
  listen?: Listen;
  close(): Promise<void>;
}

const pgliteTemplatePath = inject('pgliteTemplate');
const postgresTemplate = inject('postgresTemplate');
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
  const own = await createOwnDatabase(url, 't', postgresTemplate);
  const opened = await openDatabase({ url: own.url, poolSize: 4 });
  // Nothing to do when it came from the template; a suite run without the setup migrates here.
  await migrate(opened.db);
  return {
    db: opened.db,
    kind,
    url: own.url,
    listen: listenOverConnection(own.url),
    async close() {
      await opened.close();
      await own.drop();
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

/**
 * @param template a database to copy (`CREATE DATABASE … TEMPLATE`: a file copy of a migrated database, about 0.1 s
 *   where migrating an empty one took 3 s); without it the new database is empty.
 */
export async function createOwnDatabase(serverUrl: string, prefix: string, template?: string): Promise<OwnDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = await openDatabase({ url: serverUrl, poolSize: 1 });
  await (template ? sql`create database ${sql.id(name)} template ${sql.id(template)}` : sql`create database ${sql.id(name)}`).execute(admin.db);
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
  const own = await createOwnDatabase(url, 'p', postgresTemplate);
  const opened = await openDatabase({ url: `${pooler}/${own.name}`, pooler: 'transaction', directUrl: own.url, poolSize: 4 });
  // Through the pooler, as the service migrates there (nothing to apply when it came from the template).
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
