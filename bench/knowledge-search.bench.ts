/**
 * The knowledge search: search latency over 10,000 and 100,000 synced pages, on PostgreSQL and on
 * PGlite, the embedded database `npm start` uses.
 *
 * For each database and size: a fresh database (PostgreSQL: a schema of its own on BENCH_DATABASE_URL, dropped
 * afterwards; PGlite: a data directory of its own in the system's temporary folder, as `npm start` keeps one, removed
 * afterwards), the pages synced through the knowledge service in batches of 100 (bench/lib/shop-corpus.ts: products
 * and pages of a bike shop, English and Dutch), then a warm-up of KNOWLEDGE_BENCH_WARMUP searches and
 * KNOWLEDGE_BENCH_QUERIES measured ones, one at a time, in an even mix: a product by its model name, common words
 * found in hundreds to thousands of chunks, a question about nothing in the shop, and a chatty question not every
 * word of which occurs (the recall path); half in each language.
 *
 * The thing measured is the database's search statement, so the searches run in this process, one after the other
 * (the process does nothing else), through the knowledge service as the session runtime calls it. A load generator
 * in another process would only add its IPC round trip: no concurrency is in play. PGlite runs inside this process
 * anyway. On PostgreSQL the tables are analysed after the sync (autovacuum does so within a minute of a sync this
 * size); on PGlite nothing runs ANALYZE (it has no autovacuum and the service does not), so neither does the bench.
 *
 * Target: p99 ≤ 15 ms at 10,000 pages on PostgreSQL; the rest is reported. A search that fails makes the run invalid.
 *
 * It measures the lexical search, as a service without LLM_EMBEDDING_MODEL runs it: the knowledge service is made
 * without embeddings, and then a search makes no request and no query more than before they existed. With them
 * (docs/knowledge.md, "Embeddings"), a question also waits for the model's embedding (at most 400 ms, beside the
 * statement) and ranks the workspace's vectors in memory; that is not measured here yet.
 *
 * KNOWLEDGE_BENCH_PAGES (default 10000; bench/knowledge-search-large.bench.ts runs 100,000), KNOWLEDGE_BENCH_DATABASES (default postgres,pglite),
 * KNOWLEDGE_BENCH_QUERIES (2000), KNOWLEDGE_BENCH_WARMUP (200), BENCH_DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/test).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { migrate, openDatabase, type OpenedDatabase } from '../db/database.ts';
import { knowledgeRepository } from '../db/repositories/knowledge.repository.ts';
import { createKnowledgeService } from '../src/knowledge/knowledge-service.ts';
import type { KnowledgeSearchResult } from '../src/knowledge/types.ts';
import { envNumber, progress, type Metric, type RunResult } from './lib/benchmark.ts';
import { shopItem, shopQuery, type QueryKind } from './lib/shop-corpus.ts';
import { LatencyRecorder, round, summarize, type LatencySummary } from './lib/stats.ts';

export const name = 'knowledge-search';
export const title = 'Knowledge search';

const TARGET_P99_MS = 15;
const BATCH = 100;
const KINDS: QueryKind[] = ['precise-rare', 'precise-common', 'no-hit', 'recall'];
type DatabaseKind = 'postgres' | 'pglite';

function envList(variable: string, fallback: string): string[] {
  return (process.env[variable]?.trim() || fallback).split(',').map((s) => s.trim()).filter(Boolean);
}

/** A fresh, migrated database of the kind, and how to drop it again. */
async function freshDatabase(kind: DatabaseKind, url: string): Promise<OpenedDatabase & { drop(): Promise<void> }> {
  if (kind === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'botlink-kb-bench-'));
    const opened = await openDatabase({ dataDir });
    await migrate(opened.db);
    return { ...opened, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = await openDatabase({ url, poolSize: 1 });
  await sql`create schema ${sql.id(schema)}`.execute(admin.db);
  await admin.close();
  // One connection: the searches run one at a time, and its server process is the one whose CPU time is read.
  const opened = await openDatabase({ url, schema, poolSize: 1 });
  await migrate(opened.db, schema);
  return {
    ...opened,
    async drop() {
      const again = await openDatabase({ url, poolSize: 1 });
      await sql`drop schema ${sql.id(schema)} cascade`.execute(again.db);
      await again.close();
    },
  };
}

interface Round {
  database: DatabaseKind;
  pages: number;
  chunks: number;
  syncSeconds: number;
  all: LatencySummary;
  byKind: Record<QueryKind, LatencySummary & { strategies: Record<string, number> }>;
  /** CPU time of this process per measured search (on PGlite: the database's own). */
  cpuPerSearchMs: number;
  /** PostgreSQL on this machine: CPU time of the connection's server process per search (null when not readable). */
  serverCpuPerSearchMs: number | null;
  /** Share of the product-by-model-name questions whose first passage is a product with that model name. */
  preciseTopPct: number;
  failed: number;
  firstFailure?: string;
}

async function measure(kind: DatabaseKind, pages: number, url: string, queries: number, warmup: number): Promise<Round> {
  const label = `${kind} ${pages}`;
  const opened = await freshDatabase(kind, url);
  try {
    const { db } = opened;
    const workspaceId = randomUUID();
    await db.insertInto('workspaces').values({ id: workspaceId, name: 'Bench shop' }).execute();
    const knowledge = createKnowledgeService({ knowledge: knowledgeRepository(db) });

    const syncStarted = performance.now();
    for (let i = 0; i < pages; i += BATCH) {
      await knowledge.applyBatch(workspaceId, { upserts: Array.from({ length: Math.min(BATCH, pages - i) }, (_, k) => shopItem(i + k)), deletes: [] });
      if ((i / BATCH) % 100 === 99) progress(name, `${label}: ${i + BATCH} pages synced`);
    }
    const syncSeconds = (performance.now() - syncStarted) / 1000;
    if (kind === 'postgres') await sql`analyze knowledge_documents, knowledge_chunks`.execute(db);
    const { chunks } = await db.selectFrom('knowledge_chunks').select((eb) => eb.fn.countAll<string>().as('chunks')).executeTakeFirstOrThrow();
    progress(name, `${label}: synced in ${round(syncSeconds, 1)} s (${chunks} chunks); warming up`);

    let failed = 0;
    let firstFailure: string | undefined;
    const search = async (j: number) => {
      const query = shopQuery(j, pages);
      const started = performance.now();
      try {
        const result = await knowledge.search(workspaceId, query.text, query.language);
        return { query, result, ms: performance.now() - started };
      } catch (error) {
        failed++;
        firstFailure ??= `${query.kind} "${query.text}": ${error instanceof Error ? error.message : String(error)}`;
        return { query, result: undefined, ms: performance.now() - started };
      }
    };
    // Warm-up: other questions of the same mix (another range of the generator).
    for (let j = 0; j < warmup; j++) await search(1_000_000 + j);

    const all = new LatencyRecorder(queries);
    const byKind = Object.fromEntries(KINDS.map((k) => [k, { latency: new LatencyRecorder(queries), strategies: {} as Record<string, number> }]));
    let precise = 0;
    let preciseTop = 0;
    const serverPid = kind === 'postgres' ? (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid : null;
    const serverBefore = serverCpuMs(serverPid);
    const cpuBefore = process.cpuUsage();
    for (let j = 0; j < queries; j++) {
      const { query, result, ms } = await search(j);
      if (!result) continue;
      all.record(ms);
      const slot = byKind[query.kind]!;
      slot.latency.record(ms);
      slot.strategies[result.strategy] = (slot.strategies[result.strategy] ?? 0) + 1;
      if (query.kind === 'precise-rare') {
        precise++;
        if (isProductNamed(result, query.text)) preciseTop++;
      }
    }
    const cpu = process.cpuUsage(cpuBefore);
    const serverAfter = serverCpuMs(serverPid);
    const round_: Round = {
      database: kind,
      pages,
      chunks: Number(chunks),
      syncSeconds,
      all: summarize(all.values()),
      byKind: Object.fromEntries(KINDS.map((k) => [k, { ...summarize(byKind[k]!.latency.values()), strategies: byKind[k]!.strategies }])) as Round['byKind'],
      cpuPerSearchMs: (cpu.user + cpu.system) / 1000 / queries,
      serverCpuPerSearchMs: serverBefore !== null && serverAfter !== null ? (serverAfter - serverBefore) / queries : null,
      preciseTopPct: precise ? (100 * preciseTop) / precise : Number.NaN,
      failed,
      ...(firstFailure ? { firstFailure } : {}),
    };
    progress(name, `${label}: p50 ${round(round_.all.p50)} ms, p99 ${round(round_.all.p99)} ms, max ${round(round_.all.max)} ms`);
    return round_;
  } finally {
    await opened.close();
    await opened.drop();
  }
}

/**
 * User plus system CPU time of a local process in ms, from /proc (clock ticks of 10 ms; summed over thousands of
 * searches that is fine); null when there is no such process here (a remote server) or no /proc.
 */
function serverCpuMs(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    // A server in a container reports its own process ids: only a postgres process of that id here counts.
    if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('postgres')) return null;
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** The question names a model ("Veloria Comfort 340 price"): its first passage should be that product. */
function isProductNamed(result: KnowledgeSearchResult, question: string): boolean {
  const model = question.replace(/ (price|prijs)$/, '');
  const first = result.passages[0];
  return first?.source === 'product' && first.title.startsWith(model);
}

function pageCount(s: string): number {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 100) throw new RangeError(`page counts must be whole numbers >= 100, got ${JSON.stringify(s)}`);
  return n;
}

function databaseName(s: string): 'postgres' | 'pglite' {
  if (s !== 'postgres' && s !== 'pglite') throw new RangeError(`a database is postgres or pglite, got ${JSON.stringify(s)}`);
  return s;
}

export async function run(): Promise<RunResult> {
  const sizes = envList('KNOWLEDGE_BENCH_PAGES', '10000').map(pageCount);
  const databases = envList('KNOWLEDGE_BENCH_DATABASES', 'postgres,pglite').map(databaseName);
  // KNOWLEDGE_BENCH_ROUNDS (`postgres:10000,pglite:10000`) names each round instead of every database × every size.
  const chosen = process.env.KNOWLEDGE_BENCH_ROUNDS?.trim()
    ? envList('KNOWLEDGE_BENCH_ROUNDS', '').map((entry) => {
        const [database = '', pages = ''] = entry.split(':');
        return { database: databaseName(database), pages: pageCount(pages) };
      })
    : databases.flatMap((database) => sizes.map((pages) => ({ database, pages })));
  const queries = envNumber('KNOWLEDGE_BENCH_QUERIES', 2_000, { min: 100 });
  const warmup = envNumber('KNOWLEDGE_BENCH_WARMUP', 200, { min: 0 });
  const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

  const rounds: Round[] = [];
  const loadBefore = loadavg();
  for (const { database, pages } of chosen) rounds.push(await measure(database, pages, url, queries, warmup));

  const metrics: Metric[] = [];
  const invalid: string[] = [];
  for (const r of rounds) {
    const key = `${r.database}_${r.pages}`;
    const where = `${r.database === 'postgres' ? 'PostgreSQL' : 'PGlite'}, ${r.pages.toLocaleString('en')} pages`;
    const target = r.database === 'postgres' && r.pages === 10_000 ? { op: '<=' as const, value: TARGET_P99_MS } : undefined;
    metrics.push(
      { key: `${key}_p50_ms`, label: `search p50 (${where})`, unit: 'ms', value: r.all.p50 },
      { key: `${key}_p99_ms`, label: `search p99 (${where})`, unit: 'ms', value: r.all.p99, ...(target ? { target } : {}) },
      { key: `${key}_max_ms`, label: `search max (${where})`, unit: 'ms', value: r.all.max },
      { key: `${key}_recall_p99_ms`, label: `search p99, recall questions only (${where})`, unit: 'ms', value: r.byKind.recall.p99 },
      { key: `${key}_cpu_per_search_ms`, label: `CPU of the benchmark process per search (${where})`, unit: 'ms', value: r.cpuPerSearchMs },
      ...(r.serverCpuPerSearchMs === null ? [] : [{ key: `${key}_server_cpu_per_search_ms`, label: `CPU of the PostgreSQL server process per search (${where})`, unit: 'ms', value: r.serverCpuPerSearchMs }]),
      { key: `${key}_sync_pages_per_s`, label: `sync, pages per second (${where})`, unit: '/s', value: r.pages / r.syncSeconds },
      { key: `${key}_precise_top_pct`, label: `questions naming a product answered by it first (${where})`, unit: '%', value: r.preciseTopPct, digits: 1 },
    );
    if (r.failed) invalid.push(`${where}: ${r.failed} of ${queries} searches failed; the first: ${r.firstFailure}.`);
  }

  const usedSizes = [...new Set(chosen.map((c) => c.pages))];
  const usedDatabases = [...new Set(chosen.map((c) => c.database))];
  const sizesText = usedSizes.map((n) => n.toLocaleString('en')).join(' and ');
  const setup =
    `${sizesText} synthetic shop pages (bench/lib/shop-corpus.ts: about 70 % products of one chunk, 30 % guides and posts of 1–6 chunks, ` +
    `55 % Dutch and 45 % English) synced through the knowledge service in batches of ${BATCH} into a fresh ` +
    `${usedDatabases.map((d) => (d === 'postgres' ? `PostgreSQL schema (${new URL(url).host}, analysed after the sync)` : 'PGlite data directory (as `npm start`, not analysed)')).join(' and a fresh ')}; ` +
    `then ${warmup} warm-up and ${queries} measured searches, one at a time, in the benchmark process over one connection (the database's search statement is what is measured; ` +
    `PGlite runs inside that process): a quarter each of a product by its model name, common words found in hundreds to thousands of chunks, ` +
    `a question about nothing in the shop, and a chatty question not every word of which occurs (the recall path); half Dutch, half English.`;

  return {
    metrics,
    invalid,
    setup,
    parameters: {
      rounds: chosen.map((c) => `${c.database}:${c.pages}`),
      queries,
      warmup,
      batch: BATCH,
      url: usedDatabases.includes('postgres') ? new URL(url).host : null,
    },
    details: {
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg(),
      rounds: rounds.map((r) => ({
        database: r.database,
        pages: r.pages,
        chunks: r.chunks,
        syncSeconds: round(r.syncSeconds, 1),
        all: roundSummary(r.all),
        byKind: Object.fromEntries(KINDS.map((k) => [k, { ...roundSummary(r.byKind[k]), strategies: r.byKind[k].strategies }])),
        cpuPerSearchMs: round(r.cpuPerSearchMs, 3),
        serverCpuPerSearchMs: r.serverCpuPerSearchMs === null ? null : round(r.serverCpuPerSearchMs, 3),
        preciseTopPct: round(r.preciseTopPct, 1),
        failed: r.failed,
      })),
    },
  };
}

function roundSummary(s: LatencySummary) {
  return { count: s.count, p50: round(s.p50), p90: round(s.p90), p99: round(s.p99), max: round(s.max) };
}
