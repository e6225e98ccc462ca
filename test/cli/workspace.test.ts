/**
 * `npm run cli -- workspace …` as an operator runs it, a child process on a fresh embedded DATA_DIR: list, disable and
 * enable, for people and with --json, and the real service started afterwards on that database refusing a disabled
 * workspace's token. Exit codes: 0 done, 1 refused (the API's message), 2 usage.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/database.ts';
import { runCli } from '../helpers/cli.ts';
import { startTestService } from '../helpers/service.ts';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/** GET /v1/users with `token` through the real service on the embedded database in `dataDir` (the CLI has exited). */
async function usersStatus(dataDir: string, token: string): Promise<{ status: number; code?: string }> {
  const database = await openDatabase({ dataDir });
  try {
    const service = await startTestService({ db: database.db, kind: 'pglite', close: async () => {} }, { DATA_DIR: dataDir });
    try {
      const res = await service.api('GET', '/v1/users', { token });
      return { status: res.status, code: res.body?.error?.code };
    } finally {
      await service.stop();
    }
  } finally {
    await database.close();
  }
}

describe('cli workspace list, disable, enable (embedded database)', { timeout: 60_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'botlink-cli-ws-'));
  const env = { DATA_DIR: dataDir };
  let workspaceId = '';
  let token = '';

  it('lists the workspace with its owner and state, for people and as JSON', async () => {
    const created = await runCli(['workspace', 'create', '--name', 'Acme', '--owner', 'ops@acme.example', '--json'], env);
    expect(created.code).toBe(0);
    const printed = JSON.parse(created.stdout);
    workspaceId = printed.workspace.id;
    token = printed.owner.token;

    const human = await runCli(['workspace', 'list'], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^ID\s+NAME\s+CREATED\s+OWNERS\s+USERS\s+STATE\n/);
    expect(human.stdout).toMatch(new RegExp(`${workspaceId}  Acme  \\d{4}-\\d{2}-\\d{2}  ops@acme\\.example  1\\s+enabled`));
  });

  it('disables it (--json: the workspace with disabled_at and the reason); the service then refuses its token with 403', async () => {
    const disabled = await runCli(['workspace', 'disable', '--workspace', workspaceId, '--reason', 'unpaid invoice', '--json'], env);
    expect(disabled.code).toBe(0);
    expect(JSON.parse(disabled.stdout)).toEqual({
      workspace: {
        id: workspaceId,
        name: 'Acme',
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        owners: ['ops@acme.example'],
        users: 1,
        disabled_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        disabled_reason: 'unpaid invoice',
      },
    });
    expect(await usersStatus(dataDir, token)).toEqual({ status: 403, code: 'workspace_disabled' });
  });

  it('enables it again: listed as enabled, and the token works', async () => {
    const enabled = await runCli(['workspace', 'enable', '--workspace', workspaceId], env);
    expect(enabled.code).toBe(0);
    expect(enabled.stdout.trim()).toBe(`Enabled Acme (${workspaceId}).`);
    const listed = await runCli(['workspace', 'list', '--json'], env);
    expect(JSON.parse(listed.stdout).workspaces).toEqual([expect.objectContaining({ id: workspaceId, disabled_at: null, disabled_reason: null })]);
    expect((await usersStatus(dataDir, token)).status).toBe(200);
  });

  it('an unknown workspace is refused with the API\'s message (exit 1); a wrong argument is a usage error (exit 2)', async () => {
    const unknown = await runCli(['workspace', 'disable', '--workspace', UNKNOWN], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe('botlink cli: The workspace was not found.');
    // Usage errors stop before the database is opened.
    const missing = await runCli(['workspace', 'disable'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--workspace must be a workspace id');
    expect(missing.stderr).toContain('npm run cli -- workspace disable --workspace <id>');
    const noSuch = await runCli(['workspace', 'frobnicate'], env);
    expect(noSuch.code).toBe(2);
    expect(noSuch.stderr).toContain('no command "workspace frobnicate"');
    const unknownOption = await runCli(['workspace', 'list', '--colour'], env);
    expect(unknownOption.code).toBe(2);
    const help = await runCli(['--help'], env);
    expect(help.code).toBe(0);
    for (const command of ['workspace list', 'user add', 'token revoke', 'key sync', 'webhook set', 'secrets reseal', 'doctor', 'replay']) {
      expect(help.stdout).toContain(`npm run cli -- ${command}`);
    }
  });
});
