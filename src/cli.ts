/**
 * Operator commands: `npm run cli -- workspace create --name "Acme" --owner ops@acme.example`.
 * Uses the same configuration as the service (DATABASE_URL or the embedded database in DATA_DIR).
 */
import { parseArgs } from 'node:util';
import { migrate, openDatabase } from '../db/database.ts';
import { accountsRepository } from '../db/repositories/accounts.repository.ts';
import { createAccountsService } from './accounts/accounts-service.ts';
import { loadConfig } from './config.ts';
import { acquireDataDirLock } from './data-dir-lock.ts';
import { ConfigError } from './errors.ts';

const usage = `Usage:
  npm run cli -- workspace create --name <name> --owner <email>

Creates a workspace and its owner, and prints the owner's token once (JSON).`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { name: { type: 'string' }, owner: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help || positionals.join(' ') !== 'workspace create') {
    console.log(usage);
    return values.help ? 0 : 2;
  }
  const name = values.name?.trim();
  const owner = values.owner?.trim();
  if (!name) return fail('--name is required.');
  if (!owner || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(owner)) return fail('--owner must be an email address.');

  const config = loadConfig();
  const release = config.databaseUrl ? () => {} : acquireDataDirLock(config.dataDir);
  const { db, close } = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    await migrate(db);
    const created = await createAccountsService({ accounts: accountsRepository(db) }).createWorkspace({ name, ownerEmail: owner });
    console.log(JSON.stringify({ workspace: created.workspace, owner: { email: created.owner.email, token: created.owner.token } }, null, 2));
    return 0;
  } finally {
    await close();
    release();
  }
}

function fail(message: string): number {
  console.error(`botlink cli: ${message}\n\n${usage}`);
  return 2;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  console.error(`botlink cli: ${err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
