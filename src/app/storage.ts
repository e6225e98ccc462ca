/**
 * The composition root's first stage (src/app/service.ts): the database, opened and migrated under the data-dir lock, and
 * the one box that seals every stored secret.
 */
import { autovacuumOff, migrate, openDatabase, type OpenedDatabase } from '../../db/database.ts';
import type { Config } from '../config.ts';
import { acquireDataDirLock } from '../data-dir-lock.ts';
import type { Logger } from '../log.ts';
import { loadOrCreateMasterKey } from '../secrets/master-key.ts';
import { createSecretBox, type SecretBox } from '../secrets/secret-box.ts';
import type { ServiceOptions } from './options.ts';

export interface ServiceStorage {
  database: OpenedDatabase;
  /** Lets go of DATA_DIR's lock (nothing to let go of on PostgreSQL or a database handed in); the last step of stop. */
  releaseLock: () => void;
  /** The embedded default as `npm start` runs it: PGlite in DATA_DIR, on this process's event loop (src/admission). */
  embedded: boolean;
}

/**
 * Migrations over the migrations' own connection when there is one (the role that owns the tables, so the engine's
 * may only add to the audit log), else the direct connection (a pooler in front), else the service's own; through a
 * transaction pooler without a direct connection, in one transaction (db/database.ts, `migrate`).
 */
async function migrateDatabase(config: Config, database: OpenedDatabase): Promise<void> {
  const separate = config.databaseMigrationUrl ?? config.databaseDirectUrl;
  if (separate && database.kind === 'postgres') {
    const direct = await openDatabase({ url: separate, poolSize: 1 });
    try {
      await migrate(direct.db);
    } finally {
      await direct.close();
    }
    return;
  }
  await migrate(database.db, undefined, { inOneTransaction: database.pooler === 'transaction' });
}

/** Opens (or takes the tests') database and migrates it; on a failed migration closes it and lets go of the lock. */
export async function openStorage(options: Pick<ServiceOptions, 'config' | 'logger' | 'database'>): Promise<ServiceStorage> {
  const { config } = options;
  const releaseLock = options.database || config.databaseUrl ? () => {} : acquireDataDirLock(config.dataDir);
  const embedded = !options.database && !config.databaseUrl;
  const opening = {
    url: config.databaseUrl,
    directUrl: config.databaseDirectUrl,
    pooler: config.databasePooler,
    dataDir: config.dataDir,
    onTransactionPoolerSign: (code: string) =>
      options.logger.error({ code }, 'this looks like a transaction pooler: set DATABASE_POOLER=transaction (docs/operations.md, "Several processes on one PostgreSQL")'),
    ...(config.databasePoolSize === null ? {} : { poolSize: config.databasePoolSize }),
  };
  const database = options.database ?? (await openDatabase(opening));
  try {
    if (!options.database) await migrateDatabase(config, database);
  } catch (err) {
    await database.close();
    releaseLock();
    throw err;
  }
  if (await autovacuumOff(database).catch(() => false)) {
    options.logger.warn(
      'PostgreSQL runs with autovacuum off: tables are never analyzed, so queries planned while they were small stay slow as they grow; turn it on (docs/operations.md, "Autovacuum")',
    );
  }
  return { database, releaseLock, embedded };
}

/** One box seals every stored secret (integration keys, webhook secrets, WhatsApp tokens). */
export function openSecrets(input: { config: Config; logger: Logger }): SecretBox {
  const { config, logger } = input;
  const { key: masterKey, created } = loadOrCreateMasterKey(config.masterKey, config.dataDir);
  // The embedded default's normal first start, said at info: backing up DATA_DIR keeps the key with the secrets it opens.
  if (created) logger.info({ dataDir: config.dataDir }, 'made a master key in DATA_DIR (master.key): it encrypts stored secrets; back it up with the rest of DATA_DIR');
  return createSecretBox(masterKey, config.masterKeyPrevious ? [config.masterKeyPrevious] : []);
}
