/**
 * A PostgreSQL of a benchmark's own for one run: a fresh schema in BENCH_DATABASE_URL's database (dropped after), or,
 * through pgbouncer in transaction mode, a fresh database (pgbouncer does not pass a schema on) reached by the engines
 * through the pooler, with LISTEN and the migration over a direct connection (DATABASE_DIRECT_URL's role).
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { migrate, openDatabase, type OpenedDatabase } from '../../db/database.ts';
import { startPgbouncer, type Pgbouncer } from '../../harness/pgbouncer.ts';
import type { EngineConfig } from '../processes/engine-process.ts';

export interface BenchDatabase {
  /** The engines' database settings (bench/processes/engine-process.ts). */
  engine(poolSize: number): NonNullable<EngineConfig['database']>;
  /** A direct connection to the run's data, for set-up and checks. */
  db: OpenedDatabase['db'];
  /** pgbouncer's server connections (transaction mode only). */
  poolerServerConnections: number | null;
  drop(): Promise<void>;
}

/** Server connections pgbouncer keeps to PostgreSQL: the pooled deployment's few connections. */
const PGBOUNCER_POOL_SIZE = 20;

export async function prepareBenchDatabase(url: string, prefix: string, options: { pooler: boolean }): Promise<BenchDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = await openDatabase({ url, poolSize: 1 });
  if (!options.pooler) {
    await sql`create schema ${sql.id(name)}`.execute(admin.db);
    const data = await openDatabase({ url, schema: name, poolSize: 2 });
    await migrate(data.db, name);
    return {
      engine: (poolSize) => ({ url, schema: name, poolSize }),
      db: data.db,
      poolerServerConnections: null,
      async drop() {
        await data.close();
        await sql`drop schema if exists ${sql.id(name)} cascade`.execute(admin.db);
        await admin.close();
      },
    };
  }
  await sql`create database ${sql.id(name)}`.execute(admin.db);
  const direct = new URL(url);
  direct.pathname = `/${name}`;
  let pgbouncer: Pgbouncer | undefined;
  try {
    const data = await openDatabase({ url: direct.href, poolSize: 2 });
    await migrate(data.db);
    pgbouncer = await startPgbouncer({ host: direct.hostname, port: Number(direct.port || 5432), user: decodeURIComponent(direct.username || 'postgres') }, { poolSize: PGBOUNCER_POOL_SIZE });
    const pooled = pgbouncer.url(name);
    const bouncer = pgbouncer;
    return {
      engine: (poolSize) => ({ url: pooled, poolSize, pooler: 'transaction', directUrl: direct.href }),
      db: data.db,
      poolerServerConnections: PGBOUNCER_POOL_SIZE,
      async drop() {
        await data.close();
        await bouncer.stop();
        await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin.db);
        await admin.close();
      },
    };
  } catch (err) {
    await pgbouncer?.stop();
    await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin.db);
    await admin.close();
    throw err;
  }
}
