/**
 * Assignment across two engines: website visitors ask for a person at a steady rate on two engine processes on one
 * PostgreSQL (BENCH_DATABASE_URL), and the team's agents, available on both engines, are assigned the waiting
 * conversations (src/inbox/assignment.ts). Target: from a conversation starting to wait to its assignee's dashboard
 * hearing that it is theirs, p99 ≤ 1 s; no conversation assigned twice; no agent above ASSIGN_MAX_PER_AGENT.
 *
 * Processes: two engines (bench/processes/engine-process.ts), the load generator (bench/processes/inbox-handovers.ts:
 * the visitors and the agents), and this one, which sets up, seeds, samples the agents' loads in the database and
 * adds up.
 *
 * The clock. The engine that decides a handoff writes when the conversation started waiting (`waiting_since`, its wall
 * clock); the assignment's change carries it on the live bus to every engine's inbox streams. The figure is read where
 * an agent reads it: the load generator notes when the `assigned` change naming the agent reaches that agent's own
 * stream, on whichever engine it is open. So it holds the whole way: the turn's write, the assignment round (under the
 * workspace's lock, with the other engine's rounds), the bus to the other engine, and the stream. Both clocks are this
 * machine's one wall clock, as in the live-events benchmark. (The engine's own log line of an assignment says when its
 * round committed, before any dashboard heard it, and only in a log; it is not the figure.)
 *
 * Seeding: INBOX_ASSIGNMENT_SEED (200) web chats the bot answers are made through the widget's route, copied in SQL up
 * to INBOX_ASSIGNMENT_CONVERSATIONS (10,000) open conversations, and the tables analysed; then INBOX_ASSIGNMENT_AGENTS
 * (50) agents come to work, half on each engine (stream open, available). Visitors ask for a person at
 * INBOX_ASSIGNMENT_PER_SECOND (3) for INBOX_ASSIGNMENT_WARMUP_SECONDS (25) of warm-up, long enough for the first
 * conversations to be closed, then INBOX_ASSIGNMENT_SECONDS (90) measured. Each assignee takes the conversation over
 * after INBOX_ASSIGNMENT_OPEN_MS (1,000), replies, and closes it INBOX_ASSIGNMENT_HOLD_MS (20,000) after it was
 * assigned; each agent reads the waiting view every INBOX_ASSIGNMENT_LIST_MS (2,000). ASSIGN_MAX_PER_AGENT is
 * INBOX_ASSIGNMENT_MAX_PER_AGENT (2): with 60 conversations held at once over 50 agents, the least busy rule fills some
 * agents to the cap, so a breach under two engines' concurrent rounds would show.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { migrate, openDatabase, type Db } from '../db/database.ts';
import type { Metric, RunResult } from './lib/benchmark.ts';
import { envNumber, progress } from './lib/benchmark.ts';
import { nextMessage } from './lib/child-message.ts';
import { copyConversations } from './lib/inbox-seed.ts';
import { round, summarize } from './lib/stats.ts';
import { startEngineProcess, type EngineProcess, type EngineReport } from './processes/engine-process.ts';
import type { HandoverResults } from './processes/inbox-handovers.ts';

export const name = 'inbox-assignment';
export const title = 'Assignment of waiting conversations across two engines';

const ENGINES = 2;
const TARGET_P99_MS = 1_000;
/** How often this process reads every agent's load from the database while the visitors come. */
const SAMPLE_MS = 500;

type FromHandovers = { type: 'listening' } | { type: 'seeded'; workspaceId: string } | { type: 'working'; userIds: string[] } | { type: 'measuring' } | HandoverResults;

interface Parameters {
  engines: number;
  agents: number;
  conversations: number;
  seedConversations: number;
  perSecond: number;
  warmupSeconds: number;
  seconds: number;
  openMs: number;
  holdMs: number;
  listIntervalMs: number;
  maxPerAgent: number;
  poolSize: number;
}

/** Every agent's load now, as the assignment counts it: held by them, or waiting and assigned to them for this wait. */
async function loads(db: Db, workspaceId: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from sessions
    where workspace_id = ${workspaceId} and status = 'active' and handled_by in ('agent', 'waiting')
      and (case when handled_by = 'agent' then agent_user_id
                when assigned_waiting_since = waiting_since then assigned_user_id end) is not null
    group by case when handled_by = 'agent' then agent_user_id else assigned_user_id end
    order by n desc limit 1`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

export async function run(): Promise<RunResult> {
  const url = process.env.BENCH_DATABASE_URL;
  if (!url) throw new Error(`${name}: two engines share one PostgreSQL; set BENCH_DATABASE_URL (for example postgres://postgres@127.0.0.1:5432/test).`);
  const parameters: Parameters = {
    engines: ENGINES,
    agents: envNumber('INBOX_ASSIGNMENT_AGENTS', 50, { min: 2 }),
    conversations: envNumber('INBOX_ASSIGNMENT_CONVERSATIONS', 10_000, { min: 1 }),
    seedConversations: envNumber('INBOX_ASSIGNMENT_SEED', 200, { min: 1 }),
    perSecond: envNumber('INBOX_ASSIGNMENT_PER_SECOND', 3, { min: 0.1 }),
    warmupSeconds: envNumber('INBOX_ASSIGNMENT_WARMUP_SECONDS', 25, { min: 1 }),
    seconds: envNumber('INBOX_ASSIGNMENT_SECONDS', 90, { min: 1 }),
    openMs: envNumber('INBOX_ASSIGNMENT_OPEN_MS', 1_000, { min: 0 }),
    holdMs: envNumber('INBOX_ASSIGNMENT_HOLD_MS', 20_000, { min: 0 }),
    listIntervalMs: envNumber('INBOX_ASSIGNMENT_LIST_MS', 2_000, { min: 100 }),
    maxPerAgent: envNumber('INBOX_ASSIGNMENT_MAX_PER_AGENT', 2, { min: 1 }),
    poolSize: 10,
  };
  const load = { start: round(loadavg()[0]!, 2), end: 0 };
  const schema = `bench_assign_${randomBytes(4).toString('hex')}`;
  const admin = await openDatabase({ url, poolSize: 1 });
  await sql`create schema ${sql.id(schema)}`.execute(admin.db);
  const database = await openDatabase({ url, schema, poolSize: 2 });
  const child = fork(new URL('./processes/inbox-handovers.ts', import.meta.url), [], { execPath: process.execPath, execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = once(child, 'exit');
  const next = <T extends FromHandovers['type']>(type: T) => nextMessage<FromHandovers, T>(child, type, 'the handovers load generator');
  const engines: EngineProcess[] = [];
  let results: HandoverResults;
  let reports: EngineReport[];
  let workspaceId: string;
  let sampledMax = 0;
  let samples = 0;
  let sessionOf: Map<string, string>;
  let openAtEnd: number;
  try {
    await migrate(database.db, schema);
    await next('listening');
    const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;
    const env = {
      PORT: '0',
      HOST: '127.0.0.1',
      MASTER_KEY: randomBytes(32).toString('hex'),
      ADMIN_TOKEN: adminToken,
      ASSIGN_MAX_PER_AGENT: String(parameters.maxPerAgent),
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    };
    for (let e = 0; e < ENGINES; e++) {
      engines.push(await startEngineProcess({ env, database: { url, schema, poolSize: parameters.poolSize }, instanceId: `bench-assign-engine-${e}` }));
    }
    progress(name, `seeding: ${parameters.seedConversations} web chats through the widget, ${parameters.agents} agents`);
    const seeded = next('seeded');
    child.send({ type: 'setup', engines: engines.map((e) => e.url), adminToken, agents: parameters.agents, seedConversations: parameters.seedConversations });
    ({ workspaceId } = await seeded);
    // Spread over the 20 minutes before: a web chat idle for 30 minutes ends, and these are to stay open for the run.
    const total = await copyConversations(database.db, workspaceId, parameters.conversations, 20);
    await sql`analyze sessions, session_turns, session_messages`.execute(database.db);
    progress(name, `${total} open conversations; the agents come to work, ${parameters.agents / ENGINES} on each engine`);
    const working = next('working');
    child.send({ type: 'agents' });
    await working;

    progress(name, `visitors ask for a person, ${parameters.perSecond}/s: ${parameters.warmupSeconds} s warm-up, then ${parameters.seconds} s measured`);
    const measuring = next('measuring');
    const finished = next('finished');
    child.send({
      type: 'run',
      perSecond: parameters.perSecond,
      warmupSeconds: parameters.warmupSeconds,
      seconds: parameters.seconds,
      openMs: parameters.openMs,
      holdMs: parameters.holdMs,
      listIntervalMs: parameters.listIntervalMs,
      maxPerAgent: parameters.maxPerAgent,
    });
    // The agents' loads as the database holds them, from the first visitor to the last close.
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        sampledMax = Math.max(sampledMax, await loads(database.db, workspaceId));
        samples++;
        await new Promise((r) => setTimeout(r, SAMPLE_MS));
      }
    })();
    await measuring;
    for (const e of engines) e.record();
    results = await finished;
    sampling = false;
    await sampler;
    reports = await Promise.all(engines.map((e) => e.report()));
    load.end = round(loadavg()[0]!, 2);
    const ids = results.escalations.map((e) => e.conversationId);
    const { rows } = await sql<{ id: string; external_id: string }>`
      select id, external_id from sessions where workspace_id = ${workspaceId} and channel = 'webchat' and external_id = any(${ids}::text[])`.execute(database.db);
    sessionOf = new Map(rows.map((r) => [r.external_id, r.id]));
    const open = await sql<{ n: string }>`select count(*) as n from sessions where workspace_id = ${workspaceId} and status = 'active'`.execute(database.db);
    openAtEnd = Number(open.rows[0]!.n);
  } finally {
    if (child.connected) child.disconnect();
    await exited;
    await Promise.all(engines.map((e) => e.stop()));
    await database.close();
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
    await admin.close();
  }
  return summarizeRun(parameters, results, reports, sessionOf, { sampledMax, samples, openAtEnd }, load);
}

function summarizeRun(
  parameters: Parameters,
  results: HandoverResults,
  reports: EngineReport[],
  sessionOf: Map<string, string>,
  sampled: { sampledMax: number; samples: number; openAtEnd: number },
  load: { start: number; end: number },
): RunResult {
  const invalid: string[] = [];
  const errors = new Map<string, number>();
  for (const e of results.errors) errors.set(e.replace(/[0-9a-f-]{36}/g, '…'), (errors.get(e) ?? 0) + 1);
  if (results.errors.length > 0) invalid.push(`${results.errors.length} requests failed (${[...errors].slice(0, 5).map(([e, n]) => `${n} × ${e}`).join('; ')}).`);
  for (const broken of results.brokenStreams.slice(0, 5)) invalid.push(`An agent's inbox stream ended while they worked: ${broken}.`);
  if (results.toldAway > 0) invalid.push(`${results.toldAway} visitors were not told that a colleague will reply, though agents were available.`);

  const assignmentOf = new Map(results.assignments.map((a) => [a.sessionId, a]));
  const measured = results.escalations.filter((e) => e.measured);
  const waitedMs: number[] = [];
  const askedMs: number[] = [];
  const answeredMs: number[] = [];
  let otherEngine = 0;
  let neverAssigned = 0;
  let noSession = 0;
  for (const e of measured) {
    answeredMs.push(e.answeredAt - e.sentAt);
    const sessionId = sessionOf.get(e.conversationId);
    if (!sessionId) {
      noSession++;
      continue;
    }
    const a = assignmentOf.get(sessionId);
    if (!a) {
      neverAssigned++;
      continue;
    }
    waitedMs.push(a.seenAt - a.waitingSince);
    askedMs.push(a.seenAt - e.sentAt);
    if (a.agentEngine !== e.engine) otherEngine++;
  }
  if (measured.length === 0) invalid.push('No visitor asked for a person in the measured part.');
  if (noSession > 0) invalid.push(`${noSession} visitors' conversations have no session.`);
  if (neverAssigned > 0) invalid.push(`${neverAssigned} measured conversations were never assigned (within 20 s of the last visitor).`);
  if (results.assignedTwice.length > 0) invalid.push(`${results.assignedTwice.length} conversations were assigned more than once (first: ${results.assignedTwice.slice(0, 3).join(', ')}).`);
  if (results.maxLoad > parameters.maxPerAgent || sampled.sampledMax > parameters.maxPerAgent) {
    invalid.push(`An agent had ${Math.max(results.maxLoad, sampled.sampledMax)} conversations at once, above ASSIGN_MAX_PER_AGENT (${parameters.maxPerAgent}).`);
  }

  const waited = summarize(waitedMs);
  const asked = summarize(askedMs);
  const answered = summarize(answeredMs);
  const lists = summarize(results.listMs);
  const seconds = Math.max(...reports.map((r) => r.seconds), 1e-9);
  const percentOfCore = (micros: number) => round(micros / 1e4 / seconds, 0);
  const statementsOf = (key: string) =>
    reports.reduce(
      (sum, r) => ({ count: sum.count + (r.statements[key]?.count ?? 0), totalMs: sum.totalMs + (r.statements[key]?.totalMs ?? 0) }),
      { count: 0, totalMs: 0 },
    );
  const agentsRead = statementsOf('select team_presence');
  const metrics: Metric[] = [
    { key: 'waiting_to_assigned_p50_ms', label: "waiting → assigned, on the assignee's stream, p50", unit: 'ms', value: round(waited.p50, 1), digits: 1 },
    { key: 'waiting_to_assigned_p90_ms', label: "waiting → assigned, on the assignee's stream, p90", unit: 'ms', value: round(waited.p90, 1), digits: 1 },
    { key: 'waiting_to_assigned_p99_ms', label: "waiting → assigned, on the assignee's stream, p99", unit: 'ms', value: round(waited.p99, 1), digits: 1, target: { op: '<=', value: TARGET_P99_MS } },
    { key: 'waiting_to_assigned_max_ms', label: "waiting → assigned, on the assignee's stream, max", unit: 'ms', value: round(waited.max, 1), digits: 1 },
    { key: 'asked_to_assigned_p99_ms', label: "visitor's press of the button → assigned, on the assignee's stream, p99", unit: 'ms', value: round(asked.p99, 1), digits: 1 },
    { key: 'escalate_answered_p99_ms', label: 'of which POST …/escalate answered (the visitor told a colleague will reply), p99', unit: 'ms', value: round(answered.p99, 1), digits: 1 },
    { key: 'assignee_other_engine_percent', label: "assignees whose dashboard is on the other engine than the conversation", unit: '%', value: round((100 * otherEngine) / Math.max(1, waitedMs.length), 0) },
    { key: 'handovers', label: 'visitors who asked for a person (measured part)', unit: '', value: measured.length },
    { key: 'never_assigned', label: 'of them never assigned', unit: '', value: neverAssigned + noSession, target: { op: '=', value: 0 } },
    { key: 'assigned_twice', label: 'conversations assigned more than once (any stream, the whole run)', unit: '', value: results.assignedTwice.length, target: { op: '=', value: 0 } },
    { key: 'max_load_streams', label: 'most conversations one agent had at once, from their stream', unit: '', value: results.maxLoad, target: { op: '<=', value: parameters.maxPerAgent } },
    { key: 'max_load_database', label: 'most conversations one agent had at once, sampled in the database', unit: '', value: sampled.sampledMax, target: { op: '<=', value: parameters.maxPerAgent } },
    { key: 'assignments_at_cap', label: 'assignments that brought an agent to the cap', unit: '', value: results.atCap },
    { key: 'waiting_list_p99_ms', label: 'waiting view (GET /v1/inbox?view=waiting), p99', unit: 'ms', value: round(lists.p99, 2) },
    { key: 'assignment_agents_reads', label: "assignment rounds' reads of the available agents and their loads (both engines, measured part)", unit: '', value: agentsRead.count },
    { key: 'assignment_agents_read_mean_ms', label: 'of which mean round trip', unit: 'ms', value: round(agentsRead.totalMs / Math.max(1, agentsRead.count), 2) },
    { key: 'engine_loop_delay_p99_ms', label: 'engine event-loop delay p99 (worst engine)', unit: 'ms', value: Math.max(...reports.map((r) => r.loopDelayMs.p99)) },
    { key: 'engine_cpu_percent', label: 'engines CPU, % of a core (summed)', unit: '%', value: percentOfCore(reports.reduce((s, r) => s + r.cpuMicros, 0)) },
    { key: 'load_generator_cpu_percent', label: 'load generator CPU, % of a core', unit: '%', value: percentOfCore(results.cpuMicros) },
  ];
  const held = parameters.perSecond * (parameters.holdMs / 1000);
  const setup =
    `${parameters.engines} engine processes on one PostgreSQL, one workspace with ${parameters.conversations} open web chats the bot answers ` +
    `(${parameters.seedConversations} made through the widget, the rest copies in SQL); ${parameters.agents} agents, half on each engine, each with the inbox's stream open ` +
    `and available, reading the waiting view every ${parameters.listIntervalMs / 1000} s; ASSIGN_MAX_PER_AGENT ${parameters.maxPerAgent}. ` +
    `Visitors (a process of their own, with the agents) ask for a person with the widget's button at ${parameters.perSecond}/s, visitor n on engine n mod 2; ` +
    `the assignee takes the conversation over ${parameters.openMs / 1000} s after hearing of it, replies, and closes it ${parameters.holdMs / 1000} s after it was assigned ` +
    `(about ${Math.round(held)} held at once). ${parameters.warmupSeconds} s warm-up, then ${parameters.seconds} s measured. ` +
    `The figure: from waiting_since (the engine that decided the handoff) to the assigned change reaching the assignee's own stream, this machine's one clock. ` +
    `Load average ${load.start} at start, ${load.end} at end.`;
  const statements = Object.fromEntries(
    Object.entries(
      reports.reduce<Record<string, { count: number; totalMs: number }>>((all, r) => {
        for (const [k, v] of Object.entries(r.statements)) all[k] = { count: (all[k]?.count ?? 0) + v.count, totalMs: (all[k]?.totalMs ?? 0) + v.totalMs };
        return all;
      }, {}),
    )
      .sort((a, b) => b[1].totalMs - a[1].totalMs)
      .slice(0, 15)
      .map(([k, s]) => [k, { count: s.count, meanMs: round(s.totalMs / Math.max(1, s.count), 3) }]),
  );
  return {
    metrics,
    invalid,
    setup,
    parameters: { ...parameters },
    details: {
      loadAverage1m: load,
      waitingToAssignedMs: waited,
      askedToAssignedMs: asked,
      escalateAnsweredMs: answered,
      waitingListMs: lists,
      escalations: results.escalations.length,
      assignments: results.assignments.length,
      takeovers: results.takeovers,
      closes: results.closes,
      streamEventsMeasured: results.streamEvents,
      databaseSamples: sampled.samples,
      openConversationsAtEnd: sampled.openAtEnd,
      engines: reports.map((r) => ({ loopDelayMs: r.loopDelayMs, rssMiB: r.rssMiB, cpuPercent: percentOfCore(r.cpuMicros) })),
      statements,
    },
  };
}
