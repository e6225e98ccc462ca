/**
 * The load generator of the inbox-assignment benchmark (bench/inbox-assignment.bench.ts forks it), in a process of its
 * own: the website's visitors and the team's agents, against two engines on one PostgreSQL.
 *
 * - **Visitors** open a web chat (POST /v1/webchat/conversations) and press the widget's button for a person
 *   (POST …/escalate) at a steady rate, an open loop; visitor n on engine n mod 2, both of its requests there (the
 *   conversation runs where it started), each visitor from a loopback address of its own as on the web (the widget's
 *   budget is per address).
 * - **Agents** work as the dashboard does: each holds the inbox's stream (GET /v1/inbox/events) open on one engine
 *   (the first half of them on engine 0, the rest on engine 1), which keeps them available, says so
 *   (PUT /v1/me/presence), and reads the waiting view now and then (the badge and the list). When a conversation is
 *   assigned to them (an `assigned` change naming them on their own stream) they open it, take it over, reply, and
 *   close it a while later.
 *
 * What is measured here: when each `assigned` change reached the assignee's stream (the wall clock, the clock of the
 * engines' `waiting_since` on this one machine), and when each visitor asked and was answered. The bench process
 * matches visitors' conversations to sessions in the database and adds up.
 *
 * Every stream hears every change of the workspace, so each counts the `assigned` changes per conversation it heard:
 * a conversation announced twice, or to two people, on any stream is counted. Each agent's load (conversations
 * assigned to them that they have not begun to close) is counted from their own stream; counted this way it is never
 * above what the database holds at that moment, so a count above ASSIGN_MAX_PER_AGENT is a real breach.
 *
 * IPC, in order: → listening; ← setup; → seeded {workspaceId}; ← agents; → working {userIds}; ← run; → measuring
 * (after the warm-up); → finished {…}. It exits when the parent goes away.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import { phrase } from '../../src/ai/phrases.ts';
import { openEventStream, wallNow, type EventStream } from '../lib/event-stream.ts';

export interface HandoverSetup {
  type: 'setup';
  engines: string[];
  adminToken: string;
  agents: number;
  /** Web chat conversations the bot answers, made through the route before the copies in SQL. */
  seedConversations: number;
}

export interface HandoverPlan {
  type: 'run';
  /** Visitors asking for a person per second. */
  perSecond: number;
  warmupSeconds: number;
  seconds: number;
  /** From an assignment to the agent taking the conversation over (they open it and read). */
  openMs: number;
  /** From an assignment to the agent closing the conversation. */
  holdMs: number;
  /** Each agent reads the waiting view this often. */
  listIntervalMs: number;
  /** ASSIGN_MAX_PER_AGENT of the engines. */
  maxPerAgent: number;
}

/** One visitor's request for a person. Times are wall-clock ms. */
export interface Escalation {
  conversationId: string;
  engine: number;
  measured: boolean;
  sentAt: number;
  answeredAt: number;
}

/** One `assigned` change as the assignee's own stream heard it. */
export interface Assignment {
  sessionId: string;
  userId: string;
  agentEngine: number;
  waitingSince: number;
  seenAt: number;
}

export interface HandoverResults {
  type: 'finished';
  escalations: Escalation[];
  assignments: Assignment[];
  /** Conversations whose `assigned` change some stream heard more than once, or naming two people. */
  assignedTwice: string[];
  /** The most conversations one agent had at once (assigned to them, not yet being closed), and how often an agent was at the cap. */
  maxLoad: number;
  atCap: number;
  /** Escalations answered with the sentence for a team nobody of which is available. */
  toldAway: number;
  /** Measured GET /v1/inbox?view=waiting round trips, ms. */
  listMs: number[];
  takeovers: number;
  closes: number;
  /** Inbox changes all streams heard in the measured part. */
  streamEvents: number;
  errors: string[];
  brokenStreams: string[];
  cpuMicros: number;
  /** Escalations not yet assigned when the settle time ran out. */
  unsettled: number;
}

type FromParent = HandoverSetup | { type: 'agents' } | HandoverPlan;

const SHOP_ORIGIN = 'https://shop.example';
const SETTLE_MS = 20_000;
const WAITING_SENTENCE = phrase('handoff_waiting', 'en');
const AWAY_SENTENCE = phrase('handoff_waiting_closed', 'en');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const send = (message: object) => process.send!(message);

let engines: string[] = [];
let workspaceId = '';
let widgetKey = '';
const team: { token: string; userId: string; engine: number; load: Set<string> }[] = [];
const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 60_000 });

type Answer = { status: number; body: Record<string, unknown> };

async function api(base: string, method: string, path: string, token: string | null, body?: unknown): Promise<Answer> {
  const res = await request(base + path, {
    method: method as 'GET',
    dispatcher,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function must(base: string, method: string, path: string, token: string | null, body?: unknown): Promise<Record<string, unknown>> {
  const res = await api(base, method, path, token, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const visitorAgents = new Map<number, Agent>();
/** A connection pool bound to one of 250 loopback addresses (127.0.1.1 to 127.0.1.250), one per visitor in turn. */
function visitorAgent(n: number): Agent {
  const slot = n % 250;
  let agent = visitorAgents.get(slot);
  if (!agent) {
    agent = new Agent({ localAddress: `127.0.1.${slot + 1}`, keepAliveTimeout: 10_000 });
    visitorAgents.set(slot, agent);
  }
  return agent;
}

/** A visitor's widget request: the widget key, the shop's origin, the visitor's token once they have one. */
async function widget(n: number, path: string, body: unknown, visitorToken?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await request(`${engines[n % engines.length]}/v1/webchat/conversations${path}`, {
    method: 'POST',
    dispatcher: visitorAgent(n),
    headers: { 'content-type': 'application/json', 'x-widget-key': widgetKey, origin: SHOP_ORIGIN, ...(visitorToken ? { 'x-visitor-token': visitorToken } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** The workspace, its widget for the shop's origin, the agents (each signs in through an invite), and chats the bot answers. */
async function setUp(setup: HandoverSetup): Promise<void> {
  engines = setup.engines;
  const base = engines[0]!;
  const run = randomBytes(3).toString('hex');
  const created = await must(base, 'POST', '/v1/admin/workspaces', setup.adminToken, { name: `Assignment bench ${run}`, owner_email: `owner@assign-${run}.example` });
  const owner = (created.owner as { token: string }).token;
  workspaceId = (created.workspace as { id: string }).id;
  widgetKey = (await must(base, 'GET', '/v1/keys/widget', owner)).key as string;
  await must(base, 'PUT', '/v1/webchat', owner, { allowed_origins: [SHOP_ORIGIN] });
  for (let a = 0; a < setup.agents; a++) {
    const made = await must(base, 'POST', '/v1/users', owner, { email: `agent${a}@assign-${run}.example`, role: 'agent' });
    const invite = new URL(made.invite_url as string).hash.slice(1);
    const signedIn = await must(base, 'POST', '/v1/auth/password', null, { invite, password: `bench-password-${run}-${a}` });
    // The first half on engine 0, the rest on engine 1: visitors alternate engines, so an assignment in turn lands on
    // either (agents alternating too would pair every conversation with an agent on its own engine).
    const engine = Math.floor((a * engines.length) / setup.agents);
    team.push({ token: signedIn.token as string, userId: (signedIn.user as { id: string }).id, engine, load: new Set() });
  }
  // Chats the bot answers (nobody asks for a person): the workspace's open conversations, copied up to size in SQL.
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < setup.seedConversations) {
        const n = next++;
        const opened = await widget(n, '', { visitor_message: `Do you ship to Utrecht? (seed ${n})`, page_url: `${SHOP_ORIGIN}/p/${n}` });
        if (opened.status !== 201) throw new Error(`seed chat ${n}: ${opened.status} ${JSON.stringify(opened.body)}`);
      }
    }),
  );
}

// What the streams heard. Every stream hears every change, so these count per stream.
const results: HandoverResults = {
  type: 'finished', escalations: [], assignments: [], assignedTwice: [], maxLoad: 0, atCap: 0, toldAway: 0, listMs: [],
  takeovers: 0, closes: 0, streamEvents: 0, errors: [], brokenStreams: [], cpuMicros: 0, unsettled: 0,
};
const heard = new Map<string, { users: Set<string>; most: number }>();
const streams: EventStream[] = [];
let plan: HandoverPlan | null = null;
let stopping = false;
const inFlight = new Set<Promise<void>>();

function track(job: Promise<void>): void {
  inFlight.add(job);
  void job.finally(() => inFlight.delete(job));
}

/** Agent `a` was told on their stream that `sessionId` is theirs: they open it, take it over, reply, and close it later. */
function assignedToMe(a: number, sessionId: string, waitingSince: number, seenAt: number): void {
  const agent = team[a]!;
  if (agent.load.has(sessionId) || !plan) return;
  agent.load.add(sessionId);
  results.maxLoad = Math.max(results.maxLoad, agent.load.size);
  if (agent.load.size >= plan.maxPerAgent) results.atCap++;
  results.assignments.push({ sessionId, userId: agent.userId, agentEngine: agent.engine, waitingSince, seenAt });
  const { openMs, holdMs } = plan;
  const base = engines[agent.engine]!;
  track(
    (async () => {
      await sleep(openMs);
      const taken = await api(base, 'POST', `/v1/sessions/${sessionId}/takeover`, agent.token);
      if (taken.status !== 200) return void results.errors.push(`takeover ${taken.status} ${JSON.stringify(taken.body).slice(0, 200)}`);
      results.takeovers++;
      const replied = await api(base, 'POST', `/v1/sessions/${sessionId}/messages`, agent.token, { text: 'Hello, this is your colleague from the shop. How can I help?' });
      if (replied.status !== 201) results.errors.push(`reply ${replied.status} ${JSON.stringify(replied.body).slice(0, 200)}`);
      await sleep(Math.max(0, holdMs - openMs));
      // No longer counted from the moment the close is sent: so the count is never above the database's.
      agent.load.delete(sessionId);
      const closed = await api(base, 'POST', `/v1/sessions/${sessionId}/close`, agent.token);
      if (closed.status !== 200) return void results.errors.push(`close ${closed.status} ${JSON.stringify(closed.body).slice(0, 200)}`);
      results.closes++;
    })().catch((err: unknown) => void results.errors.push(`agent ${a}: ${String(err)}`)),
  );
}

/** Agent `a` comes to work: the inbox's stream open on their engine, then available in the header. */
async function comeToWork(a: number): Promise<void> {
  const agent = team[a]!;
  const base = engines[agent.engine]!;
  const stream = await openEventStream(`${base}/v1/inbox/events`, { authorization: `Bearer ${agent.token}` }, (type, data, at) => {
    if (type !== 'conversation') return;
    if (counting) results.streamEvents++;
    const change = JSON.parse(data) as { id: string; reason: string; waiting_since: string | null; assigned_to?: { user_id: string } | null };
    if (change.reason !== 'assigned' || !change.assigned_to) return;
    // Per stream: how often this stream heard the conversation assigned, and to whom (any stream).
    const key = `${change.id}`;
    const entry = heard.get(key) ?? { users: new Set<string>(), most: 0 };
    heard.set(key, entry);
    entry.users.add(change.assigned_to.user_id);
    const count = (perStream[a]!.get(key) ?? 0) + 1;
    perStream[a]!.set(key, count);
    entry.most = Math.max(entry.most, count);
    if (change.assigned_to.user_id === agent.userId) assignedToMe(a, change.id, Date.parse(change.waiting_since ?? ''), at);
  });
  streams.push(stream);
  void stream.ended.then((why) => {
    if (why !== null && !stopping) results.brokenStreams.push(`agent ${a}'s stream: ${why}`);
  });
  await must(base, 'PUT', '/v1/me/presence', agent.token, { status: 'available' });
}
const perStream: Map<string, number>[] = [];
let counting = false;

/** Calls `work` every `intervalMs` from `offsetMs` (an open loop) until `until`. */
async function every(intervalMs: number, offsetMs: number, until: number, work: (i: number) => Promise<void>): Promise<void> {
  let due = performance.now() + offsetMs;
  for (let i = 0; due < until; i++) {
    await sleep(Math.max(0, due - performance.now()));
    track(work(i));
    due += intervalMs;
  }
}

async function run(p: HandoverPlan): Promise<HandoverResults> {
  plan = p;
  const started = performance.now();
  const measureFrom = started + p.warmupSeconds * 1000;
  const until = measureFrom + p.seconds * 1000;
  let cpuAt = process.cpuUsage();
  setTimeout(() => {
    cpuAt = process.cpuUsage();
    counting = true;
    send({ type: 'measuring' });
  }, p.warmupSeconds * 1000);

  const visitor = async (n: number) => {
    const measured = performance.now() >= measureFrom;
    const opened = await widget(n, '', { visitor_message: `Where is my order ${n}?`, page_url: `${SHOP_ORIGIN}/orders` });
    if (opened.status !== 201) return void results.errors.push(`chat ${opened.status} ${JSON.stringify(opened.body).slice(0, 200)}`);
    const conversationId = opened.body.conversation_id as string;
    const sentAt = wallNow();
    const asked = await widget(n, `/${conversationId}/escalate`, { message: `Order ${n}: can I talk to someone?` }, String(opened.body.visitor_token));
    const answeredAt = wallNow();
    if (asked.status !== 200) return void results.errors.push(`escalate ${asked.status} ${JSON.stringify(asked.body).slice(0, 200)}`);
    const reply = String(asked.body.reply ?? '');
    if (reply.includes(AWAY_SENTENCE) || !reply.includes(WAITING_SENTENCE)) results.toldAway++;
    results.escalations.push({ conversationId, engine: n % engines.length, measured, sentAt, answeredAt });
  };
  const lists = team.map((agent, a) =>
    every(p.listIntervalMs, (a / team.length) * p.listIntervalMs, until, async () => {
      const t0 = performance.now();
      const res = await api(engines[agent.engine]!, 'GET', '/v1/inbox?view=waiting', agent.token).catch((err: unknown) => ({ status: 0, body: { error: String(err) } }));
      const t1 = performance.now();
      if (res.status !== 200) return void results.errors.push(`inbox ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      if (t0 >= measureFrom) results.listMs.push(t1 - t0);
    }),
  );
  const visitors = new Set<Promise<void>>();
  await Promise.all([
    every(1000 / p.perSecond, 0, until, (n) => {
      const job = visitor(n).catch((err: unknown) => void results.errors.push(`visitor ${n}: ${String(err)}`));
      visitors.add(job);
      void job.finally(() => visitors.delete(job));
      return job;
    }),
    ...lists,
  ]);
  counting = false;
  while (visitors.size > 0) await Promise.all([...visitors]);
  const cpu = process.cpuUsage(cpuAt);
  results.cpuMicros = cpu.user + cpu.system;
  // Every visitor's conversation is assigned once: wait for the last ones.
  const settleUntil = performance.now() + SETTLE_MS;
  while (results.assignments.length < results.escalations.length && performance.now() < settleUntil) await sleep(100);
  results.unsettled = Math.max(0, results.escalations.length - results.assignments.length);
  // The agents finish what they hold (their closes), then leave.
  while (inFlight.size > 0) await Promise.all([...inFlight]);
  stopping = true;
  for (const stream of streams) stream.close();
  for (const [id, entry] of heard) if (entry.most > 1 || entry.users.size > 1) results.assignedTwice.push(id);
  return results;
}

process.on('message', (message: FromParent) => {
  void (async () => {
    if (message.type === 'setup') {
      await setUp(message);
      send({ type: 'seeded', workspaceId });
    } else if (message.type === 'agents') {
      for (let a = 0; a < team.length; a++) perStream.push(new Map());
      for (let a = 0; a < team.length; a++) await comeToWork(a);
      send({ type: 'working', userIds: team.map((t) => t.userId) });
    } else if (message.type === 'run') {
      send(await run(message));
    }
  })().catch((err: unknown) => {
    process.stderr.write(`inbox handovers failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
});
process.on('disconnect', () => process.exit(0));
send({ type: 'listening' });
