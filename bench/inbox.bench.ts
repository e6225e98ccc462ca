/**
 * The team's inbox at size: INBOX_BENCH_CONVERSATIONS (10,000) open WhatsApp conversations in one workspace on
 * PostgreSQL (BENCH_DATABASE_URL), INBOX_BENCH_AGENTS (50) agents each holding a few of them, replying and reading the
 * inbox at a fixed rate. The agents work as the dashboard does: each holds the inbox's stream open and is available
 * (presence), so waiting conversations are assigned to them up to ASSIGN_MAX_PER_AGENT, and every stream hears every
 * change of the workspace. Targets (on PostgreSQL): GET /v1/inbox p99 ≤ 50 ms, and an agent's reply to the Graph API
 * receiving its send p99 ≤ 100 ms.
 *
 * Processes: the engine (bench/processes/engine-process.ts) and the load generator (bench/processes/inbox-agents.ts: the
 * integrator, the Graph fake, the customers and the agents), and this one, which sets up, seeds and adds up.
 *
 * Seeding: INBOX_BENCH_CUSTOMERS (1,000) customers write through the real pipeline (a signed Meta webhook, a turn, the
 * bot's reply sent to the Graph fake; every tenth is handed to a person and waits, every twentieth is forwarded to the
 * team to follow up); their sessions, turns and messages are then copied in SQL, each copy a conversation of its
 * own, up to INBOX_BENCH_CONVERSATIONS, and the tables analysed. Then the agents come to work (stream open, available)
 * and take over conversations of the first kind (WhatsApp answers only a customer who wrote within 24 hours). Each
 * agent replies every INBOX_BENCH_REPLY_MS (1,000) and lists a view of the inbox (waiting, mine, open, followups in
 * turn) every INBOX_BENCH_LIST_MS (1,000); INBOX_BENCH_WARMUP_SECONDS (5) warm-up, then INBOX_BENCH_SECONDS (30)
 * measured. A reply that never reaches the Graph fake, or reaches it twice, a failed request, a stream that ends, or
 * no listed row assigned to anyone, makes the run invalid.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { migrate, openDatabase, type Db } from '../db/database.ts';
import { DEFAULT_ASSIGN_MAX_PER_AGENT } from '../src/config.ts';
import type { Metric, RunResult } from './lib/benchmark.ts';
import { envNumber, progress } from './lib/benchmark.ts';
import { nextMessage } from './lib/child-message.ts';
import { copyConversations } from './lib/inbox-seed.ts';
import { startEngineProcess, type EngineProcess, type EngineReport } from './processes/engine-process.ts';
import { round, summarize } from './lib/stats.ts';
import type { AgentsResults } from './processes/inbox-agents.ts';

export const name = 'inbox';
export const title = "The team's inbox: 10,000 open conversations, 50 agents replying";

const APP_SECRET = `bench-app-secret-${randomBytes(8).toString('hex')}`;
const CONVERSATIONS_PER_AGENT = 4;
const VIEWS = ['waiting', 'mine', 'open', 'followups'] as const;

type FromAgents =
  | { type: 'listening'; integrator: string; graph: string }
  | { type: 'seeded'; workspaceId: string; agents: number }
  | { type: 'taken' }
  | { type: 'measuring' }
  | AgentsResults;

export async function run(): Promise<RunResult> {
  const url = process.env.BENCH_DATABASE_URL;
  if (!url) throw new Error(`${name}: the targets are for PostgreSQL; set BENCH_DATABASE_URL (for example postgres://postgres@127.0.0.1:5432/test).`);
  const parameters = {
    conversations: envNumber('INBOX_BENCH_CONVERSATIONS', 10_000, { min: 1 }),
    customers: envNumber('INBOX_BENCH_CUSTOMERS', 1_000, { min: 1 }),
    agents: envNumber('INBOX_BENCH_AGENTS', 50, { min: 1 }),
    conversationsPerAgent: CONVERSATIONS_PER_AGENT,
    replyIntervalMs: envNumber('INBOX_BENCH_REPLY_MS', 1_000, { min: 10 }),
    listIntervalMs: envNumber('INBOX_BENCH_LIST_MS', 1_000, { min: 10 }),
    warmupSeconds: envNumber('INBOX_BENCH_WARMUP_SECONDS', 5, { min: 1 }),
    seconds: envNumber('INBOX_BENCH_SECONDS', 30, { min: 1 }),
    // The engine's default (ASSIGN_MAX_PER_AGENT, src/config.ts): the conversations the assignment gives one person.
    maxPerAgent: DEFAULT_ASSIGN_MAX_PER_AGENT,
    poolSize: 16,
    database: 'postgres',
  };
  if (parameters.customers < parameters.agents * CONVERSATIONS_PER_AGENT) {
    throw new RangeError(`INBOX_BENCH_CUSTOMERS must be at least ${CONVERSATIONS_PER_AGENT} per agent (${parameters.agents * CONVERSATIONS_PER_AGENT})`);
  }
  const load = { start: round(loadavg()[0]!, 2), end: 0 };
  const schema = `bench_inbox_${randomBytes(4).toString('hex')}`;
  const admin = await openDatabase({ url, poolSize: 1 });
  await sql`create schema ${sql.id(schema)}`.execute(admin.db);
  const database = await openDatabase({ url, schema, poolSize: 2 });
  const child = fork(new URL('./processes/inbox-agents.ts', import.meta.url), [], { execPath: process.execPath, execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = once(child, 'exit');
  const next = <T extends FromAgents['type']>(type: T) => nextMessage<FromAgents, T>(child, type, 'the inbox load generator');
  let engine: EngineProcess | undefined;
  let results: AgentsResults;
  let report: EngineReport;
  let plans: Record<string, string>;
  try {
    await migrate(database.db, schema);
    const peers = await next('listening');
    const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;
    engine = await startEngineProcess({
      env: {
        PORT: '0',
        HOST: '127.0.0.1',
        MASTER_KEY: randomBytes(32).toString('hex'),
        ADMIN_TOKEN: adminToken,
        OUTBOUND_ALLOW: '127.0.0.1/32',
        WHATSAPP_APP_SECRET: APP_SECRET,
        WHATSAPP_VERIFY_TOKEN: 'bench-verify-token',
        WHATSAPP_GRAPH_URL: peers.graph,
        ASSIGN_MAX_PER_AGENT: String(parameters.maxPerAgent),
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      },
      database: { url, schema, poolSize: parameters.poolSize },
      instanceId: 'bench-inbox-engine',
    });
    progress(name, `seeding: ${parameters.customers} WhatsApp customers through the pipeline, ${parameters.agents} agents`);
    const seeded = next('seeded');
    child.send({ type: 'setup', engine: engine.url, adminToken, appSecret: APP_SECRET, customers: parameters.customers, agents: parameters.agents });
    const { workspaceId } = await seeded;
    const { rows } = await sql<{ id: string }>`
      select id from sessions where workspace_id = ${workspaceId} and channel = 'whatsapp' order by random() limit ${parameters.agents * CONVERSATIONS_PER_AGENT}`.execute(database.db);
    const total = await copyConversations(database.db, workspaceId, parameters.conversations);
    await sql`analyze sessions, session_turns, session_messages`.execute(database.db);
    progress(name, `${total} open conversations; each agent takes over ${CONVERSATIONS_PER_AGENT}`);
    const taken = next('taken');
    child.send({ type: 'agents', conversations: rows.map((r) => r.id) });
    await taken;
    plans = await explainViews(database.db, workspaceId);

    progress(name, `agents at work: ${parameters.warmupSeconds} s warm-up, then ${parameters.seconds} s measured`);
    const measuring = next('measuring');
    const finished = next('finished');
    child.send({ type: 'run', warmupSeconds: parameters.warmupSeconds, seconds: parameters.seconds, replyIntervalMs: parameters.replyIntervalMs, listIntervalMs: parameters.listIntervalMs });
    await measuring;
    engine.record();
    results = await finished;
    report = await engine.report();
    load.end = round(loadavg()[0]!, 2);
  } finally {
    if (child.connected) child.disconnect();
    await exited;
    await engine?.stop();
    await database.close();
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
    await admin.close();
  }
  return summarizeRun(parameters, results, report, load, plans);
}

/** The plan of each view's query as the engine runs it (the list's statement, with the workspace's values). */
async function explainViews(db: Db, workspaceId: string): Promise<Record<string, string>> {
  const plans: Record<string, string> = {};
  const { rows } = await sql<{ id: string }>`select agent_user_id as id from sessions where workspace_id = ${workspaceId} and agent_user_id is not null limit 1`.execute(db);
  const { inboxRepository } = await import('../db/repositories/inbox.repository.ts');
  for (const view of VIEWS) {
    let text = '';
    const compiled = await captureQuery(db, (d) => inboxRepository(d).list(workspaceId, rows[0]?.id ?? workspaceId, view, 200));
    if (compiled) {
      const result = await sql.raw<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${inline(compiled.sql, compiled.parameters)}`).execute(db);
      text = result.rows.map((r) => r['QUERY PLAN']).join('\n');
    }
    plans[view] = text;
  }
  return plans;
}

/** The SQL and parameters of the first statement `use` runs, without running it. */
async function captureQuery(db: Db, use: (db: Db) => Promise<unknown>): Promise<{ sql: string; parameters: readonly unknown[] } | null> {
  let captured: { sql: string; parameters: readonly unknown[] } | null = null;
  const stop = new Error('captured');
  const spy = db.withPlugin({
    transformQuery: (args) => args.node,
    transformResult: async (args) => args.result,
  });
  const executor = spy.getExecutor();
  const original = executor.executeQuery.bind(executor);
  executor.executeQuery = (async (compiled: { sql: string; parameters: readonly unknown[] }) => {
    captured = { sql: compiled.sql, parameters: compiled.parameters };
    throw stop;
  }) as unknown as typeof executor.executeQuery;
  try {
    await use(spy);
  } catch (err) {
    if (err !== stop) throw err;
  } finally {
    executor.executeQuery = original;
  }
  return captured;
}

/** `$n` placeholders replaced by literals (strings quoted), for EXPLAIN. */
function inline(text: string, parameters: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_m, n: string) => {
    const value = parameters[Number(n) - 1];
    if (typeof value === 'number') return String(value);
    return `'${String(value).replaceAll("'", "''")}'`;
  });
}

function summarizeRun(
  parameters: Record<'conversations' | 'agents' | 'replyIntervalMs' | 'listIntervalMs' | 'warmupSeconds' | 'seconds' | 'customers' | 'maxPerAgent', number>,
  results: AgentsResults,
  report: EngineReport,
  load: { start: number; end: number },
  plans: Record<string, string>,
): RunResult {
  const invalid: string[] = [];
  const errors = new Map<string, number>();
  for (const e of results.errors) errors.set(e, (errors.get(e) ?? 0) + 1);
  if (results.errors.length > 0) invalid.push(`${results.errors.length} requests failed (${[...errors].slice(0, 5).map(([e, n]) => `${n} × ${e}`).join('; ')}).`);
  if (results.neverSent > 0) invalid.push(`${results.neverSent} agent replies never reached the Graph API.`);
  if (results.sentTwice > 0) invalid.push(`${results.sentTwice} agent replies reached the Graph API twice.`);
  if (results.replies === 0) invalid.push('No agent reply was measured.');
  for (const broken of results.brokenStreams.slice(0, 5)) invalid.push(`An agent's inbox stream ended while they worked: ${broken}.`);
  if (results.rowsAssigned === 0) invalid.push('No listed conversation was assigned to anyone, though the agents were available: the assignment did not run.');
  const lists = summarize(...Object.values(results.listMs));
  const byView = Object.fromEntries(Object.entries(results.listMs).map(([view, ms]) => [view, summarize(ms)]));
  const toGraph = summarize(results.replyToGraphMs);
  const post = summarize(results.postMs);
  const percentOfCore = (micros: number) => round(micros / 1e4 / Math.max(report.seconds, 1e-9), 0);
  const metrics: Metric[] = [
    { key: 'inbox_list_p50_ms', label: 'inbox list (GET /v1/inbox, every view), p50', unit: 'ms', value: round(lists.p50, 2) },
    { key: 'inbox_list_p99_ms', label: 'inbox list (GET /v1/inbox, every view), p99', unit: 'ms', value: round(lists.p99, 2), target: { op: '<=', value: 50 } },
    ...VIEWS.map((view) => ({
      key: `inbox_${view}_p99_ms`,
      label: `of which view=${view}, p99`,
      unit: 'ms',
      value: round(byView[view]!.p99, 2),
    })),
    { key: 'reply_to_graph_p50_ms', label: "agent's reply to the Graph API receiving it, p50", unit: 'ms', value: round(toGraph.p50, 2) },
    { key: 'reply_to_graph_p99_ms', label: "agent's reply to the Graph API receiving it, p99", unit: 'ms', value: round(toGraph.p99, 2), target: { op: '<=', value: 100 } },
    { key: 'reply_post_p99_ms', label: 'of which POST /v1/sessions/{id}/messages answered, p99', unit: 'ms', value: round(post.p99, 2) },
    { key: 'replies', label: 'agent replies (measured part)', unit: '', value: results.replies },
    { key: 'lists', label: 'inbox lists (measured part)', unit: '', value: results.lists },
    { key: 'never_sent', label: 'replies that never reached the Graph API', unit: '', value: results.neverSent, target: { op: '=', value: 0 } },
    { key: 'rows_assigned_percent', label: 'listed rows naming who they are assigned to', unit: '%', value: round((100 * results.rowsAssigned) / Math.max(1, results.rowsListed), 0) },
    { key: 'stream_events_per_second', label: "inbox changes heard on the agents' streams (all streams summed)", unit: '/s', value: round(results.streamEvents / parameters.seconds, 0) },
    { key: 'event_loop_delay_p99_ms', label: 'engine event-loop delay p99', unit: 'ms', value: report.loopDelayMs.p99 },
    { key: 'engine_cpu_percent', label: 'engine CPU, % of a core', unit: '%', value: percentOfCore(report.cpuMicros) },
    { key: 'load_generator_cpu_percent', label: 'load generator CPU, % of a core', unit: '%', value: percentOfCore(results.cpuMicros) },
  ];
  const replyRate = (parameters.agents * 1000) / parameters.replyIntervalMs;
  const listRate = (parameters.agents * 1000) / parameters.listIntervalMs;
  const setup =
    `${parameters.conversations} open WhatsApp conversations in one workspace on PostgreSQL (${parameters.customers} made through the pipeline, ` +
    `the rest copies of them in SQL; every tenth waiting for a person, every twentieth forwarded to the team), ${parameters.agents} agents, ` +
    `each with the inbox's stream open and available (waiting conversations assigned to them up to ${parameters.maxPerAgent} each), holding ${CONVERSATIONS_PER_AGENT} each; ` +
    `together ${replyRate} replies/s and ${listRate} inbox lists/s (views waiting, mine, open, followups in turn; at most 200 rows each), an open loop; ` +
    `the engine, and the load generator (agents, Graph fake, integrator) in processes of their own; ${parameters.warmupSeconds} s warm-up, then ` +
    `${parameters.seconds} s measured. Load average ${load.start} at start, ${load.end} at end.`;
  const statements = Object.fromEntries(
    Object.entries(report.statements)
      .sort((a, b) => b[1].totalMs - a[1].totalMs)
      .slice(0, 15)
      .map(([k, s]) => [k, { count: s.count, meanMs: round(s.totalMs / Math.max(1, s.count), 3) }]),
  );
  return {
    metrics,
    invalid,
    setup,
    parameters: { ...parameters, conversationsPerAgent: CONVERSATIONS_PER_AGENT },
    details: {
      loadAverage1m: load,
      listSizes: results.listSizes,
      rows: { listed: results.rowsListed, assigned: results.rowsAssigned, withCustomerWords: results.rowsWithCustomerWords },
      byView,
      replyToGraphMs: toGraph,
      postMs: post,
      engine: { loopDelayMs: report.loopDelayMs, rssMiB: report.rssMiB },
      statements,
      plans,
    },
  };
}
