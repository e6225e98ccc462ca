/**
 * What every operator command shares: its options, the usage error (exit 2), printing for people or `--json` for
 * scripts, and the services of the HTTP API opened on the service's own database, so a command follows the API's rules
 * and answers with the API's messages (a refused operation: exit 1).
 */
import { migrate, openDatabase } from '../../db/database.ts';
import { accountsRepository } from '../../db/repositories/accounts.repository.ts';
import { apiKeysRepository } from '../../db/repositories/api-keys.repository.ts';
import { signInRepository } from '../../db/repositories/sign-in.repository.ts';
import { signInThrottleRepository } from '../../db/repositories/sign-in-throttle.repository.ts';
import { webhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import { createAccountsService, type AccountsService } from '../accounts/accounts-service.ts';
import { createSignInService } from '../accounts/sign-in-service.ts';
import { createApiKeysService, type ApiKeysService } from '../auth/api-keys.ts';
import { createLoginThrottle } from '../auth/login-throttle.ts';
import { loadConfig } from '../config.ts';
import { acquireDataDirLock } from '../data-dir-lock.ts';
import { isUuid } from '../ids.ts';
import { GuardedClient } from '../net/guarded-client.ts';
import { loadOrCreateMasterKey } from '../secrets/master-key.ts';
import { createSecretBox, type SecretBox } from '../secrets/secret-box.ts';
import { createWebhookService, type WebhookService } from '../webhooks/webhook-service.ts';
import type { Db } from '../../db/database.ts';

/** Every option any command takes (node:util parseArgs); each command reads its own. */
export const CLI_OPTIONS = {
  name: { type: 'string' },
  owner: { type: 'string' },
  workspace: { type: 'string' },
  email: { type: 'string' },
  role: { type: 'string' },
  reason: { type: 'string' },
  all: { type: 'boolean' },
  event: { type: 'string' },
  key: { type: 'string' },
  json: { type: 'boolean' },
  channel: { type: 'string' },
  message: { type: 'string' },
  requests: { type: 'string' },
  tool: { type: 'string' },
  args: { type: 'string' },
  endpoint: { type: 'string' },
  last: { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
  runs: { type: 'string' },
  'min-pass': { type: 'string' },
  junit: { type: 'string' },
  'no-judge': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type CliOptions = Partial<Record<Exclude<keyof typeof CLI_OPTIONS, 'json' | 'help' | 'all' | 'no-judge'>, string>> & {
  json?: boolean;
  help?: boolean;
  all?: boolean;
  'no-judge'?: boolean;
};

/** One command: `noun verb`, its usage lines, and what it does (the exit code). */
export interface CliCommand {
  name: string;
  usage: string;
  run(values: CliOptions, rest: string[]): Promise<number>;
}

/** A wrong or missing argument: the message and the usage, exit 2. */
export class UsageError extends Error {}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function workspaceOption(values: CliOptions): string {
  const workspace = values.workspace?.trim();
  if (!workspace || !isUuid(workspace)) throw new UsageError('--workspace must be a workspace id (a UUID; `workspace list` shows them).');
  return workspace;
}

export function emailOption(values: CliOptions, option: 'email' | 'owner' = 'email'): string {
  const email = values[option]?.trim();
  if (!email || !EMAIL.test(email)) throw new UsageError(`--${option} must be an email address.`);
  return email;
}

/** Prints `data` as JSON with --json, else the lines for people. */
export function print(values: CliOptions, data: unknown, lines: () => string[]): void {
  console.log(values.json ? JSON.stringify(data, null, 2) : lines().join('\n'));
}

/** Rows as aligned columns under a header, for people. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)];
}

export interface CliServices {
  db: Db;
  accounts: AccountsService;
  apiKeys: ApiKeysService;
  webhooks: WebhookService;
  /** Seals under MASTER_KEY, opens with it or MASTER_KEY_PREVIOUS (as the service's box). */
  secrets: SecretBox;
}

/**
 * Opens the service's database (DATABASE_URL, or the embedded one in DATA_DIR, locked: the service must be stopped),
 * migrated, and runs `fn` with the API's services on it.
 */
export async function withServices<T>(fn: (services: CliServices) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const release = config.databaseUrl ? () => {} : acquireDataDirLock(config.dataDir);
  const url = config.databaseDirectUrl ?? config.databaseUrl;
  const { db, close, pooler } = await openDatabase({ url, dataDir: config.dataDir, poolSize: 1, pooler: config.databaseDirectUrl ? 'none' : config.databasePooler });
  const http = new GuardedClient({ allow: config.outboundAllow });
  try {
    if (config.databaseMigrationUrl) {
      // As the service migrates: as the role that owns the tables (docs/operations.md, "The audit log's owner").
      const owner = await openDatabase({ url: config.databaseMigrationUrl, poolSize: 1 });
      await migrate(owner.db).finally(() => owner.close());
    } else {
      await migrate(db, undefined, { inOneTransaction: pooler === 'transaction' });
    }
    // Invite links point at PUBLIC_URL: set it as the service has it, or the printed link names localhost.
    const throttle = createLoginThrottle({ repository: signInThrottleRepository(db) });
    const invites = createSignInService({ repository: signInRepository(db), throttle, publicUrl: config.publicUrl });
    const accounts = createAccountsService({ accounts: accountsRepository(db), invites });
    const apiKeys = createApiKeysService({ apiKeys: apiKeysRepository(db) });
    // Webhook secrets are sealed as the service seals them; a running service delivers on its next poll.
    const { key } = loadOrCreateMasterKey(config.masterKey, config.dataDir);
    const secrets = createSecretBox(key, config.masterKeyPrevious ? [config.masterKeyPrevious] : []);
    const webhooks = createWebhookService({
      db,
      repository: webhooksRepository(db),
      secrets,
      http,
      worker: { wake: () => {}, whenRecorded: async () => false },
    });
    return await fn({ db, accounts, apiKeys, webhooks, secrets });
  } finally {
    await http.close();
    await close();
    release();
  }
}
