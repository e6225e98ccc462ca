/**
 * Opens the database: real PostgreSQL through pg when a URL is given, otherwise the embedded PGlite (Kysely's own
 * dialect), and applies the migrations under Kysely's migration lock (a PostgreSQL advisory lock), so several
 * processes starting at once migrate exactly once.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresAdapter, PostgresDialect, sql, type DatabaseIntrospector, type DialectAdapter, type MigrationLockOptions, type QueryExecutorProvider } from 'kysely';
import { Migrator, type MigrationResultSet } from 'kysely/migration';
import pg from 'pg';
import { migrations } from './migrations/index.ts';
import { SnapshotIntrospector } from './introspector.ts';
import { preparingClient } from './prepared.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;

export interface DatabaseOptions {
  /** postgres:// URL of a real server; absent: embedded PGlite. */
  url?: string | null;
  /** Embedded: the directory of the database files; absent: in memory (tests). */
  dataDir?: string | null;
  /** Real PostgreSQL: the schema to work in (tests isolate each file in its own); default public. */
  schema?: string;
  /** Real PostgreSQL: connections in the pool at most (DATABASE_POOL_SIZE); default DEFAULT_POOL_SIZE. */
  poolSize?: number;
  /** Real PostgreSQL: a direct connection for LISTEN and migrations when `url` is a transaction pooler. */
  directUrl?: string | null;
  /**
   * Real PostgreSQL: `transaction` when `url` is a transaction pooler (pgbouncer in transaction mode): each
   * transaction may run on another server connection, so no named prepared statements (a second engine's, or the
   * same name on a reused connection, collide: "prepared statement … already exists"), and LISTEN only over
   * `directUrl` (without it: none, the callers poll). Default `none`.
   */
  pooler?: 'none' | 'transaction';
  /**
   * Real PostgreSQL without `pooler: 'transaction'`: called (at most once per database opened) when the server answers
   * a named statement as it does only behind a transaction pooler, so the operator learns which setting is missing.
   */
  onTransactionPoolerSign?: (code: string) => void;
  /**
   * Embedded, in memory: a data directory dumped by PGlite's `dumpDataDir` to start from instead of an empty cluster.
   * Tests start every database from one migrated dump (test/helpers/db.ts): about 0.3 s instead of 1.5 s for a fresh
   * cluster and its migrations.
   */
  loadDataDir?: Blob;
}

/** The embedded database runs in this process: its NOTIFY reaches its own listeners. */
function listenInProcess(pglite: PGlite): Listen {
  return async (channel, onNotify) => {
    const unlisten = await pglite.listen(channel, (payload) => onNotify(payload ?? ''));
    return async () => {
      await unlisten();
    };
  };
}

/**
 * LISTEN on a channel: `onNotify` for every NOTIFY, `onLost` when the connection is gone (the caller listens again).
 * Resolves once listening, to a function that stops.
 */
export type Listen = (channel: string, onNotify: (payload: string) => void, onLost: (err: unknown) => void) => Promise<() => Promise<void>>;

export interface OpenedDatabase {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** `transaction`: through a transaction pooler (see DatabaseOptions.pooler). */
  pooler?: 'none' | 'transaction';
  close(): Promise<void>;
  /** LISTEN for NOTIFY (docs/architecture.md, "Live events across engines"). */
  listen?: Listen;
}

/**
 * LISTEN over a connection of its own: a transaction pooler (pgbouncer in transaction mode) cannot hold one, so
 * `directUrl` may name a direct connection to the server (DATABASE_DIRECT_URL); without one, DATABASE_URL.
 */
export function listenOverConnection(url: string): Listen {
  return async (channel, onNotify, onLost) => {
    const client = new pg.Client({ connectionString: url });
    let stopped = false;
    const lost = (err: unknown) => {
      if (stopped) return;
      stopped = true;
      client.end().catch(() => {});
      onLost(err);
    };
    client.on('error', lost);
    client.on('end', () => lost(new Error('the LISTEN connection ended')));
    client.on('notification', (n) => {
      if (n.channel === channel) onNotify(n.payload ?? '');
    });
    await client.connect();
    await client.query(`listen ${quoteIdent(channel)}`);
    return async () => {
      stopped = true;
      await client.end().catch(() => {});
    };
  };
}

/** Connections an engine keeps to the database at most, unless DATABASE_POOL_SIZE says otherwise. */
export const DEFAULT_POOL_SIZE = 10;

/** A pooled connection unused this long is closed (a quiet engine gives its connections back), ms. */
export const POOL_IDLE_TIMEOUT_MS = 5 * 60_000;

/** Kysely's own key for its migration lock, kept so a process of an older build and one of this build exclude each other. */
const MIGRATION_LOCK_ID = 3853314791062309107n;
/** How long a migration run waits for another's lock before it fails, ms. */
const MIGRATION_LOCK_TIMEOUT_MS = 5 * 60_000;

/**
 * Kysely's PostgreSQL adapter, with the migration lock of a migration run given a transaction (`migrate`'s
 * `inOneTransaction`, through a transaction pooler) taken as a transaction-level advisory lock. Kysely takes its lock
 * in that transaction as a session-level lock and releases it with a statement in a `finally`; when a migration
 * fails, that statement runs in the aborted transaction and fails too, hiding the migration's own error, and the lock
 * stays with the connection: through a pooler, a server connection others are handed, so every later migration waits
 * on it (Kysely allows an hour). A transaction-level lock ends with the transaction, whatever becomes of it. A run
 * given the pool keeps Kysely's own lock: taken on one connection around the migration's transaction, it is released
 * on that connection after the rollback.
 */
class TransactionLockAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<unknown>, options: MigrationLockOptions): Promise<void> {
    if (!db.isTransaction) return super.acquireMigrationLock(db, options);
    await sql`select set_config('lock_timeout', ${String(MIGRATION_LOCK_TIMEOUT_MS)}, true), pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_ID)})`.execute(db);
  }

  override async releaseMigrationLock(db: Kysely<unknown>, options: MigrationLockOptions): Promise<void> {
    if (!db.isTransaction) return super.releaseMigrationLock(db, options);
  }
}

class MigrationSafePostgresDialect extends PostgresDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionLockAdapter();
  }

  // Kysely's own introspector fails on a schema or table someone else drops while it reads (db/introspector.ts).
  override createIntrospector(db: QueryExecutorProvider): DatabaseIntrospector {
    return new SnapshotIntrospector(db);
  }
}

function onlyOnce<A extends unknown[]>(fn: ((...args: A) => void) | undefined): ((...args: A) => void) | undefined {
  if (!fn) return undefined;
  let called = false;
  return (...args) => {
    if (called) return;
    called = true;
    fn(...args);
  };
}

export async function openDatabase(options: DatabaseOptions): Promise<OpenedDatabase> {
  if (options.url) {
    const pooled = options.pooler === 'transaction';
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? DEFAULT_POOL_SIZE,
      // pg's default closes a connection idle for 10 s. A pool lends its most recently used connection first, so under
      // steady load the others sit idle, are closed, and are opened again together at the next peak: each a new
      // PostgreSQL backend (fork, authentication, catalog caches, the named statements prepared again). The inbox
      // benchmark showed it as a burst every 11 s with PostgreSQL at a full core and requests queued for a second.
      idleTimeoutMillis: POOL_IDLE_TIMEOUT_MS,
      // Queries marked with prepared() go out as named statements (db/prepared.ts), except through a transaction pooler.
      Client: pooled ? pg.Client : preparingClient(onlyOnce(options.onTransactionPoolerSign)),
      // The search path is set per connection so unqualified names resolve in the chosen schema.
      ...(options.schema ? { options: `-c search_path=${quoteIdent(options.schema)}` } : {}),
    });
    // An idle client that loses its server must not crash the process (pg emits 'error' on the pool).
    pool.on('error', () => {});
    const db = new Kysely<Database>({ dialect: new MigrationSafePostgresDialect({ pool }) });
    const listenUrl = options.directUrl ?? (pooled ? null : options.url);
    return {
      db,
      kind: 'postgres',
      pooler: pooled ? 'transaction' : 'none',
      close: () => db.destroy(),
      ...(listenUrl ? { listen: listenOverConnection(listenUrl) } : {}),
    };
  }
  let dir: string | undefined;
  if (options.dataDir) {
    dir = join(options.dataDir, 'pglite');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  const pglite = options.loadDataDir && !dir ? await PGlite.create({ loadDataDir: options.loadDataDir }) : await PGlite.create(dir);
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  return { db, kind: 'pglite', close: () => db.destroy(), listen: listenInProcess(pglite) };
}

/**
 * Applies every pending migration; throws with the failing migration's name. Kysely's migration lock is taken for the
 * migration's transaction (TransactionLockAdapter). `inOneTransaction` (through a transaction pooler): the migration
 * table's creation and reads too run in that one transaction, on one server connection.
 */
export async function migrate(db: Db, schema?: string, options: { inOneTransaction?: boolean } = {}): Promise<void> {
  const migratorOf = (on: Db) =>
    new Migrator({
      db: on,
      provider: { getMigrations: async () => migrations },
      ...(schema ? { migrationTableSchema: schema } : {}),
    });
  const run = async (): Promise<MigrationResultSet> => {
    if (!options.inOneTransaction) return migratorOf(db).migrateToLatest();
    try {
      return await db.transaction().execute(async (trx) => {
        const result = await migratorOf(trx).migrateToLatest();
        if (result.error) throw new RolledBack(result);
        return result;
      });
    } catch (err) {
      if (err instanceof RolledBack) return err.result;
      throw err;
    }
  };
  const { error, results } = await run();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`Migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/**
 * True when the PostgreSQL server runs with autovacuum off. Without it no table is analyzed: the plans of statements
 * prepared while a table was small (named statements, the analytics triggers) are kept as it grows, and a lookup by
 * key turns into a scan (docs/operations.md, "Autovacuum"). False on the embedded database, which analyzes nothing
 * either but holds one shop's data.
 */
export async function autovacuumOff(database: OpenedDatabase): Promise<boolean> {
  if (database.kind !== 'postgres') return false;
  const { rows } = await sql<{ on: string }>`select current_setting('autovacuum') as on`.execute(database.db);
  return rows[0]?.on === 'off';
}

/** A failed run inside a transaction: thrown to roll it back, caught to report it as Kysely reports it. */
class RolledBack extends Error {
  readonly result: MigrationResultSet;
  constructor(result: MigrationResultSet) {
    super('migration failed; rolled back');
    this.result = result;
  }
}

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Invalid schema name ${name}`);
  return name;
}
