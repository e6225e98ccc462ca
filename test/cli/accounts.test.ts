/**
 * `npm run cli -- user | token | key | webhook …` as child processes: on a fresh embedded DATA_DIR (the service
 * stopped), and on PostgreSQL while the real service runs on the same database, which then honours what the CLI did.
 * The rules are the API's (the last owner stays, https webhook URLs), and so are the messages of a refusal (exit 1).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const HOOK = 'https://127.0.0.1:9/botlink-hook';
const LOOPBACK = { OUTBOUND_ALLOW: '127.0.0.1/32' };

describe('cli user, token, key and webhook commands (embedded database)', { timeout: 60_000 }, () => {
  // Each command opens the embedded database (seconds on 2 cores): one command of each noun here; the details and the
  // running service's view of them are in the PostgreSQL block below, where a command takes a moment.
  const env = { DATA_DIR: mkdtempSync(join(tmpdir(), 'botlink-cli-accounts-')), ...LOOPBACK };
  let workspaceId = '';
  const cli = (...args: string[]) => runCli(args, env);

  beforeAll(async () => {
    const created = await cli('workspace', 'create', '--name', 'Acme', '--owner', 'ops@acme.example', '--json');
    workspaceId = JSON.parse(created.stdout).workspace.id;
  });

  it('user add prints the invite link once and no token; the last owner cannot be removed (exit 1, the API\'s message)', async () => {
    const added = await cli('user', 'add', '--workspace', workspaceId, '--email', 'ann@acme.example', '--role', 'admin', '--json');
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toEqual({
      user: { id: expect.any(String), email: 'ann@acme.example', name: null, role: 'admin' },
      invite_url: expect.stringMatching(/\/dashboard\/invite#bli_/),
      // No SMTP_URL here: the link is only printed.
      invite_emailed: false,
    });
    const lastOwner = await cli('user', 'remove', '--workspace', workspaceId, '--email', 'ops@acme.example');
    expect(lastOwner.code).toBe(1);
    expect(lastOwner.stderr.trim()).toBe('botlink cli: This is the last owner of the workspace; add another owner first.');
  });

  it('token create, key sync and webhook set print what is shown once', async () => {
    const token = await cli('token', 'create', '--workspace', workspaceId, '--email', 'ann@acme.example');
    expect(token.stdout).toMatch(/^A new token for ann@acme\.example; shown this once:\n {2}token: blt_\S+$/m);
    const sync = await cli('key', 'sync', '--workspace', workspaceId, '--json');
    expect(JSON.parse(sync.stdout)).toEqual({ key: expect.stringMatching(/^bls_/), key_hint: expect.any(String), created_at: expect.any(String) });
    const set = await cli('webhook', 'set', '--workspace', workspaceId, '--event', 'new_chat', '--url', HOOK, '--json');
    expect(JSON.parse(set.stdout)).toMatchObject({ event: 'new_chat', url: HOOK, enabled: true, secret: expect.stringMatching(/^whsec_/) });
  });

  it('usage errors exit 2 before the database is opened', async () => {
    const runs = await Promise.all([
      cli('user', 'add', '--workspace', workspaceId, '--email', 'bob@acme.example', '--role', 'boss'),
      cli('token', 'revoke', '--workspace', workspaceId, '--email', 'ops@acme.example'),
      cli('webhook', 'set', '--workspace', workspaceId, '--url', HOOK),
      cli('key', 'sync', '--workspace', 'acme'),
    ]);
    expect(runs.map((r) => r.code)).toEqual([2, 2, 2, 2]);
    expect(runs.map((r) => r.stderr.split('\n')[0])).toEqual([
      'botlink cli: --role must be one of owner, admin, agent.',
      'botlink cli: token revoke needs --all: it revokes every token of that user.',
      'botlink cli: --event is required: one of new_chat, escalation, new_lead, endpoint_down, endpoint_recovered.',
      'botlink cli: --workspace must be a workspace id (a UUID; `workspace list` shows them).',
    ]);
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('cli against PostgreSQL while the service runs', { timeout: 60_000 }, () => {
  let database: TestDatabase;
  let service: TestService;
  let env: Record<string, string>;
  let workspaceId = '';
  let owner = '';
  const cli = async (...args: string[]) => {
    const run = await runCli([...args, '--json'], env);
    if (run.code !== 0) throw new Error(`cli ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
    return JSON.parse(run.stdout);
  };

  beforeAll(async () => {
    database = await openTestDatabase('postgres');
    const masterKey = 'ab'.repeat(32);
    service = await startTestService(database, { MASTER_KEY: masterKey });
    // The CLI works in this test's own database, as the service does.
    env = { DATABASE_URL: database.url!, MASTER_KEY: masterKey, DATA_DIR: mkdtempSync(join(tmpdir(), 'botlink-cli-pg-')), ...LOOPBACK };
    const created = await cli('workspace', 'create', '--name', 'Acme', '--owner', 'ops@acme.example');
    workspaceId = created.workspace.id;
    owner = created.owner.token;
  });
  afterAll(async () => {
    await service?.stop();
    await database?.close();
  });

  it('user list and user remove, for people and as JSON; a user added with a name shows it', async () => {
    await cli('user', 'add', '--workspace', workspaceId, '--email', 'bob@acme.example', '--role', 'admin', '--name', ' Bobby ');
    const human = await runCli(['user', 'list', '--workspace', workspaceId], env);
    expect(human.stdout.trim()).toMatch(/^EMAIL\s+NAME\s+ROLE\s+CREATED\s+PASSWORD\nops@acme\.example\s+-\s+owner\s+\S+\s+invited\nbob@acme\.example\s+Bobby\s+admin\s+\S+\s+invited$/);
    expect((await cli('user', 'list', '--workspace', workspaceId)).users).toEqual([
      { id: expect.any(String), email: 'ops@acme.example', name: null, role: 'owner', created_at: expect.any(String), password_set: false },
      { id: expect.any(String), email: 'bob@acme.example', name: 'Bobby', role: 'admin', created_at: expect.any(String), password_set: false },
    ]);
    expect(await cli('user', 'remove', '--workspace', workspaceId, '--email', 'bob@acme.example')).toEqual({ removed: { id: expect.any(String), email: 'bob@acme.example', role: 'admin' } });
    const gone = await runCli(['user', 'remove', '--workspace', workspaceId, '--email', 'bob@acme.example'], env);
    expect([gone.code, gone.stderr.trim()]).toEqual([1, 'botlink cli: The user bob@acme.example was not found.']);
  });

  it('a user and tokens made by the CLI work at once; revoked, they do not', async () => {
    const added = await cli('user', 'add', '--workspace', workspaceId, '--email', 'ann@acme.example', '--role', 'agent');
    expect(added).not.toHaveProperty('token');
    const first = await cli('token', 'create', '--workspace', workspaceId, '--email', 'ann@acme.example');
    const fresh = await cli('token', 'create', '--workspace', workspaceId, '--email', 'ann@acme.example');
    expect((await service.api('GET', '/v1/sessions', { token: first.token })).status).toBe(200);
    expect((await service.api('GET', '/v1/sessions', { token: fresh.token })).status).toBe(200);
    expect(await cli('token', 'revoke', '--workspace', workspaceId, '--email', 'ann@acme.example', '--all')).toEqual({ email: 'ann@acme.example', revoked: 2 });
    expect((await service.api('GET', '/v1/sessions', { token: first.token })).status).toBe(401);
    expect((await service.api('GET', '/v1/sessions', { token: fresh.token })).status).toBe(401);
  });

  it('the sync key and the webhook set by the CLI are the service\'s', async () => {
    const { key } = await cli('key', 'sync', '--workspace', workspaceId);
    expect((await service.api('GET', '/v1/sync/pages', { headers: { 'x-sync-key': key } })).status).toBe(200);
    const { key: widget } = await cli('key', 'widget', '--workspace', workspaceId);
    expect((await service.api('GET', '/v1/keys/widget', { token: owner })).body.key).toBe(widget);
    const first = await cli('webhook', 'set', '--workspace', workspaceId, '--event', 'escalation', '--url', HOOK);
    expect((await service.api('GET', '/v1/webhooks', { token: owner })).body.webhooks).toEqual([expect.objectContaining({ event: 'escalation', url: HOOK })]);
    // Set again: the secret is kept and not shown; list shows its hint only.
    const again = await runCli(['webhook', 'set', '--workspace', workspaceId, '--event', 'escalation', '--url', `${HOOK}/v2`], env);
    expect(again.stdout).toContain(`The signing secret is unchanged (${first.secret_hint}).`);
    const listed = await runCli(['webhook', 'list', '--workspace', workspaceId], env);
    expect(listed.stdout.trim()).toMatch(new RegExp(`^EVENT\\s+URL\\s+SECRET\\s+STATE\\nescalation\\s+${HOOK}/v2\\s+whsec_\\S+\\s+enabled$`));
    expect(listed.stdout).not.toContain(first.secret);
    const http = await runCli(['webhook', 'set', '--workspace', workspaceId, '--event', 'escalation', '--url', 'http://127.0.0.1:9/x'], env);
    expect([http.code, http.stderr.trim()]).toEqual([1, 'botlink cli: url is not usable: the URL must use https, not http']);
    expect(await cli('webhook', 'remove', '--workspace', workspaceId, '--event', 'escalation')).toEqual({ removed: 'escalation' });
    expect((await service.api('GET', '/v1/webhooks', { token: owner })).body.webhooks).toEqual([]);
  });

  it('workspace disable: the running service refuses its token (403 workspace_disabled); enable: accepted again', async () => {
    const { workspace } = await cli('workspace', 'disable', '--workspace', workspaceId, '--reason', 'abuse report');
    expect(workspace).toMatchObject({ id: workspaceId, disabled_reason: 'abuse report' });
    const refused = await service.api('GET', '/v1/users', { token: owner });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'workspace_disabled']);
    await cli('workspace', 'enable', '--workspace', workspaceId);
    expect((await service.api('GET', '/v1/users', { token: owner })).status).toBe(200);
  });
});
