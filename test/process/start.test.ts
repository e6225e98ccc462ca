/** The service as a newcomer runs it: `node src/main.ts` in a child process, on the embedded database. */
// Each case starts real processes on a fresh embedded database (a cold PGlite start and its migrations take seconds on
// a busy machine, twice or three times a case): 60 s a case, not the suite's 20.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;
const children: ChildProcess[] = [];
afterAll(() => children.forEach((c) => c.kill('SIGKILL')));

interface Started {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  exited: Promise<number | null>;
}

function run(script: string, args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stdout: () => out, stderr: () => err };
}

async function start(dataDir: string, env: Record<string, string> = {}): Promise<Started> {
  const proc = run('src/main.ts', [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ...env });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const ready = proc.stdout().split('\n').find((l) => l.includes('"botlink is ready"'));
      if (ready) {
        clearInterval(timer);
        resolve(`http://127.0.0.1:${JSON.parse(ready).port}`);
      }
    }, 50);
    proc.exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`exited ${code}: ${proc.stderr()}`));
    });
  });
  return { child: proc.child, url, stdout: proc.stdout, exited: proc.exited };
}

async function stop(started: Started): Promise<number | null> {
  started.child.kill('SIGTERM');
  return started.exited;
}

describe('npm start on a fresh machine', { timeout: 60_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'botlink-start-'));
  let token = '';

  it('creates a first workspace and prints its owner token once', async () => {
    const first = await start(dataDir);
    const match = /Token:\s+(blt_\S+)/.exec(first.stdout());
    expect(match).not.toBeNull();
    token = match![1]!;
    const users = await fetch(`${first.url}/v1/users`, { headers: { authorization: `Bearer ${token}` } });
    expect(users.status).toBe(200);
    expect(((await users.json()) as { users: { role: string }[] }).users[0]!.role).toBe('owner');
    expect(await stop(first)).toBe(0);
  });

  it("prints the dashboard's address and the owner's invite link, with which the owner sets a password and signs in", async () => {
    const started = await start(mkdtempSync(join(tmpdir(), 'botlink-start-')));
    const out = started.stdout();
    // PORT=0 here, so PUBLIC_URL's default names port 0; the paths are what matters.
    expect(out).toMatch(/^ {2}Dashboard: +http:\/\/localhost:0\/dashboard$/m);
    const link = /^Sign in: +open (http:\/\/localhost:0\/dashboard\/invite#(bli_\S+))$/m.exec(out);
    expect(link).not.toBeNull();
    // The next steps start with knowledge (the bot knows nothing yet), and the sign-in link comes last.
    expect(out).toMatch(/^ {2}1\. Knowledge: add your website, a file or a page/m);
    expect(out.indexOf('Sign in:')).toBeGreaterThan(out.indexOf('Next steps'));
    expect(out.indexOf('Sign in:')).toBeGreaterThan(out.indexOf('Token:'));
    const invite = link![2]!;
    const post = (path: string, body: object) => fetch(`${started.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post('/v1/auth/password', { invite, password: 'a newcomer password' })).status).toBe(200);
    const signedIn = await post('/v1/auth/login', { email: 'owner@example.com', password: 'a newcomer password' });
    expect(signedIn.status).toBe(200);
    expect(((await signedIn.json()) as { user: { role: string } }).user.role).toBe('owner');
    await stop(started);
    const logLines = started.stdout().split('\n').filter((l) => l.startsWith('{'));
    expect(logLines.join('\n')).not.toContain(invite);
  });

  it('keeps its data across a restart and prints no token the second time', async () => {
    const second = await start(dataDir);
    expect(second.stdout()).not.toMatch(/blt_/);
    const res = await fetch(`${second.url}/v1/users`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(await stop(second)).toBe(0);
  });

  it('never writes the token into a log line', async () => {
    const third = await start(dataDir);
    await fetch(`${third.url}/v1/users`, { headers: { authorization: `Bearer ${token}` } });
    await stop(third);
    const logLines = third.stdout().split('\n').filter((l) => l.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(1);
    expect(logLines.join('\n')).not.toContain(token);
  });

  it('refuses a second process on the same DATA_DIR with a clear sentence', async () => {
    const holder = await start(dataDir);
    const second = run('src/main.ts', [], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir });
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toMatch(/is in use by another Botlink process \(pid \d+\)/);
    expect(await stop(holder)).toBe(0);
  });
});

describe('a wrong setting', { timeout: 60_000 }, () => {
  it('stops the start with one sentence naming it, exit 1', async () => {
    const proc = run('src/main.ts', [], { PORT: 'eighty' });
    expect(await proc.exited).toBe(1);
    expect(proc.stderr().trim()).toBe('botlink: PORT must be a whole number from 0 to 65535 (got "eighty").');
  });
});

describe('the CLI', { timeout: 60_000 }, () => {
  it('creates a workspace and prints the owner token as JSON', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'botlink-cli-'));
    const proc = run('src/cli.ts', ['workspace', 'create', '--name', 'Acme', '--owner', 'ops@acme.example', '--json'], { DATA_DIR: dataDir });
    expect(await proc.exited).toBe(0);
    const printed = JSON.parse(proc.stdout());
    expect(printed).toMatchObject({
      workspace: { name: 'Acme' },
      owner: { email: 'ops@acme.example', token: expect.stringMatching(/^blt_/), invite_url: expect.stringMatching(/^http:\/\/localhost:8080\/dashboard\/invite#bli_/) },
    });
    // The service started afterwards knows that owner, and creates no extra workspace.
    const service = await start(dataDir);
    expect(service.stdout()).not.toMatch(/Token:\s+blt_/);
    const res = await fetch(`${service.url}/v1/users`, { headers: { authorization: `Bearer ${printed.owner.token}` } });
    expect(res.status).toBe(200);
    await stop(service);
  });

  it('restores an owner of a workspace (restore-owner), and says so clearly for an unknown workspace', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'botlink-cli-'));
    const created = run('src/cli.ts', ['workspace', 'create', '--name', 'Acme', '--owner', 'ops@acme.example', '--json'], { DATA_DIR: dataDir });
    expect(await created.exited).toBe(0);
    const workspaceId = JSON.parse(created.stdout()).workspace.id as string;
    const restored = run('src/cli.ts', ['workspace', 'restore-owner', '--workspace', workspaceId, '--email', 'rescue@acme.example', '--json'], { DATA_DIR: dataDir });
    expect(await restored.exited).toBe(0);
    expect(JSON.parse(restored.stdout())).toMatchObject({ owner: { email: 'rescue@acme.example', created: true, token: expect.stringMatching(/^blt_/) } });
    const unknown = run('src/cli.ts', ['workspace', 'restore-owner', '--workspace', '00000000-0000-4000-8000-000000000000', '--email', 'a@b.example'], { DATA_DIR: dataDir });
    expect(await unknown.exited).toBe(1);
    expect(unknown.stderr()).toContain('The workspace was not found.');
  });

  it('explains its usage when an argument is missing (exit 2)', async () => {
    const proc = run('src/cli.ts', ['workspace', 'create', '--name', 'Acme'], { DATA_DIR: mkdtempSync(join(tmpdir(), 'botlink-cli-')) });
    expect(await proc.exited).toBe(2);
    expect(proc.stderr()).toContain('--owner must be an email address.');
  });
});
