/**
 * An unauthenticated flood (issue 11, defect 4): 1 MB nested JSON bodies without a token, 16 connections, against
 * `POST /v1/users`, while `/healthz` is timed once every 20 ms. Before the fix bodies were parsed before
 * authentication (~25 ms of event loop each) and `/healthz` went to p50 458 ms; now the 401 comes before the body is
 * read. The service runs as `node src/main.ts` on the embedded database, the flood in a process of its own, and the
 * `/healthz` probe in this one; 2 s of warm-up are not measured.
 */
import { fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchmarkResult } from './lib/benchmark.ts';
import { envNumber, textTable } from './lib/benchmark.ts';
import { summarize } from './lib/stats.ts';

export const name = 'auth-flood';

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

async function healthzTimes(url: string, ms: number): Promise<number[]> {
  const times: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const started = performance.now();
    const res = await fetch(`${url}/healthz`);
    await res.arrayBuffer();
    times.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return times;
}

export async function run(): Promise<BenchmarkResult> {
  const seconds = envNumber('FLOOD_SECONDS', 10, { min: 1 });
  const concurrency = envNumber('FLOOD_CONCURRENCY', 16, { min: 1 });
  const service = await startService();
  try {
    const quiet = await healthzTimes(service.url, 2_000);
    const flood = fork(new URL('./lib/flood-client.ts', import.meta.url), [], {
      execPath: process.execPath,
      execArgv: [],
      env: { ...process.env, FLOOD_URL: `${service.url}/v1/users`, FLOOD_CONCURRENCY: String(concurrency) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await once(flood, 'message');
    await healthzTimes(service.url, 2_000); // warm-up under load, not measured
    const loaded = await healthzTimes(service.url, seconds * 1_000);
    flood.send({ type: 'report' });
    const [report] = (await once(flood, 'message')) as [{ sent: number; statuses: Record<string, number> }];
    flood.disconnect();
    await once(flood, 'exit');

    const q = summarize(quiet);
    const l = summarize(loaded);
    const rate = report.sent / (seconds + 2);
    const non401 = Object.entries(report.statuses).filter(([status]) => status !== '401').reduce((n, [, c]) => n + c, 0);
    const rows = [
      ['/healthz p50 quiet (ms)', q.p50.toFixed(2)],
      ['/healthz p50 under flood (ms)', l.p50.toFixed(2)],
      ['/healthz p99 under flood (ms)', l.p99.toFixed(2)],
      ['flood bodies answered per second', rate.toFixed(0)],
      ['answers other than 401', String(non401)],
    ];
    // Target: the health check stays well under the 458 ms; 50 ms p99 is what a load balancer's probe tolerates.
    const status = non401 > 0 ? 'failed' : l.p99 <= 50 ? 'pass' : 'miss';
    return {
      status,
      table: textTable(['auth-flood', 'value'], rows),
      markdown: [
        `Unauthenticated 1 MB nested JSON bodies on ${concurrency} connections for ${seconds} s against \`POST /v1/users\` (embedded database), \`/healthz\` timed every 20 ms. Target: \`/healthz\` p99 ≤ 50 ms under the flood (before the fix: p50 458 ms).`,
        '',
        '| measure | value |',
        '|---|---|',
        ...rows.map(([k, v]) => `| ${k} | ${v} |`),
      ].join('\n'),
      data: {
        parameters: { seconds, concurrency, bodyBytes: 1024 * 1024 - 1024, depth: 500 },
        results: { quiet: q, loaded: l, sent: report.sent, statuses: report.statuses },
      },
    };
  } finally {
    await service.stop();
  }
}
