/**
 * Operator commands: `npm run cli -- workspace create --name "Acme" --owner ops@acme.example`, and
 * `npm run cli -- workspace restore-owner --workspace <id> --email ops@acme.example` for a workspace without an owner.
 * Uses the same configuration as the service (DATABASE_URL or the embedded database in DATA_DIR).
 */
import { parseArgs } from 'node:util';
import { migrate, openDatabase } from '../db/database.ts';
import { accountsRepository } from '../db/repositories/accounts.repository.ts';
import { signInRepository } from '../db/repositories/sign-in.repository.ts';
import { createAccountsService } from './accounts/accounts-service.ts';
import { createSignInService } from './accounts/sign-in-service.ts';
import { createLoginThrottle } from './auth/login-throttle.ts';
import { loadConfig } from './config.ts';
import { acquireDataDirLock } from './data-dir-lock.ts';
import { AppError, errorText } from './errors.ts';
import { isUuid } from './ids.ts';
import { loadOrCreateMasterKey } from './secrets/master-key.ts';
import { resealAll } from './secrets/reseal.ts';
import { createSecretBox } from './secrets/secret-box.ts';

const usage = `Usage:
  npm run cli -- workspace create --name <name> --owner <email>
  npm run cli -- workspace restore-owner --workspace <workspace id> --email <email>
  npm run cli -- secrets reseal

create: makes a workspace and its owner, and prints the owner's token and invite link once (JSON).
restore-owner: the user with that email becomes an owner (or is added as one) with a new token and invite link,
printed once (JSON). Invite links start with PUBLIC_URL.
secrets reseal: after a master-key rotation (MASTER_KEY the new key, MASTER_KEY_PREVIOUS the old one), seals every
stored secret under the new key and prints what it did (JSON); exit 1 when a secret opened with neither key.`;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      owner: { type: 'string' },
      workspace: { type: 'string' },
      email: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals.join(' ');
  if (values.help || (command !== 'workspace create' && command !== 'workspace restore-owner' && command !== 'secrets reseal')) {
    console.log(usage);
    return values.help ? 0 : 2;
  }
  let run: (accounts: ReturnType<typeof createAccountsService>) => Promise<unknown>;
  if (command === 'secrets reseal') return reseal();
  if (command === 'workspace create') {
    const name = values.name?.trim();
    const owner = values.owner?.trim();
    if (!name) return fail('--name is required.');
    if (!owner || !EMAIL.test(owner)) return fail('--owner must be an email address.');
    run = async (accounts) => {
      const created = await accounts.createWorkspace({ name, ownerEmail: owner });
      return { workspace: created.workspace, owner: { email: created.owner.email, token: created.owner.token, invite_url: created.owner.invite_url } };
    };
  } else {
    const workspace = values.workspace?.trim();
    const email = values.email?.trim();
    if (!workspace || !isUuid(workspace)) return fail('--workspace must be a workspace id (a UUID).');
    if (!email || !EMAIL.test(email)) return fail('--email must be an email address.');
    run = (accounts) => accounts.restoreOwner(workspace, email);
  }

  const config = loadConfig();
  const release = config.databaseUrl ? () => {} : acquireDataDirLock(config.dataDir);
  const { db, close } = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    await migrate(db);
    // Invite links point at PUBLIC_URL: set it as the service has it, or the printed link names localhost.
    const invites = createSignInService({ repository: signInRepository(db), throttle: createLoginThrottle(), publicUrl: config.publicUrl });
    console.log(JSON.stringify(await run(createAccountsService({ accounts: accountsRepository(db), invites })), null, 2));
    return 0;
  } catch (err) {
    if (err instanceof AppError) return fail(err.message, 1);
    throw err;
  } finally {
    await close();
    release();
  }
}

/** `secrets reseal` (src/secrets/reseal.ts): the second half of a master-key rotation. */
async function reseal(): Promise<number> {
  const config = loadConfig();
  if (!config.masterKeyPrevious) return fail('secrets reseal needs MASTER_KEY_PREVIOUS (the old key) beside MASTER_KEY (the new one).', 1);
  const release = config.databaseUrl ? () => {} : acquireDataDirLock(config.dataDir);
  const { db, close } = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    await migrate(db);
    const { key } = loadOrCreateMasterKey(config.masterKey, config.dataDir);
    const report = await resealAll(db, createSecretBox(key, [config.masterKeyPrevious]));
    console.log(JSON.stringify(report, null, 2));
    return report.unreadable.length === 0 ? 0 : 1;
  } finally {
    await close();
    release();
  }
}

function fail(message: string, code = 2): number {
  console.error(`botlink cli: ${message}${code === 2 ? `\n\n${usage}` : ''}`);
  return code;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  console.error(`botlink cli: ${errorText(err)}`);
  process.exitCode = 1;
}
