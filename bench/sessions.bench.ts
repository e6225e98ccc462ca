/**
 * The conversation engine at scale, on real PostgreSQL:
 *
 * 1. SESSIONS_BENCH_COUNT (10 000) live sessions, each with one WhatsApp turn answered by a loopback integrator that
 *    takes 50 ms (a child process): heap per idle live session (target ≤ 16 KB), measured with forced GCs.
 * 2. Turn overhead beyond the integrator's own 50 ms, over SESSIONS_BENCH_TURNS further turns on random sessions with
 *    64 in flight while all sessions stay live: p50 ≤ 2 ms, p99 ≤ 10 ms.
 * 3. Persist at turn end (the turn row and snapshot in one transaction) and restore of a passivated session
 *    (`runtime.open`): p99 ≤ 5 ms.
 *
 * Every turn must be answered by the integrator: a turn that is not, is cancelled or throws makes the run invalid.
 * (The knowledge search over many pages, once part of this benchmark, is bench/knowledge-search.bench.ts's.)
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test): a schema of its own, dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'kysely';
import { migrate, openDatabase } from '../db/database.ts';
import { accountsRepository } from '../db/repositories/accounts.repository.ts';
import { knowledgeRepository } from '../db/repositories/knowledge.repository.ts';
import { sessionsRepository } from '../db/repositories/sessions.repository.ts';
import { createAccountsService } from '../src/accounts/accounts-service.ts';
import { createAi } from '../src/ai/index.ts';
import { createBotLinkClient } from '../src/botlink/client.ts';
import { createToolsClient } from '../src/botlink/tools-client.ts';
import { createKnowledgeService } from '../src/knowledge/knowledge-service.ts';
import { createLogger } from '../src/log.ts';
import { GuardedClient } from '../src/net/guarded-client.ts';
import { channelRenderers } from '../src/channels/renderers.ts';
import { createSessionRuntime } from '../src/sessions/session-runtime.ts';
import type { Metric, RunResult } from './lib/benchmark.ts';
import { envNumber } from './lib/benchmark.ts';
import { startIntegratorProcess } from './lib/integrator-process.ts';
import { LatencyRecorder, round, summarize } from './lib/stats.ts';

export const name = 'sessions';
export const title = 'Sessions: live sessions, turn overhead, persist and restore';

const INTEGRATOR_MS = 50;
const targets = { heapPerSessionKb: 16, overheadP50Ms: 2, overheadP99Ms: 10, persistP99Ms: 5, restoreP99Ms: 5 };
const testCa = readFileSync(new URL('../test/fixtures/tls/ca.pem', import.meta.url), 'utf8');
const key = 'bench-key-'.padEnd(64, '0123456789abcdef');

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

/** Runs `count` jobs with `concurrency` in flight. */
async function pool(count: number, concurrency: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await job(next++);
  }));
}

export async function run(): Promise<RunResult> {
  const count = envNumber('SESSIONS_BENCH_COUNT', 10_000, { min: 100 });
  const turns = envNumber('SESSIONS_BENCH_TURNS', 20_000, { min: 100 });
  const concurrency = 64;
  const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `bench_${randomBytes(4).toString('hex')}`;

  const admin = await openDatabase({ url, poolSize: 1 });
  await sql`create schema ${sql.id(schema)}`.execute(admin.db);
  const { db, close } = await openDatabase({ url, schema, poolSize: 16 });
  await migrate(db, schema);
  const integrator = await startIntegratorProcess({ delayMs: INTEGRATOR_MS });
  const http = new GuardedClient({ allow: ['127.0.0.1/32'], ca: testCa, connectionsPerOrigin: concurrency });
  try {
    const workspaceId = (await createAccountsService({ accounts: accountsRepository(db) }).createWorkspace({ name: 'Bench', ownerEmail: 'b@bench.example' })).workspace.id;
    const repository = sessionsRepository(db);
    // Persist times are taken at the steady rate only (phase 2); under the closed-loop phase they are queueing.
    let persist = new LatencyRecorder(count + turns);
    const timedRepository = {
      ...repository,
      // The runtime groups concurrent turn ends into one statement; each turn's persist time is its batch's.
      async saveTurns(inputs: Parameters<typeof repository.saveTurns>[0]) {
        const started = performance.now();
        await repository.saveTurns(inputs);
        const ms = performance.now() - started;
        for (let i = 0; i < inputs.length; i++) persist.record(ms);
      },
    };
    const knowledge = createKnowledgeService({ knowledge: knowledgeRepository(db) });
    const runtime = createSessionRuntime({
      renderers: channelRenderers,
      sessions: timedRepository,
      credentials: async () => ({ endpointUrl: `${integrator.origin}/botlink/channel`, key }),
      botlink: createBotLinkClient({ http }),
      tools: createToolsClient({ http }),
      knowledge,
      ai: createAi(null),
      logger: createLogger('silent'),
      idleMs: 3_600_000,
    });
    const say = (session: number, text: string) =>
      runtime.handleMessage({ workspaceId, channel: 'whatsapp', externalId: `wa-${session}`, text, language: 'en', customerPhone: '+31600000000' });

    // Warm-up: connections, JIT, pools; then the baseline heap.
    await pool(200, concurrency, async (i) => void (await say(count + i, 'warm up')));
    await runtime.settled();
    await runtime.passivateIdle(Date.now() + 3_600_001);
    const heapBefore = heapAfterGc();

    // Every turn must be the integrator's answer; any other outcome is counted, and makes the run invalid.
    const unanswered = new Map<string, number>();
    const notAnswered = (why: string) => unanswered.set(why, (unanswered.get(why) ?? 0) + 1);
    const answered = async (session: number, text: string): Promise<number | null> => {
      const started = performance.now();
      try {
        const result = await say(session, text);
        if (result.cancelled) notAnswered('cancelled');
        else if (result.source !== 'integrator') notAnswered(`answered by ${result.source}, not the integrator`);
        else return performance.now() - started - INTEGRATOR_MS;
      } catch (err) {
        notAnswered(`threw ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
      }
      return null;
    };

    // 1. N live sessions, one turn each.
    const overhead = new LatencyRecorder(count + turns);
    const timedTurn = async (session: number, text: string) => {
      const ms = await answered(session, text);
      if (ms !== null) overhead.record(ms);
    };
    const createStarted = performance.now();
    await pool(count, concurrency, (i) => timedTurn(i, 'Where is my order?'));
    const createSeconds = (performance.now() - createStarted) / 1000;
    await runtime.settled();
    const heapAfter = heapAfterGc();
    const live = runtime.liveCount();
    const heapPerSessionKb = (heapAfter - heapBefore) / live / 1024;

    // The statistics a server keeps by itself (autovacuum's ANALYZE; this machine's PostgreSQL runs without it): plans
    // made while the tables were small are made again for their size (docs/operations.md, "Autovacuum").
    await sql`analyze sessions, session_turns, session_messages, analytics_hours, analytics_latency, analytics_handed_over`.execute(db);

    // 2. Turns at a steady rate while every session stays live: latency at a sustainable load, not queueing at
    // saturation (phase 1 runs closed-loop and gives the capacity).
    const rate = envNumber('SESSIONS_BENCH_RATE', 200, { min: 1 });
    const overheadSteady = new LatencyRecorder(turns);
    persist = new LatencyRecorder(turns);
    const inFlight: Promise<void>[] = [];
    const steadyStarted = performance.now();
    for (let i = 0; i < turns; i++) {
      const due = steadyStarted + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      const session = (i * 7_919) % count;
      inFlight.push(
        (async () => {
          const ms = await answered(session, `And order ${i}?`);
          if (ms !== null) overheadSteady.record(ms);
        })(),
      );
    }
    await Promise.all(inFlight);
    await runtime.settled();
    const capacity = count / createSeconds;

    // 3. Passivate everything, then restore sessions one by one.
    const passivateStarted = performance.now();
    const passivated = await runtime.passivateIdle(Date.now() + 3_600_001);
    const passivateMicrosEach = ((performance.now() - passivateStarted) * 1000) / Math.max(1, passivated);
    const restore = new LatencyRecorder(2_000);
    for (let i = 0; i < Math.min(2_000, count); i++) {
      const started = performance.now();
      await runtime.open({ workspaceId, channel: 'whatsapp', externalId: `wa-${(i * 31) % count}` });
      restore.record(performance.now() - started);
    }
    await runtime.stop(1_000);

    const o = summarize(overheadSteady.values());
    const closed = summarize(overhead.values());
    const p = summarize(persist.values());
    const r = summarize(restore.values());
    const unansweredTotal = [...unanswered.values()].reduce((n, c) => n + c, 0);
    const invalid =
      unansweredTotal === 0
        ? []
        : [`${unansweredTotal} turns not answered by the integrator: ${[...unanswered].map(([why, n]) => `${n} × ${why}`).join('; ')}`];
    const metrics: Metric[] = [
      { key: 'heap_per_session_kb', label: 'heap per idle live session', unit: 'KB', digits: 2, value: heapPerSessionKb, target: { op: '<=', value: targets.heapPerSessionKb } },
      { key: 'overhead_p50_ms', label: `turn overhead p50 (beyond the integrator's ${INTEGRATOR_MS} ms)`, unit: 'ms', value: o.p50, target: { op: '<=', value: targets.overheadP50Ms } },
      { key: 'overhead_p99_ms', label: 'turn overhead p99', unit: 'ms', value: o.p99, target: { op: '<=', value: targets.overheadP99Ms } },
      { key: 'persist_p99_ms', label: 'persist at turn end p99 (PostgreSQL, at the steady rate)', unit: 'ms', value: p.p99, target: { op: '<=', value: targets.persistP99Ms } },
      { key: 'restore_p99_ms', label: 'restore a passivated session p99 (PostgreSQL)', unit: 'ms', value: r.p99, target: { op: '<=', value: targets.restoreP99Ms } },
      { key: 'capacity_turns_per_second', label: `capacity (closed loop, ${concurrency} in flight)`, unit: 'turns/s', value: capacity },
      { key: 'capacity_overhead_p50_ms', label: 'turn overhead p50 at capacity', unit: 'ms', value: closed.p50 },
      { key: 'capacity_overhead_p99_ms', label: 'turn overhead p99 at capacity', unit: 'ms', value: closed.p99 },
      { key: 'passivate_us', label: 'passivate, per session (state already persisted)', unit: 'µs', digits: 1, value: passivateMicrosEach },
      { key: 'live_sessions', label: 'live sessions', unit: '', value: live },
    ];
    const setup =
      `${live} live sessions (WhatsApp, one handled integrator answer each, created closed-loop with ${concurrency} in flight in ` +
      `${round(createSeconds, 1)} s), then ${turns} turns at ${rate}/s on random sessions (the overhead rows); integrator: ` +
      `loopback HTTPS child process answering in ${INTEGRATOR_MS} ms; PostgreSQL at ${new URL(url).host}; the workspace has no ` +
      `knowledge pages. Overhead is the turn's wall time minus the integrator's ${INTEGRATOR_MS} ms: it includes the loopback ` +
      `HTTPS round trip, the session actor, the bot-link client and rendering; the turn's database write happens after the reply ` +
      `and is measured on its own (persist).`;
    return {
      metrics,
      invalid,
      setup,
      parameters: { sessions: count, turns, rate, concurrency, integratorMs: INTEGRATOR_MS, database: new URL(url).host },
      details: {
        liveSessions: live,
        overheadAtCapacity: closed,
        overhead: o,
        persist: p,
        restore: r,
        unanswered: Object.fromEntries(unanswered),
      },
    };
  } finally {
    await http.close();
    await integrator.stop();
    await sql`drop schema ${sql.id(schema)} cascade`.execute(admin.db).catch(() => {});
    await close();
    await admin.close();
  }
}
