/**
 * Knowledge from a shop's website (docs/knowledge.md, "Websites and files"): a site of KNOWLEDGE_SITES_BENCH_PAGES
 * (200) pages with a sitemap and robots.txt, served over loopback HTTPS by a process of its own
 * (bench/processes/knowledge-site.ts: bike-shop guides and products from bench/lib/shop-corpus.ts inside navigation,
 * a cookie banner and a footer; ETag and Last-Modified on every page, 304 to a matching conditional request), added
 * through the API as a sitemap source and synced fully by one engine (bench/processes/engine-process.ts: the service in
 * a process of its own, whose RSS and CPU are read there), then synced again with nothing changed.
 *
 * Each phase is timed from the request (POST /v1/knowledge/sources, then POST /v1/knowledge/sources/{id}/sync) to the
 * source's status "done" as GET /v1/knowledge/sources/{id} reports it, asked every 100 ms: what an owner waits, the
 * scheduler's pick-up included. The engine's RSS is read at the start, every second and at the end of each phase.
 * A third phase syncs again KNOWLEDGE_SITES_BENCH_REPEATS (20) times with the site's ETag and Last-Modified turned off
 * (a server that sends every page in full, as many do): nothing changed still, so only the content hash tells, and
 * every page is read and extracted each time. Whether memory stays flat over repeated syncs: the engine's heap used
 * after each sync saws up and down with V8's major collections, so its floor (the lowest in the first half of the
 * syncs, then in the second) is what a leak would raise; RSS after the first and the last shows where the process
 * settles.
 *
 * The engine reads pages in its extraction worker thread (src/knowledge/sources/extraction-pool.ts, a heap of at most
 * 256 MB): the event-loop delay is the engine's own loop's (what a phone turn on it would wait), and the engine's RSS
 * includes the worker's heap.
 *
 * Targets: full sync ≤ 60 s, re-sync with nothing changed ≤ 10 s, with conditional requests and without (issue 35, on
 * 2 cores). Reported: RSS before, peak and after; pages the site sent in full during the re-sync (a re-sync that asks
 * conditionally gets 304s). A sync that fails, keeps another number of pages than the site has, or skips any, makes
 * the run invalid.
 *
 * KNOWLEDGE_SITES_BENCH_PAGES (200), KNOWLEDGE_SITES_BENCH_REPEATS (20), KNOWLEDGE_SITES_BENCH_DATABASE (`postgres`, or `pglite`: in memory in the engine),
 * KNOWLEDGE_SITES_BENCH_TIMEOUT_SECONDS (300, a phase that takes longer is invalid), KNOWLEDGE_SITES_BENCH_NODE_FLAGS
 * (the engine's Node flags, for investigations: `--trace-gc`), BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test).
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { envNumber, progress, type Metric, type RunResult } from './lib/benchmark.ts';
import { prepareBenchDatabase, type BenchDatabase } from './lib/bench-database.ts';
import { nextMessage } from './lib/child-message.ts';
import { round } from './lib/stats.ts';
import { startEngineProcess, type EngineProcess, type EngineReport } from './processes/engine-process.ts';
import type { SiteStats } from './processes/knowledge-site.ts';

export const name = 'knowledge-sites';
export const title = "Knowledge from a shop's website: a 200-page site synced, then synced again";

const FULL_TARGET_S = 60;
const RESYNC_TARGET_S = 10;
const POLL_MS = 100;

type FromSite = { type: 'listening'; port: number } | SiteStats;

interface Phase {
  seconds: number;
  source: Record<string, unknown>;
  engine: EngineReport;
  site: SiteStats;
  /** Statuses seen while polling, in order, each once. */
  seen: string[];
}

export async function run(): Promise<RunResult> {
  const parameters = {
    pages: envNumber('KNOWLEDGE_SITES_BENCH_PAGES', 200, { min: 1 }),
    repeats: envNumber('KNOWLEDGE_SITES_BENCH_REPEATS', 20, { min: 2 }),
    database: (process.env.KNOWLEDGE_SITES_BENCH_DATABASE ?? 'postgres') as 'postgres' | 'pglite',
    timeoutSeconds: envNumber('KNOWLEDGE_SITES_BENCH_TIMEOUT_SECONDS', 300, { min: 1 }),
    pollMs: POLL_MS,
  };
  if (parameters.database !== 'postgres' && parameters.database !== 'pglite') {
    throw new RangeError(`KNOWLEDGE_SITES_BENCH_DATABASE must be postgres or pglite, got ${JSON.stringify(parameters.database)}`);
  }
  const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const load = { start: round(loadavg()[0]!, 2), end: 0 };
  const site = fork(new URL('./processes/knowledge-site.ts', import.meta.url), [], {
    execPath: process.execPath,
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, SITE_PAGES: String(parameters.pages) },
  });
  const siteExited = once(site, 'exit');
  const fromSite = <T extends FromSite['type']>(type: T) => nextMessage<FromSite, T>(site, type, 'the site process');
  const siteStats = () => {
    const reply = fromSite('stats');
    site.send({ type: 'stats' });
    return reply;
  };
  let database: BenchDatabase | undefined;
  let engine: EngineProcess | undefined;
  const invalid: string[] = [];
  let full: Phase | undefined;
  let resync: Phase | undefined;
  const resyncsFull: Phase[] = [];
  try {
    const { port } = await fromSite('listening');
    const origin = `https://127.0.0.1:${port}`;
    if (parameters.database === 'postgres') database = await prepareBenchDatabase(url, 'bench_sites', { pooler: false });
    const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;
    engine = await startEngineProcess({
      env: {
        PORT: '0',
        HOST: '127.0.0.1',
        MASTER_KEY: randomBytes(32).toString('hex'),
        ADMIN_TOKEN: adminToken,
        OUTBOUND_ALLOW: '127.0.0.1/32',
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      },
      database: database ? database.engine(8) : null,
      instanceId: 'bench-sites-engine',
      // For investigations (`--trace-gc`, `--max-old-space-size=…`): not part of a recorded run.
      nodeFlags: (process.env.KNOWLEDGE_SITES_BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean),
    });
    const call = api(engine.url);
    const created = await call('POST', '/v1/admin/workspaces', adminToken, { name: 'Bench Bikes', owner_email: 'owner@bench-bikes.example' });
    const owner = String(created.owner.token);

    progress(name, `full sync of ${parameters.pages} pages from ${origin}/sitemap.xml`);
    await siteStats();
    engine.record();
    let started = performance.now();
    const added = await call('POST', '/v1/knowledge/sources', owner, { kind: 'sitemap', url: `${origin}/sitemap.xml`, schedule: 'manual' });
    const id = String(added.source.id);
    let waited = await until(call, owner, id, parameters.timeoutSeconds, () => true);
    full = { seconds: (performance.now() - started) / 1000, ...waited, engine: await engine.report(), site: await siteStats() };
    progress(name, `full sync: ${round(full.seconds, 1)} s, ${String(full.source.pages)} pages; RSS ${full.engine.rssMiB.start} → ${full.engine.rssMiB.end} MiB (peak ${full.engine.rssMiB.peak})`);
    check('full sync', full, parameters.pages, invalid);

    const previous = full.source.last_synced_at;
    engine.record();
    started = performance.now();
    await call('POST', `/v1/knowledge/sources/${id}/sync`, owner);
    waited = await until(call, owner, id, parameters.timeoutSeconds, (s) => s.last_synced_at !== previous);
    resync = { seconds: (performance.now() - started) / 1000, ...waited, engine: await engine.report(), site: await siteStats() };
    progress(name, `re-sync: ${round(resync.seconds, 1)} s; the site sent ${resync.site.full} pages in full and ${resync.site.notModified} times 304`);
    check('re-sync', resync, parameters.pages, invalid);

    // The same, from a server without conditional requests: every page comes in full, only the hash says it is the same.
    site.send({ type: 'conditional', on: false });
    let before = resync.source.last_synced_at;
    for (let i = 1; i <= parameters.repeats; i++) {
      engine.record();
      started = performance.now();
      await call('POST', `/v1/knowledge/sources/${id}/sync`, owner);
      waited = await until(call, owner, id, parameters.timeoutSeconds, (s) => s.last_synced_at !== before);
      const phase: Phase = { seconds: (performance.now() - started) / 1000, ...waited, engine: await engine.report(), site: await siteStats() };
      resyncsFull.push(phase);
      before = phase.source.last_synced_at;
      progress(name, `re-sync ${i} without conditional requests: ${round(phase.seconds, 1)} s; the site sent ${phase.site.full} pages in full; RSS ${phase.engine.rssMiB.end} MiB, heap ${phase.engine.heapMiB} MiB`);
      check(`re-sync ${i} without conditional requests`, phase, parameters.pages, invalid);
    }
    load.end = round(loadavg()[0]!, 2);
  } catch (err) {
    invalid.push(`The run stopped: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    if (site.connected) site.disconnect();
    await siteExited;
    await engine?.stop();
    await database?.drop();
  }
  return summarize(parameters, full, resync, resyncsFull, invalid, load);
}

/** A JSON call to the engine; anything but 2xx throws with the answer's text. */
function api(base: string) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return async (method: string, path: string, token: string, body?: unknown): Promise<any> => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  };
}

/** Polls the source until it is done or failed and `also` holds; the statuses seen on the way. */
async function until(
  call: ReturnType<typeof api>,
  token: string,
  id: string,
  timeoutSeconds: number,
  also: (source: Record<string, unknown>) => boolean,
): Promise<{ source: Record<string, unknown>; seen: string[] }> {
  const deadline = performance.now() + timeoutSeconds * 1000;
  const seen: string[] = [];
  for (;;) {
    const source = (await call('GET', `/v1/knowledge/sources/${id}`, token)) as Record<string, unknown>;
    const status = String(source.status);
    if (seen.at(-1) !== status) seen.push(status);
    if ((status === 'done' || status === 'failed') && also(source)) return { source, seen };
    if (performance.now() > deadline) throw new Error(`the source was still "${status}" after ${timeoutSeconds} s`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function check(phase: string, p: Phase, pages: number, invalid: string[]): void {
  if (p.source.status !== 'done') invalid.push(`The ${phase} ended "${String(p.source.status)}": ${String(p.source.error ?? 'no reason given')}.`);
  if (p.source.pages !== pages) invalid.push(`The ${phase} kept ${String(p.source.pages)} pages of the site's ${pages}.`);
  const skipped = Array.isArray(p.source.skipped) ? (p.source.skipped as { url: string; reason: string }[]) : [];
  if (skipped.length > 0) invalid.push(`The ${phase} skipped ${skipped.length} pages (the first: ${skipped[0]!.url}: ${skipped[0]!.reason}).`);
}

function summarize(
  parameters: { pages: number; repeats: number; database: string; timeoutSeconds: number; pollMs: number },
  full: Phase | undefined,
  resync: Phase | undefined,
  resyncsFull: Phase[],
  invalid: string[],
  load: { start: number; end: number },
): RunResult {
  const percentOfCore = (r: EngineReport) => round(r.cpuMicros / 1e4 / Math.max(r.seconds, 1e-9), 0);
  const metrics: Metric[] = [];
  if (full) {
    metrics.push(
      { key: 'full_sync_s', label: `full sync of ${parameters.pages} pages, from the request to "done"`, unit: 's', value: round(full.seconds, 2), digits: 1, target: { op: '<=', value: FULL_TARGET_S } },
      { key: 'pages_kept', label: 'pages kept', unit: '', value: Number(full.source.pages ?? 0), target: { op: '=', value: parameters.pages } },
      { key: 'full_rss_start_mib', label: 'engine RSS before the full sync', unit: 'MiB', value: full.engine.rssMiB.start },
      { key: 'full_rss_peak_mib', label: 'engine RSS, peak during the full sync', unit: 'MiB', value: full.engine.rssMiB.peak },
      { key: 'full_rss_end_mib', label: 'engine RSS after the full sync', unit: 'MiB', value: full.engine.rssMiB.end },
      { key: 'full_engine_cpu_percent', label: 'engine CPU during the full sync, % of a core', unit: '%', value: percentOfCore(full.engine) },
      { key: 'full_loop_delay_p99_ms', label: 'engine event-loop delay during the full sync, p99', unit: 'ms', value: full.engine.loopDelayMs.p99 },
      { key: 'full_loop_delay_max_ms', label: 'engine event-loop delay during the full sync, max', unit: 'ms', value: full.engine.loopDelayMs.max },
    );
  }
  if (resync) {
    metrics.push(
      { key: 'resync_s', label: 're-sync with nothing changed, from the request to "done"', unit: 's', value: round(resync.seconds, 2), digits: 1, target: { op: '<=', value: RESYNC_TARGET_S } },
      { key: 'resync_pages_sent_in_full', label: 'pages the site sent in full during the re-sync (the rest: 304)', unit: '', value: resync.site.full },
      { key: 'resync_rss_peak_mib', label: 'engine RSS, peak during the re-sync', unit: 'MiB', value: resync.engine.rssMiB.peak },
      { key: 'resync_rss_end_mib', label: 'engine RSS after the re-sync', unit: 'MiB', value: resync.engine.rssMiB.end },
    );
  }
  const first = resyncsFull[0];
  const last = resyncsFull.at(-1);
  if (first && last) {
    const slowest = Math.max(...resyncsFull.map((p) => p.seconds));
    const half = Math.ceil(resyncsFull.length / 2);
    metrics.push(
      { key: 'resync_unconditional_s', label: `re-sync with nothing changed, the site without ETag or Last-Modified, slowest of ${resyncsFull.length}`, unit: 's', value: round(slowest, 2), digits: 1, target: { op: '<=', value: RESYNC_TARGET_S } },
      { key: 'resync_unconditional_rss_peak_mib', label: 'engine RSS, peak during them', unit: 'MiB', value: Math.max(...resyncsFull.map((p) => p.engine.rssMiB.peak)) },
      { key: 'resync_unconditional_rss_first_mib', label: 'engine RSS after the first of them', unit: 'MiB', value: first.engine.rssMiB.end },
      { key: 'resync_unconditional_rss_last_mib', label: `engine RSS after the last (${resyncsFull.length}th)`, unit: 'MiB', value: last.engine.rssMiB.end },
      { key: 'resync_unconditional_loop_delay_p99_ms', label: 'engine event-loop delay during them, p99 (the worst sync)', unit: 'ms', value: Math.max(...resyncsFull.map((p) => p.engine.loopDelayMs.p99)) },
      { key: 'resync_unconditional_loop_delay_max_ms', label: 'engine event-loop delay during them, max', unit: 'ms', value: Math.max(...resyncsFull.map((p) => p.engine.loopDelayMs.max)) },
      { key: 'resync_unconditional_heap_floor_first_mib', label: 'engine heap used after a sync, lowest in the first half of them', unit: 'MiB', value: heapFloor(resyncsFull.slice(0, half)) },
      { key: 'resync_unconditional_heap_floor_last_mib', label: 'engine heap used after a sync, lowest in the second half', unit: 'MiB', value: heapFloor(resyncsFull.slice(half)) },
    );
  }
  if (!full || !resync || resyncsFull.length !== parameters.repeats) invalid.push('Not every phase was measured.');
  const setup =
    `A site of ${parameters.pages} pages (bike-shop guides and products inside a mega-menu, a cookie banner, scripts, related products and a footer; about ` +
    `${full ? Math.round(full.site.bytes / Math.max(full.site.full, 1) / 1024) : '?'} KiB each) with a sitemap and robots.txt, served over loopback HTTPS by a process of its own ` +
    `with an ETag and Last-Modified on every page, added through POST /v1/knowledge/sources as a sitemap and synced by one engine ` +
    `(the service in its own process, ${parameters.database === 'postgres' ? 'PostgreSQL' : 'PGlite in memory'}), then synced again with nothing changed ` +
    `(POST …/sync), and ${parameters.repeats} times more with the site's ETag and Last-Modified turned off, so every page comes in full and only its content hash says it is unchanged. Each phase is timed from the request to the status "done" (polled every ${parameters.pollMs} ms). Load average ${load.start} at the start, ${load.end} at the end.`;
  return {
    metrics,
    invalid,
    setup,
    parameters,
    details: {
      full: full ? phaseDetails(full) : null,
      resync: resync ? phaseDetails(resync) : null,
      resyncsWithoutConditions: resyncsFull.map(phaseDetails),
      load,
    },
  };
}

/** What the result file keeps of a phase: the statuses seen, the source as last read, the site's and the engine's figures. */
function phaseDetails(p: Phase) {
  return { seconds: p.seconds, statuses: p.seen, source: p.source, site: p.site, engine: { ...p.engine, runtimeMs: undefined } };
}

/** The lowest heap used after any of the syncs: after a major collection, what is really kept. */
function heapFloor(phases: Phase[]): number {
  return Math.min(...phases.map((p) => p.engine.heapMiB));
}
