/**
 * The Overview at scale (docs/analytics.md): 30 days of one workspace with 1,000,000 turns on PostgreSQL and 100,000
 * on the embedded PGlite, written as rows (the roll-up triggers count them as they would a live service's), then
 * GET /v1/analytics/overview and /timeseries over HTTP with periods of 24 hours, 7 days and 30 days, every channel and
 * one, and the export of 100,000 turns streamed as CSV: its rate, and the service's memory while it streams.
 *
 * OVERVIEW_BENCH_ROUNDS (`postgres:1000000,pglite:100000`), OVERVIEW_BENCH_REQUESTS (300 per endpoint and round),
 * OVERVIEW_BENCH_EXPORT_TURNS (100000; exported from the PostgreSQL round), BENCH_DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/test: a schema of its own, dropped afterwards).
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { sql } from 'kysely';
import { migrate, openDatabase, type Db } from '../db/database.ts';
import { envNumber, progress, type Metric, type RunResult } from './lib/benchmark.ts';
import { percentile, round } from './lib/stats.ts';
import { seedWorkspace, startTestService, type TestService } from '../test/helpers/service.ts';

export const name = 'overview';
export const title = 'Overview: figures and charts over 1,000,000 turns, and the export';

const DAY_MS = 86_400_000;
const TURNS_PER_CONVERSATION = 5;

interface Round {
  kind: 'postgres' | 'pglite';
  turns: number;
}

function rounds(): Round[] {
  const raw = process.env.OVERVIEW_BENCH_ROUNDS ?? 'postgres:1000000,pglite:100000';
  return raw.split(',').map((part) => {
    const [kind, turns] = part.split(':');
    if ((kind !== 'postgres' && kind !== 'pglite') || !Number.isInteger(Number(turns))) throw new RangeError(`OVERVIEW_BENCH_ROUNDS: ${part} is not kind:turns`);
    return { kind, turns: Number(turns) };
  });
}

/**
 * 30 days of conversations ending now, spread evenly, a third per channel; five turns each, a minute apart, answered
 * by every source in turn, the endpoint asked on the phone and WhatsApp with latencies from 50 ms to 2 s. Batches of
 * 20,000 conversations, each one statement per table, so the triggers see batches as a busy group commit would.
 */
async function seed(db: Db, workspaceId: string, turns: number, endAt: number): Promise<void> {
  const conversations = Math.ceil(turns / TURNS_PER_CONVERSATION);
  const batch = 20_000;
  const spanMs = 30 * DAY_MS - TURNS_PER_CONVERSATION * 60_000;
  for (let first = 0; first < conversations; first += batch) {
    const last = Math.min(conversations, first + batch) - 1;
    await sql`insert into sessions (id, workspace_id, channel, external_id, machine_version, customer_phone, created_at, updated_at)
      select md5(${workspaceId} || i)::uuid, ${workspaceId}, (array['phone', 'whatsapp', 'webchat'])[1 + i % 3], 'bench-' || i, 1,
        '+3161' || lpad((i % 10000000)::text, 7, '0'),
        to_timestamp((${endAt - 30 * DAY_MS}::float8 + i * ${spanMs / conversations}::float8) / 1000.0),
        to_timestamp((${endAt - 30 * DAY_MS}::float8 + i * ${spanMs / conversations}::float8) / 1000.0)
      from generate_series(${first}::int, ${last}::int) i`.execute(db);
    await sql`insert into session_turns (id, session_id, ordinal, status, language, customer_message, reply, source, botlink,
        knowledge, tool_rounds, handoff, timings, errors, started_at, ended_at)
      select md5(${workspaceId} || i || '.' || n), s.id, n, 'completed', 'en',
        'Question ' || (i * 7 + n) % 500 || ' about my order', 'An answer.',
        (array['integrator', 'knowledge_base', 'ai', 'fallback', 'integrator'])[1 + (i + n) % 5],
        case when s.channel = 'webchat' then null else jsonb_build_object(
          'outcome', case when (i + n) % 5 in (0, 4) then 'answer' else 'no_answer' end,
          'reason', case when (i + n) % 5 in (0, 4) then 'answer' when (i + n) % 5 = 3 then 'timeout' else 'empty_reply' end,
          'latencyMs', 50 + (i * 31 + n * 17) % 1950) end,
        null, '[]', case when (i + n) % 23 = 0 then '{"kind":"forward","connected":false,"sentence":""}'::jsonb end, '{}', '[]',
        s.created_at + (n - 1) * interval '1 minute', s.created_at + (n - 1) * interval '1 minute' + ((300 + (i * 13) % 2000) || ' milliseconds')::interval
      from generate_series(${first}::int, ${last}::int) i
      join sessions s on s.id = md5(${workspaceId} || i)::uuid
      cross join generate_series(1, ${TURNS_PER_CONVERSATION}) n
      where (i * ${TURNS_PER_CONVERSATION} + n) <= ${turns}`.execute(db);
  }
}

/** The queries a dashboard makes: the three periods, every channel or one, at random. */
function queries(endAt: number, count: number): string[] {
  const list: string[] = [];
  const periods = [DAY_MS, 7 * DAY_MS, 30 * DAY_MS];
  for (let i = 0; i < count; i++) {
    const span = periods[i % 3]!;
    const to = new Date(endAt);
    const q = new URLSearchParams({ from: new Date(endAt - span).toISOString(), to: to.toISOString() });
    if (i % 4 === 3) q.set('channel', ['phone', 'whatsapp', 'webchat'][i % 3]!);
    list.push(q.toString());
  }
  return list;
}

/**
 * A GET over a connection of its own (the test client's fetch would reuse a keep-alive connection that the server
 * closed while the seed ran, and fail).
 */
function get(service: TestService, path: string, token: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, service.url), { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function timed(service: TestService, token: string, path: string, list: string[]): Promise<{ ms: number[]; failures: string[] }> {
  const ms: number[] = [];
  const failures: string[] = [];
  for (const q of list) {
    const started = performance.now();
    const res = await get(service, `${path}?${q}`, token);
    ms.push(performance.now() - started);
    if (res.status !== 200) failures.push(`${path}?${q}: ${res.status} ${res.text.slice(0, 200)}`);
  }
  return { ms, failures };
}

/**
 * Streams the export; turns (data rows) per second, the process's RSS growth from start to peak, and its growth over
 * the last three quarters of the stream (flat memory: the second does not grow with the size of the export).
 */
interface ExportFigures {
  rows: number;
  seconds: number;
  rssGrowthMiB: number;
  lateGrowthMiB: number;
}

async function exportRate(service: TestService, token: string, from: Date, to: Date): Promise<ExportFigures> {
  const url = new URL(`${service.url}/v1/exports/conversations?from=${from.toISOString()}&to=${to.toISOString()}&format=csv`);
  const samples: [number, number][] = [];
  const started = performance.now();
  const sampler = setInterval(() => samples.push([performance.now() - started, process.memoryUsage().rss]), 25);
  samples.push([0, process.memoryUsage().rss]);
  const rows = await new Promise<number>((resolve, reject) => {
    const req = request(url, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let lines = 0;
      res.on('data', (chunk: Buffer) => {
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      });
      res.on('end', () => resolve(lines - 1));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  const elapsed = performance.now() - started;
  clearInterval(sampler);
  const peak = (list: [number, number][]) => Math.max(...list.map(([, rss]) => rss));
  const quarter = samples.filter(([t]) => t >= elapsed / 4);
  const atQuarter = quarter[0]?.[1] ?? samples[0]![1];
  return {
    rows,
    seconds: elapsed / 1000,
    rssGrowthMiB: (peak(samples) - samples[0]![1]) / 1_048_576,
    lateGrowthMiB: (peak(quarter.length ? quarter : samples) - atQuarter) / 1_048_576,
  };
}

export async function run(): Promise<RunResult> {
  const requests = envNumber('OVERVIEW_BENCH_REQUESTS', 300, { min: 10 });
  const exportTurns = envNumber('OVERVIEW_BENCH_EXPORT_TURNS', 100_000, { min: 1000 });
  const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const metrics: Metric[] = [];
  const invalid: string[] = [];
  const details: Record<string, unknown> = {};
  for (const r of rounds()) {
    const schema = `bench_overview_${randomBytes(4).toString('hex')}`;
    if (r.kind === 'postgres') {
      const admin = await openDatabase({ url, poolSize: 1 });
      await sql`create schema ${sql.id(schema)}`.execute(admin.db);
      await admin.close();
    }
    const opened = r.kind === 'postgres' ? await openDatabase({ url, schema, poolSize: 10 }) : await openDatabase({});
    await migrate(opened.db, r.kind === 'postgres' ? schema : undefined);
    const service = await startTestService({ db: opened.db, kind: r.kind, close: async () => {} });
    try {
      const ws = await seedWorkspace(service);
      const endAt = Math.floor(Date.now() / 3_600_000) * 3_600_000;
      const seedStarted = performance.now();
      await seed(opened.db, ws.workspaceId, r.turns, endAt);
      if (r.kind === 'postgres') await sql`analyze`.execute(opened.db);
      const seedSeconds = (performance.now() - seedStarted) / 1000;
      progress(name, `${r.kind}: ${r.turns} turns written in ${seedSeconds.toFixed(1)} s (roll-ups by the triggers)`);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from analytics_hours where workspace_id = ${ws.workspaceId}`.execute(opened.db);
      details[`${r.kind}_rollup_rows`] = rows[0]!.n;
      details[`${r.kind}_seed_seconds`] = round(seedSeconds, 1);
      const list = queries(endAt, requests);
      await timed(service, ws.owner, '/v1/analytics/overview', list.slice(0, 20));
      const overview = await timed(service, ws.owner, '/v1/analytics/overview', list);
      const series = await timed(service, ws.owner, '/v1/analytics/timeseries', list);
      invalid.push(...overview.failures.slice(0, 3), ...series.failures.slice(0, 3));
      const whole = `from=${new Date(endAt - 30 * DAY_MS).toISOString()}&to=${new Date(endAt).toISOString()}`;
      const counted = (JSON.parse((await get(service, `/v1/analytics/overview?${whole}`, ws.owner)).text) as { customer_messages?: number }).customer_messages;
      if (counted !== r.turns) invalid.push(`${r.kind}: the overview counted ${counted} customer messages of ${r.turns}`);
      const target = r.kind === 'postgres' ? 150 : 300;
      const turnsLabel = r.turns.toLocaleString('en');
      for (const [key, label, result] of [['overview', 'GET /v1/analytics/overview', overview], ['timeseries', 'GET /v1/analytics/timeseries', series]] as const) {
        const sorted = Float64Array.from(result.ms).sort();
        metrics.push({ key: `${r.kind}_${key}_p50_ms`, label: `${label}, ${r.kind}, ${turnsLabel} turns, p50`, unit: 'ms', value: round(percentile(sorted, 50), 2) });
        metrics.push({ key: `${r.kind}_${key}_p95_ms`, label: `${label}, ${r.kind}, ${turnsLabel} turns, p95`, unit: 'ms', value: round(percentile(sorted, 95), 2), target: { op: '<=', value: target } });
      }
      if (r.kind === 'postgres' || !rounds().some((x) => x.kind === 'postgres')) {
        // The export of the newest conversations holding `exportTurns` turns.
        const span = Math.ceil((exportTurns / r.turns) * (30 * DAY_MS - TURNS_PER_CONVERSATION * 60_000) / 3_600_000) * 3_600_000;
        const e = await exportRate(service, ws.owner, new Date(endAt - span), new Date(endAt));
        progress(name, `${r.kind}: exported ${e.rows} turns in ${e.seconds.toFixed(2)} s`);
        if (e.rows < exportTurns * 0.95) invalid.push(`the export gave ${e.rows} rows, expected about ${exportTurns}`);
        metrics.push({ key: 'export_turns_per_s', label: `export as CSV, ${r.kind}, ${e.rows.toLocaleString('en')} turns, rate`, unit: '/s', value: Math.round(e.rows / e.seconds), target: { op: '>=', value: 20_000 } });
        metrics.push({ key: 'export_rss_growth_mib', label: 'export: the process\'s RSS growth, start to peak', unit: 'MiB', value: round(e.rssGrowthMiB, 1), digits: 1 });
        metrics.push({ key: 'export_rss_late_growth_mib', label: 'export: RSS growth over the last three quarters of the stream', unit: 'MiB', value: round(e.lateGrowthMiB, 1), digits: 1 });
      }
    } finally {
      await service.stop();
      await opened.close();
      if (r.kind === 'postgres') {
        const admin = await openDatabase({ url, poolSize: 1 });
        await sql`drop schema ${sql.id(schema)} cascade`.execute(admin.db);
        await admin.close();
      }
    }
  }
  return {
    metrics,
    invalid,
    setup:
      `One workspace, 30 days of conversations (${TURNS_PER_CONVERSATION} turns each, a third per channel, every answer source, ` +
      `the endpoint's latencies 50–2000 ms), written as rows so the roll-up triggers count them; then ${requests} requests each ` +
      'of the overview and the time series over HTTP, one after the other (periods of 24 hours, 7 days and 30 days; every fourth ' +
      'narrowed to one channel), and the CSV export of the newest conversations holding about ' +
      `${exportTurns.toLocaleString('en')} turns, read as fast as the client can. The service runs in the benchmark's process.`,
    parameters: { rounds: rounds(), requests, exportTurns },
    details,
  };
}
