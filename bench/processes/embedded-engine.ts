/**
 * The engine of the embedded-capacity benchmark, in a process of its own (bench/embedded-capacity.bench.ts forks it):
 * the real service as `npm start` runs it without DATABASE_URL, that is PGlite on disk in a fresh DATA_DIR, with one
 * workspace whose integrator is the benchmark's loopback HTTPS child and whose phone number the callers dial.
 *
 * IPC: → {type:'ready', url, bridgeToken}; ← {type:'phase'} starts a measured phase (event-loop delay, CPU, RSS peak
 * reset); ← {type:'stats'} → {type:'stats', …} (the phase so far, and the admission metrics' current values). It
 * exits when the parent goes away (after stopping the service, so PGlite closes its files).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { UNBOUNDED } from '../../src/admission/admission.ts';
import { startService } from '../../src/app/service.ts';

export interface EngineConfig {
  integratorOrigin: string;
  number: string;
  /** pino level of the engine's log (its `warn` lines about shedding go to stderr); default 'warn'. */
  logLevel?: string;
  /** Admission control off (the capacity ramp measures what the engine does without it); default: the embedded bounds. */
  unbounded?: boolean;
}

export interface EngineStats {
  type: 'stats';
  cpuMicros: number;
  seconds: number;
  rssMiB: number;
  rssPeakMiB: number;
  heapMiB: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** The session runtime's share of each turn of the phase (`runtime.handleMessage`, the integrator's time included), ms. */
  runtimeMs: { p50: number; p99: number; count: number };
  /** The bot-link exchange as the phase's completed turns recorded it (ms), and the turns by endpoint-health decision. */
  botlinkMs: { p50: number; p99: number; count: number };
  decisions: Record<string, number>;
  /** The admission metrics (src/metrics.ts) as the engine's /metrics shows them: name{labels} → value. */
  metrics: Record<string, number>;
}

/** `rssMiB`: the engine's RSS once started, migrated and configured, before any call. */
export type EngineMessage = { type: 'ready'; url: string; bridgeToken: string; rssMiB: number } | EngineStats;

/**
 * EMBEDDED_ENGINE_QUERY_STATS=1: time PGlite's own (synchronous) execution per statement, by its SQL's first words,
 * and print the table when the engine exits: where the embedded database's share of the CPU goes.
 */
async function countQueries(): Promise<() => void> {
  const { PGlite } = await import('@electric-sql/pglite');
  const proto = PGlite.prototype as unknown as { execProtocolRawSync: (message: Uint8Array) => unknown };
  const original = proto.execProtocolRawSync;
  const byStatement = new Map<string, { calls: number; ms: number }>();
  const names = new Map<string, string>();
  proto.execProtocolRawSync = function (this: unknown, message: Uint8Array) {
    const started = performance.now();
    try {
      return original.call(this, message);
    } finally {
      const text = Buffer.from(message).toString('latin1');
      const sqlText = /(select|insert|update|delete|with|begin|commit|rollback)\b[^\0]{0,70}/i.exec(text)?.[0].replace(/\s+/g, ' ');
      // A named statement is parsed once (P: name, SQL) and then only bound and executed (B: portal, name): the
      // executions are labelled with the SQL their name was parsed with.
      const kind = text.charAt(0);
      if (kind === 'P' && sqlText) names.set(text.slice(5).split('\0', 1)[0]!, sqlText);
      const bound = kind === 'B' ? names.get(text.slice(5).split('\0', 2)[1] ?? '') : undefined;
      const label = sqlText ?? (bound ? `(bind+execute) ${bound}` : `(protocol ${kind})`);
      const entry = byStatement.get(label) ?? { calls: 0, ms: 0 };
      entry.calls++;
      entry.ms += performance.now() - started;
      byStatement.set(label, entry);
    }
  };
  return () => {
    const rows = [...byStatement].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25);
    for (const [label, { calls, ms }] of rows) process.stderr.write(`${ms.toFixed(0).padStart(8)} ms ${String(calls).padStart(7)} calls  ${label}\n`);
  };
}

async function main(): Promise<void> {
  const printQueries = process.env.EMBEDDED_ENGINE_QUERY_STATS === '1' ? await countQueries() : () => {};
  const config = JSON.parse(process.env.EMBEDDED_ENGINE_CONFIG ?? '{}') as EngineConfig;
  const testCa = readFileSync(new URL('../../test/fixtures/tls/ca.pem', import.meta.url), 'utf8');
  setDefaultCACertificates([...getCACertificates('default'), testCa]);
  const dataDir = mkdtempSync(join(tmpdir(), 'botlink-bench-embedded-'));
  const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;
  const bridgeToken = `bench-bridge-${randomBytes(16).toString('hex')}`;
  const serviceConfig = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    BRIDGE_TOKEN: bridgeToken,
    OUTBOUND_ALLOW: '127.0.0.1/32',
    LOG_LEVEL: config.logLevel ?? 'warn',
  });
  const logger = createLogger(serviceConfig.logLevel);
  const service = await startService({ config: serviceConfig, logger, drainMs: 5_000, ...(config.unbounded ? { admission: UNBOUNDED } : {}) });
  const api = async (method: string, path: string, token: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(service.url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const created = await api('POST', '/v1/admin/workspaces', adminToken, { name: 'Bench', owner_email: 'owner@bench.example' });
  const owner = (created.owner as { token: string }).token;
  await api('PUT', '/v1/integration', owner, { endpoint_url: `${config.integratorOrigin}/botlink/channel` });
  await api('PUT', '/v1/phone', owner, { numbers: [config.number] });

  // The runtime's share of each turn: the channels call the service's runtime object, looked up at each call.
  let runtimeMs: number[] = [];
  const handleMessage = service.runtime.handleMessage.bind(service.runtime);
  service.runtime.handleMessage = async (message) => {
    const started = performance.now();
    try {
      return await handleMessage(message);
    } finally {
      runtimeMs.push(performance.now() - started);
    }
  };
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  let phaseCpu = process.cpuUsage();
  let phaseStarted = performance.now();
  let phaseStartedAt = new Date();
  let rssPeak = 0;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 250);
  sampler.unref();

  const admissionMetrics = async (): Promise<Record<string, number>> => {
    const res = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } });
    const text = await res.text();
    const values: Record<string, number> = {};
    for (const line of text.split('\n')) {
      if (!line.startsWith('botlink_admission_')) continue;
      const [name, value] = line.split(' ');
      values[name!] = Number(value);
    }
    return values;
  };

  process.on('message', (message: { type: string; count?: number }) => {
    if (message.type === 'phase') {
      loopDelay.reset();
      loopDelay.enable();
      phaseCpu = process.cpuUsage();
      phaseStarted = performance.now();
      phaseStartedAt = new Date();
      rssPeak = process.memoryUsage.rss();
      runtimeMs = [];
    } else if (message.type === 'stats') {
      const cpu = process.cpuUsage(phaseCpu);
      const m = process.memoryUsage();
      rssPeak = Math.max(rssPeak, m.rss);
      const sorted = runtimeMs.sort((a, b) => a - b);
      const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
      const turns = service.database.db
        .selectFrom('session_turns')
        .select(['timings', 'botlink'])
        .where('status', '=', 'completed')
        .where('started_at', '>=', phaseStartedAt)
        .execute();
      void Promise.all([admissionMetrics(), turns]).then(([metrics, rows]) => {
        const botlink = rows.map((r) => (r.timings as { botlink?: number }).botlink ?? Number.NaN).sort((a, b) => a - b);
        const decisions: Record<string, number> = {};
        for (const r of rows) {
          const decision = (r.botlink as { endpoint?: { decision?: string } } | null)?.endpoint?.decision ?? 'none';
          decisions[decision] = (decisions[decision] ?? 0) + 1;
        }
        const pick = (values: number[], p: number) => values[Math.min(values.length - 1, Math.max(0, Math.ceil((p / 100) * values.length) - 1))] ?? Number.NaN;
        process.send!({
          type: 'stats',
          cpuMicros: cpu.user + cpu.system,
          seconds: (performance.now() - phaseStarted) / 1000,
          rssMiB: m.rss / 2 ** 20,
          rssPeakMiB: rssPeak / 2 ** 20,
          heapMiB: m.heapUsed / 2 ** 20,
          loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
          loopDelayMaxMs: loopDelay.max / 1e6,
          runtimeMs: { p50: at(50), p99: at(99), count: sorted.length },
          botlinkMs: { p50: pick(botlink, 50), p99: pick(botlink, 99), count: botlink.length },
          decisions,
          metrics,
        } satisfies EngineStats);
      });
    }
  });
  process.on('disconnect', () => {
    clearInterval(sampler);
    printQueries();
    void service
      .stop()
      .catch(() => {})
      .finally(() => {
        rmSync(dataDir, { recursive: true, force: true });
        process.exit(0);
      });
  });
  process.send!({ type: 'ready', url: service.url, bridgeToken, rssMiB: process.memoryUsage.rss() / 2 ** 20 } satisfies EngineMessage);
}

if (process.send) {
  main().catch((err: unknown) => {
    process.stderr.write(`embedded engine failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
