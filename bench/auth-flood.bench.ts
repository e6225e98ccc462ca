/**
 * An unauthenticated flood: 1 MB nested JSON bodies without a token, 16 connections, against
 * `POST /v1/users`, while `/healthz` is timed once every 20 ms. Before the fix bodies were parsed before
 * authentication (~25 ms of event loop each) and `/healthz` went to p50 458 ms; now the 401 comes before the body is
 * read. The service runs as `node src/main.ts` on the embedded database, the flood in a process of its own, and the
 * `/healthz` probe in this one; 2 s of warm-up are not measured. Any answer to the flood other than 401, and any
 * `/healthz` that fails or is not a 200, make the run invalid. Target: `/healthz` p99 ≤ 50 ms under the flood.
 */
import { fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from './lib/benchmark.ts';
import { envNumber } from './lib/benchmark.ts';
import { summarize } from './lib/stats.ts';

export const name = 'auth-flood';
export const title = 'An unauthenticated flood against the health check';

/** What a load balancer's health probe tolerates, ms. */
const TARGET_HEALTHZ_P99_MS = 50;

/** FLOOD_SERVICE_ROOT: another checkout to run as the service (an A/B against an older commit); default this one. */
const root = process.env.FLOOD_SERVICE_ROOT ?? new URL('../', import.meta.url).pathname;

async function startService(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', DATA_DIR: mkdtempSync(join(tmpdir(), 'botlink-flood-')), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const ready = out.split('\n').find((l) => l.includes('"botlink is ready"'));
      if (ready) resolve(`http://127.0.0.1:${(JSON.parse(ready) as { port: number }).port}`);
    });
    child.once('exit', (code) => reject(new Error(`the service exited early (code ${code}): ${out}`)));
  });
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** `/healthz` timed every 20 ms; a probe that fails or is not a 200 is counted in `failed`, not timed. */
async function healthzTimes(url: string, ms: number, failed: Map<string, number>): Promise<number[]> {
  const times: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const started = performance.now();
    let outcome: string;
    try {
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      outcome = res.status === 200 ? 'ok' : `HTTP ${res.status}`;
    } catch (err) {
      outcome = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    }
    if (outcome === 'ok') times.push(performance.now() - started);
    else failed.set(outcome, (failed.get(outcome) ?? 0) + 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return times;
}

export async function run(): Promise<RunResult> {
  const seconds = envNumber('FLOOD_SECONDS', 10, { min: 1 });
  const concurrency = envNumber('FLOOD_CONCURRENCY', 16, { min: 1 });
  const service = await startService();
  try {
    const failed = new Map<string, number>();
    const quiet = await healthzTimes(service.url, 2_000, failed);
    const flood = fork(new URL('./lib/flood-client.ts', import.meta.url), [], {
      execPath: process.execPath,
      execArgv: [],
      env: { ...process.env, FLOOD_URL: `${service.url}/v1/users`, FLOOD_CONCURRENCY: String(concurrency) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await once(flood, 'message');
    await healthzTimes(service.url, 2_000, failed); // warm-up under load, not timed
    const loaded = await healthzTimes(service.url, seconds * 1_000, failed);
    flood.send({ type: 'report' });
    const [report] = (await once(flood, 'message')) as [{ sent: number; statuses: Record<string, number> }];
    flood.disconnect();
    await once(flood, 'exit');

    const q = summarize(quiet);
    const l = summarize(loaded);
    const rate = report.sent / (seconds + 2);
    const non401 = Object.entries(report.statuses).filter(([status]) => status !== '401').reduce((n, [, c]) => n + c, 0);
    const others = Object.entries(report.statuses).filter(([status]) => status !== '401');
    const failedTotal = [...failed.values()].reduce((n, c) => n + c, 0);
    const invalid = [
      ...(non401 > 0 ? [`${non401} flood requests were answered other than 401: ${others.map(([status, n]) => `${n} × ${status}`).join(', ')}`] : []),
      ...(failedTotal > 0 ? [`${failedTotal} /healthz probes failed: ${[...failed].map(([why, n]) => `${n} × ${why}`).join('; ')}`] : []),
    ];
    return {
      metrics: [
        { key: 'healthz_quiet_p50_ms', label: '/healthz p50, quiet', unit: 'ms', value: q.p50 },
        { key: 'healthz_flood_p50_ms', label: '/healthz p50 under the flood', unit: 'ms', value: l.p50 },
        {
          key: 'healthz_flood_p99_ms',
          label: '/healthz p99 under the flood',
          unit: 'ms',
          value: l.p99,
          target: { op: '<=', value: TARGET_HEALTHZ_P99_MS },
        },
        { key: 'flood_bodies_per_second', label: 'flood bodies answered', unit: '/s', value: rate },
        { key: 'healthz_probes', label: '/healthz probes timed under the flood', unit: '', value: l.count },
      ],
      invalid,
      setup:
        `Unauthenticated 1 MB nested JSON bodies (depth 500) on ${concurrency} connections from a load generator in its own ` +
        `process for 2 s of warm-up and ${seconds} s measured against \`POST /v1/users\` of \`node src/main.ts\` (embedded ` +
        `database, its own process); \`/healthz\` timed every 20 ms from the bench's process, 2 s quiet before the flood.`,
      parameters: { seconds, concurrency, bodyBytes: 1024 * 1024 - 1024, depth: 500 },
      details: { quiet: q, loaded: l, sent: report.sent, statuses: report.statuses },
    };
  } finally {
    await service.stop();
  }
}
