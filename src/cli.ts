/**
 * Operator commands: `npm run cli -- workspace create --name "Acme" --owner ops@acme.example`, and
 * `npm run cli -- workspace restore-owner --workspace <id> --email ops@acme.example` for a workspace without an owner.
 * These use the same configuration as the service (DATABASE_URL or the embedded database in DATA_DIR).
 *
 * For integrators and their owners: `doctor` checks an endpoint from wherever it runs (no database; OUTBOUND_ALLOW as
 * the service reads it), and `replay` asks a running service (its HTTP API, an owner's or admin's token), since the
 * stored turns, the sealed key and the rate limit are the service's.
 */
import { parseArgs } from 'node:util';
import { migrate, openDatabase } from '../db/database.ts';
import { accountsRepository } from '../db/repositories/accounts.repository.ts';
import { signInRepository } from '../db/repositories/sign-in.repository.ts';
import { createAccountsService } from './accounts/accounts-service.ts';
import { createSignInService } from './accounts/sign-in-service.ts';
import { createLoginThrottle } from './auth/login-throttle.ts';
import { DOCTOR_LATENCY_REQUESTS, MAX_DOCTOR_REQUESTS, doctorLines, runDoctor } from './integration/doctor.ts';
import { REPLAY_MAX_TURNS, replayLines, type ReplayReport } from './integration/replay.ts';
import { GuardedClient } from './net/guarded-client.ts';
import { CHANNELS, type Channel } from './words.ts';
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
  npm run cli -- doctor <endpoint_url> --key <key> [--json] [--channel webchat|whatsapp|phone] [--message <text>]
                 [--requests <1-${MAX_DOCTOR_REQUESTS}>] [--tool <name> --args <json>]
  npm run cli -- replay --endpoint <candidate url> [--key <key>] --last <1-${REPLAY_MAX_TURNS}> [--json]
                 [--url <service url>] [--token <owner or admin token>]

create: makes a workspace and its owner, and prints the owner's token and invite link once (JSON).
restore-owner: the user with that email becomes an owner (or is added as one) with a new token and invite link,
printed once (JSON). Invite links start with PUBLIC_URL.
secrets reseal: after a master-key rotation (MASTER_KEY the new key, MASTER_KEY_PREVIOUS the old one), seals every
stored secret under the new key and prints what it did (JSON); exit 1 when a secret opened with neither key.
doctor: checks an integrator's endpoint as the engine uses it (address, TLS, signatures, answer, latency over
--requests signed requests, default ${DOCTOR_LATENCY_REQUESTS}, the tools manifest, and one tool call when --tool names it).
Prints pass/warn/fail lines (--json: the report); exit 1 when a check fails. The key may also come from BOTLINK_KEY;
OUTBOUND_ALLOW exempts addresses as in the service.
replay: asks the running service at --url (or BOTLINK_URL, default http://localhost:8080) with --token (or
BOTLINK_TOKEN) to send the workspace's last N customer messages to the candidate endpoint, and prints each answer
beside the live one (--json: the report). Without --key the workspace's current key signs. Exit 1 when a message the
live endpoint answered gets no answer from the candidate (now_failing), or when the service refuses.`;

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
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (positionals[0] === 'doctor' && !values.help) return doctor(positionals.slice(1), values);
  if (positionals[0] === 'replay' && !values.help && positionals.length === 1) return replay(values);
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

type Options = Partial<Record<'key' | 'channel' | 'message' | 'requests' | 'tool' | 'args' | 'endpoint' | 'last' | 'url' | 'token', string>> & { json?: boolean };

async function doctor(positionals: string[], values: Options): Promise<number> {
  const [endpointUrl, ...rest] = positionals;
  if (!endpointUrl || rest.length > 0) return fail('doctor takes one endpoint URL.');
  const key = values.key ?? process.env.BOTLINK_KEY;
  if (!key) return fail('--key (or BOTLINK_KEY) is required: the key the endpoint verifies signatures with.');
  const channel = values.channel ?? 'webchat';
  if (!(CHANNELS as readonly string[]).includes(channel)) return fail(`--channel must be one of ${CHANNELS.join(', ')}.`);
  const requests = values.requests === undefined ? DOCTOR_LATENCY_REQUESTS : Number(values.requests);
  if (!(Number.isInteger(requests) && requests >= 1 && requests <= MAX_DOCTOR_REQUESTS)) return fail(`--requests must be a whole number from 1 to ${MAX_DOCTOR_REQUESTS}.`);
  if (values.args !== undefined && values.tool === undefined) return fail('--args goes with --tool.');
  let args: unknown = {};
  if (values.args !== undefined) {
    try {
      args = JSON.parse(values.args) as unknown;
    } catch {
      return fail('--args must be a JSON object, like \'{"order":"1234"}\'.');
    }
  }
  const http = new GuardedClient({ allow: loadConfig().outboundAllow });
  try {
    const report = await runDoctor({ http }, {
      endpointUrl,
      key,
      channel: channel as Channel,
      requests,
      ...(values.message === undefined ? {} : { message: values.message }),
      ...(values.tool === undefined ? {} : { tool: { name: values.tool, args } }),
    });
    console.log(values.json ? JSON.stringify(report, null, 2) : doctorLines(report).join('\n'));
    return report.ok ? 0 : 1;
  } finally {
    await http.close();
  }
}

async function replay(values: Options): Promise<number> {
  if (!values.endpoint) return fail('--endpoint is required: the candidate endpoint URL.');
  const last = Number(values.last);
  if (!(Number.isInteger(last) && last >= 1 && last <= REPLAY_MAX_TURNS)) return fail(`--last must be a whole number from 1 to ${REPLAY_MAX_TURNS}.`);
  const token = values.token ?? process.env.BOTLINK_TOKEN;
  if (!token) return fail('--token (or BOTLINK_TOKEN) is required: an owner\'s or admin\'s token.');
  const base = (values.url ?? process.env.BOTLINK_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
  const res = await fetch(`${base}/v1/integration/replay`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ endpoint_url: values.endpoint, last, ...(values.key === undefined ? {} : { key: values.key }) }),
  });
  const text = await res.text();
  if (res.status !== 200) {
    let message = text;
    try {
      message = (JSON.parse(text) as { error: { message: string } }).error.message;
    } catch {
      // Not our error body: show what came.
    }
    const retry = res.headers.get('retry-after');
    return fail(`the service answered HTTP ${res.status}: ${message}${retry ? ` (retry after ${retry} s)` : ''}`, 1);
  }
  const report = JSON.parse(text) as ReplayReport;
  console.log(values.json ? JSON.stringify(report, null, 2) : replayLines(report).join('\n'));
  return report.summary.now_failing > 0 ? 1 : 0;
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
