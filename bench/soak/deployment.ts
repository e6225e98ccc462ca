/**
 * The soak's deployment. One engine: the service as `npm start` runs it (`node src/main.ts`) on DATABASE_URL's
 * PostgreSQL or PGlite in a DATA_DIR. Several engines: each `node src/main.ts` on PostgreSQL through Debian's
 * pgbouncer in transaction mode (DATABASE_POOLER=transaction, LISTEN and migrations over DATABASE_DIRECT_URL), behind
 * Debian's HAProxy on loopback with a generated configuration (round robin, /readyz health checks every second, the
 * serving engine named in an `x-botlink-engine` answer header). A small probe is loaded into every engine
 * (bench/processes/soak-probe.ts) and reports its memory, event loop and CPU over IPC.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { migrate, openDatabase } from '../../db/database.ts';
import { startPgbouncer, type Pgbouncer } from '../../harness/pgbouncer.ts';
import { freePort, startServiceProcess, type ServiceProcess } from '../../harness/service-process.ts';
import { caBundle } from '../lib/https-peer.ts';
import type { ProbeMessage } from '../processes/soak-probe.ts';
import { ADMIN_TOKEN, APP_SECRET, BRIDGE_TOKEN, ENGINE_HEADER } from './load.ts';

export const HAPROXY = '/usr/sbin/haproxy';
/** Server connections pgbouncer keeps to PostgreSQL for all the engines together. */
const PGBOUNCER_POOL_SIZE = 20;

export type Probe = ReturnType<typeof startProbe>;

export function startProbe(service: ServiceProcess) {
  const child = service.child;
  const ask = <T extends ProbeMessage['type']>(message: { type: string; gc?: boolean }, reply: T, timeoutMs = 15_000) =>
    new Promise<Extract<ProbeMessage, { type: T }> | null>((resolve) => {
      if (!child.connected) return resolve(null);
      const timer = setTimeout(() => {
        child.off('message', onMessage);
        resolve(null);
      }, timeoutMs);
      const onMessage = (m: ProbeMessage) => {
        if (m.type !== reply) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(m as Extract<ProbeMessage, { type: T }>);
      };
      child.on('message', onMessage);
      child.send(message);
    });
  return {
    start: () => child.connected && child.send({ type: 'start' }),
    sample: (gc: boolean) => ask({ type: 'sample', gc }, 'sample'),
    summary: () => ask({ type: 'summary' }, 'summary'),
  };
}

/** One engine slot: its current process, and the CPU its earlier processes (killed ones) used in the measured part. */
export interface Engine {
  name: string;
  port: number;
  service: ServiceProcess;
  probe: Probe;
  /** CPU (µs) of this slot's processes before the current one, within the measured part. */
  cpuBeforeMicros: number;
  /** The current process's CPU when the measured part started (or when it started, if later). */
  cpuAtStartMicros: number;
}

export interface Deployment {
  /** Where the outside world connects: the engine, or HAProxy in front of the engines. */
  url: string;
  engines: Engine[];
  database: 'postgres' | 'pglite';
  /** postgres:// URL of a direct connection to the run's database (after the run: what it holds). */
  directUrl: string | null;
  dataDir: string;
  describe: string;
  /** SIGKILL one engine (its in-flight work is left to the others), and start it again on its port. */
  kill(index: number): Promise<void>;
  restart(index: number): Promise<void>;
  /** SIGTERM every engine; the exit codes of the last processes. */
  stop(): Promise<(number | null)[]>;
  /** After stop: the proxies down, the run's database dropped unless kept. */
  close(keep: boolean): Promise<void>;
}

function engineEnv(work: string, graph: string): Record<string, string> {
  return {
    MASTER_KEY: randomBytes(32).toString('hex'),
    ADMIN_TOKEN,
    BRIDGE_TOKEN,
    OUTBOUND_ALLOW: '127.0.0.1/32',
    WHATSAPP_APP_SECRET: APP_SECRET,
    WHATSAPP_VERIFY_TOKEN: 'soak-verify-token',
    WHATSAPP_GRAPH_URL: `${graph}/v21.0`,
    NODE_EXTRA_CA_CERTS: caBundle(work),
    LOG_LEVEL: 'warn',
  };
}

async function startEngine(name: string, port: number, env: Record<string, string>): Promise<Engine> {
  const service = await startServiceProcess({
    port,
    ipc: true,
    execArgv: ['--expose-gc', `--import=${new URL('../processes/soak-probe.ts', import.meta.url).href}`],
    env,
    readyTimeoutMs: 120_000,
  });
  return { name, port, service, probe: startProbe(service), cpuBeforeMicros: 0, cpuAtStartMicros: 0 };
}

function haproxyConfig(port: number, engines: { name: string; port: number }[]): string {
  return [
    'global',
    // Two descriptors per proxied connection; the machine's open-file limit allows this many.
    '  maxconn 8000',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 120s',
    '  timeout server 120s',
    // A phone call is one WebSocket for the whole call.
    '  timeout tunnel 2h',
    'frontend botlink',
    `  bind 127.0.0.1:${port}`,
    '  default_backend engines',
    'backend engines',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    // The engines trust it (TRUST_PROXY=loopback), as a real deployment would (docs/operations.md, "Behind a load balancer").
    '  option forwardfor',
    // A request refused at connect (an engine just killed, not yet marked down) goes to another engine: nothing of it
    // was sent, so this is safe for every method. A request already sent is never sent twice.
    '  retries 2',
    '  retry-on conn-failure',
    '  option redispatch 1',
    '  http-check expect status 200',
    '  default-server inter 1s fall 2 rise 1',
    `  http-response set-header ${ENGINE_HEADER} %[srv_name]`,
    ...engines.map((e) => `  server ${e.name} 127.0.0.1:${e.port} check`),
    '',
  ].join('\n');
}

async function startHaproxy(work: string, port: number, engines: { name: string; port: number }[]): Promise<ChildProcess> {
  if (!existsSync(HAPROXY)) throw new Error(`Several engines run behind HAProxy: install Debian's package first (apt-get install -y haproxy); ${HAPROXY} is missing.`);
  const file = join(work, 'haproxy.cfg');
  writeFileSync(file, haproxyConfig(port, engines));
  const child = spawn(HAPROXY, ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4_000)));
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`HAProxy exited: ${stderr}`);
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false);
    if (ok) return child;
    if (Date.now() > deadline) throw new Error(`HAProxy did not answer within 15 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function startDeployment(options: { engines: number; databaseUrl: string | null; work: string; graph: string }): Promise<Deployment> {
  const { work } = options;
  const dataDir = join(work, 'data');
  const env = engineEnv(work, options.graph);
  if (options.engines === 1) {
    const port = await freePort();
    const engine = await startEngine('e0', port, { ...env, ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}), DATA_DIR: dataDir });
    return {
      url: engine.service.url,
      engines: [engine],
      database: options.databaseUrl ? 'postgres' : 'pglite',
      directUrl: options.databaseUrl,
      dataDir,
      describe: `one engine (node src/main.ts) on ${options.databaseUrl ? 'PostgreSQL' : `PGlite in ${dataDir}`}`,
      kill: () => Promise.reject(new Error('one engine: nothing takes over')),
      restart: () => Promise.reject(new Error('one engine: nothing takes over')),
      stop: async () => [await engine.service.stop()],
      close: async () => {},
    };
  }

  // Several engines: a database of the run's own (pgbouncer does not pass a schema on), pgbouncer, the engines, HAProxy.
  const base = options.databaseUrl ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `soak_${randomBytes(4).toString('hex')}`;
  const admin = await openDatabase({ url: base, poolSize: 1 });
  await sql`create database ${sql.id(name)}`.execute(admin.db);
  const direct = new URL(base);
  direct.pathname = `/${name}`;
  const migrating = await openDatabase({ url: direct.href, poolSize: 1 });
  await migrate(migrating.db);
  await migrating.close();
  let pgbouncer: Pgbouncer | undefined;
  let haproxy: ChildProcess | undefined;
  const engines: Engine[] = [];
  try {
    pgbouncer = await startPgbouncer({ host: direct.hostname, port: Number(direct.port || 5432), user: decodeURIComponent(direct.username || 'postgres') }, { poolSize: PGBOUNCER_POOL_SIZE });
    const pooled = { ...env, DATABASE_URL: pgbouncer.url(name), DATABASE_POOLER: 'transaction', DATABASE_DIRECT_URL: direct.href, TRUST_PROXY: 'loopback' };
    for (let i = 0; i < options.engines; i++) engines.push(await startEngine(`e${i}`, await freePort(), pooled));
    const port = await freePort();
    haproxy = await startHaproxy(work, port, engines);
    const proxy = haproxy;
    const bouncer = pgbouncer;
    return {
      url: `http://127.0.0.1:${port}`,
      engines,
      database: 'postgres',
      directUrl: direct.href,
      dataDir,
      describe: `${options.engines} engines (node src/main.ts each) behind HAProxy on loopback, on PostgreSQL through pgbouncer in transaction mode (${PGBOUNCER_POOL_SIZE} server connections; LISTEN over a direct connection)`,
      async kill(index) {
        const engine = engines[index]!;
        const last = await engine.probe.sample(false);
        engine.cpuBeforeMicros += Math.max(0, (last?.cpuMicros ?? 0) - engine.cpuAtStartMicros);
        await engine.service.kill();
      },
      async restart(index) {
        const old = engines[index]!;
        const fresh = await startEngine(old.name, old.port, pooled);
        fresh.cpuBeforeMicros = old.cpuBeforeMicros;
        fresh.cpuAtStartMicros = (await fresh.probe.sample(false))?.cpuMicros ?? 0;
        fresh.probe.start();
        engines[index] = fresh;
      },
      stop: () => Promise.all(engines.map((e) => e.service.stop())),
      async close(keep) {
        proxy.kill('SIGTERM');
        await once(proxy, 'exit');
        await bouncer.stop();
        if (!keep) await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin.db);
        await admin.close();
      },
    };
  } catch (err) {
    for (const e of engines) await e.service.kill();
    haproxy?.kill('SIGKILL');
    await pgbouncer?.stop();
    await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin.db);
    await admin.close();
    throw err;
  }
}
