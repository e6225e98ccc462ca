/**
 * Debian's pgbouncer in transaction mode in front of the test PostgreSQL, as a managed "pooled" URL is (.ci/run
 * installs the package), for the tests (test/db/pooler.test.ts) and the benchmarks (bench/live-events.bench.ts, the
 * soak). It refuses to run as root, so as root it runs as the `postgres` user.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PGBOUNCER = '/usr/sbin/pgbouncer';

export interface Pgbouncer {
  port: number;
  /** postgres:// URL of `database` through the pooler. */
  url(database: string): string;
  log(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function accepting(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' }, () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** pgbouncer in transaction mode in front of `upstream` (host:port of PostgreSQL, trust auth), every database. */
export async function startPgbouncer(upstream: { host: string; port: number; user: string }, options: { poolSize?: number } = {}): Promise<Pgbouncer> {
  const dir = mkdtempSync(join(tmpdir(), 'botlink-pgbouncer-'));
  const port = await freePort();
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(join(dir, 'users.txt'), `"${upstream.user}" ""\n`);
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${upstream.host} port=${upstream.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 500',
      `default_pool_size = ${options.poolSize ?? 8}`,
      // The test schemas are chosen with a startup option, which pgbouncer does not pass on; these tests use a database.
      'ignore_startup_parameters = extra_float_digits,options',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  const root = process.getuid?.() === 0;
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
    for (const f of ['pgbouncer.ini', 'users.txt']) chownSync(join(dir, f), uid, gid);
  }
  chmodSync(dir, 0o755);
  const child: ChildProcess = root ? spawn('runuser', ['-u', 'postgres', '--', PGBOUNCER, ini], { stdio: 'ignore' }) : spawn(PGBOUNCER, [ini], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await accepting(port, 10_000);
  const log = () => {
    try {
      return readFileSync(join(dir, 'pgbouncer.log'), 'utf8');
    } catch {
      return '';
    }
  };
  return {
    port,
    url: (database) => `postgres://${upstream.user}@127.0.0.1:${port}/${database}`,
    log,
    async stop() {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
