/**
 * The load generator of the inbox benchmark (bench/inbox.bench.ts forks it), in a process of its own: everyone the
 * engine talks to or hears from. The integrator (every tenth customer's question is handed to a person, every
 * twentieth is forwarded to the team to follow up), Meta's Graph API (where WhatsApp replies are sent), the WhatsApp
 * customers who open the conversations, and the team's agents. The agents work as a dashboard does: each holds the
 * inbox's stream open (GET /v1/inbox/events, which keeps them available) and says they are available
 * (PUT /v1/me/presence), so waiting conversations are assigned to them; each takes conversations over, replies and
 * reads the inbox's views in turn.
 *
 * An agent's reply carries a reference (`[a<agent>m<n>]`); the Graph fake notes when each reference arrives, so the
 * time from the agent's POST to the send reaching Meta is measured on one clock, and a reference that never arrives
 * or arrives twice is counted.
 *
 * IPC, in order: → listening {integrator, graph}; ← setup {engine, adminToken, …}; → seeded {workspaceId, agents};
 * ← agents {conversations} (the agents open their streams, become available, and take these over); → taken;
 * ← run {warmupSeconds, seconds}; → measuring (after the warm-up); → finished {…}. It exits when the parent goes away.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Agent, request } from 'undici';
import { signWebhookBody } from '../../src/channels/whatsapp/signature.ts';
import { metaTextMessage } from '../../harness/meta-webhook.ts';
import { openEventStream, type EventStream } from '../lib/event-stream.ts';
import { https } from '../lib/https-peer.ts';

export interface SetupMessage {
  type: 'setup';
  engine: string;
  adminToken: string;
  appSecret: string;
  customers: number;
  agents: number;
}

export interface AgentsResults {
  type: 'finished';
  /** Agent's POST to the Graph fake receiving the send, ms (measured part). */
  replyToGraphMs: number[];
  /** The POST /v1/sessions/{id}/messages round trip, ms. */
  postMs: number[];
  /** GET /v1/inbox round trips by view, ms. */
  listMs: Record<string, number[]>;
  /** Largest number of conversations one list answered, by view. */
  listSizes: Record<string, number>;
  /** Rows of the measured lists that named who the conversation is assigned to, and that carried the customer's words. */
  rowsAssigned: number;
  rowsWithCustomerWords: number;
  rowsListed: number;
  /** Inbox changes the agents' streams received in the measured part (every stream hears the workspace's changes). */
  streamEvents: number;
  /** Streams that ended or failed while the agents worked. */
  brokenStreams: string[];
  replies: number;
  lists: number;
  neverSent: number;
  sentTwice: number;
  errors: string[];
  cpuMicros: number;
}

type FromParent =
  | SetupMessage
  | { type: 'agents'; conversations: string[] }
  | { type: 'run'; warmupSeconds: number; seconds: number; replyIntervalMs: number; listIntervalMs: number };

const PHONE_NUMBER_ID = '106540352242922';
const ACCESS_TOKEN = `EAAGbench${randomBytes(12).toString('hex')}`;
const VIEWS = ['waiting', 'mine', 'open', 'followups'] as const;
const REF = /\[a\d+m\d+\]/;
const HANDOFF_WORDS = 'may I talk to a person';
const FORWARD_WORDS = 'please call me back';
const SETTLE_MS = 15_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const send = (message: object) => process.send!(message);

function json(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const graphSeen = { bot: 0, agentAt: new Map<string, number>(), agentTwice: 0 };
let graphSent = 0;

const integrator = await https((req, res, body) => {
  if (req.method === 'GET') return json(res, 200, { tools: [] }); // the tools manifest: none
  const { message } = JSON.parse(body.toString('utf8')) as { message: string };
  const handoff = message.includes(HANDOFF_WORDS) ? 'human' : message.includes(FORWARD_WORDS) ? 'forward' : null;
  const reply = handoff === 'human' ? 'A colleague will answer you here.' : handoff === 'forward' ? 'We will call you back today.' : 'Your order ships tomorrow.';
  json(res, 200, { reply, handled: true, handoff });
});
const graph = await https((_req, res, body) => {
  const text = (JSON.parse(body.toString('utf8')) as { text?: { body?: string } }).text?.body ?? '';
  const ref = REF.exec(text)?.[0];
  if (ref) {
    if (graphSeen.agentAt.has(ref)) graphSeen.agentTwice++;
    else graphSeen.agentAt.set(ref, performance.now());
  } else graphSeen.bot++;
  json(res, 200, { messaging_product: 'whatsapp', messages: [{ id: `wamid.BENCH${++graphSent}` }] });
});

let engine = '';
const dispatcher = new Agent({ connections: 128, keepAliveTimeout: 60_000 });

async function api(method: string, path: string, token: string | null, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await request(engine + path, {
    method: method as 'GET',
    dispatcher,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function must(method: string, path: string, token: string | null, body?: unknown): Promise<Record<string, unknown>> {
  const res = await api(method, path, token, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A Meta text-message webhook from customer `n`, signed with the app secret. */
async function customerWrites(appSecret: string, n: number): Promise<void> {
  const waId = `316${String(n).padStart(8, '0')}`;
  const text = n % 10 === 0 ? `Order ${n}: ${HANDOFF_WORDS}?` : n % 20 === 5 ? `Order ${n} is late, ${FORWARD_WORDS}.` : `Where is my order ${n}?`;
  const body = JSON.stringify(metaTextMessage({ phoneNumberId: PHONE_NUMBER_ID, waId, messageId: `wamid.IN${randomBytes(8).toString('hex')}`, text, name: `Customer ${n}` }));
  const signature = signWebhookBody(appSecret, body);
  const res = await request(`${engine}/v1/whatsapp/webhook`, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, body });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`webhook of customer ${n}: ${res.statusCode}`);
}

/** Workspace, WhatsApp, integrator, the agents (each signs in through an invite), then every customer's first message answered. */
async function setUp(setup: SetupMessage): Promise<{ workspaceId: string; tokens: string[] }> {
  engine = setup.engine;
  const run = randomBytes(3).toString('hex');
  const created = await must('POST', '/v1/admin/workspaces', setup.adminToken, { name: `Inbox bench ${run}`, owner_email: `owner@inbox-${run}.example` });
  const owner = (created.owner as { token: string }).token;
  const workspaceId = (created.workspace as { id: string }).id;
  await must('PUT', '/v1/integration', owner, { endpoint_url: `${integrator.origin}/botlink/channel` });
  await must('PUT', '/v1/whatsapp', owner, { phone_number_id: PHONE_NUMBER_ID, access_token: ACCESS_TOKEN });
  const tokens: string[] = [];
  for (let a = 0; a < setup.agents; a++) {
    const made = await must('POST', '/v1/users', owner, { email: `agent${a}@inbox-${run}.example`, role: 'agent' });
    const invite = new URL(made.invite_url as string).hash.slice(1);
    const signedIn = await must('POST', '/v1/auth/password', null, { invite, password: `bench-password-${run}-${a}` });
    tokens.push(signedIn.token as string);
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < setup.customers) await customerWrites(setup.appSecret, next++);
    }),
  );
  const deadline = Date.now() + 120_000;
  while (graphSeen.bot < setup.customers) {
    if (Date.now() > deadline) throw new Error(`only ${graphSeen.bot} of ${setup.customers} customers were answered within 2 minutes`);
    await sleep(200);
  }
  return { workspaceId, tokens };
}

/** Calls `work` every `intervalMs` from `offsetMs` (an open loop: a slow answer does not delay the next call) until `until`. */
async function every(intervalMs: number, offsetMs: number, until: number, work: () => Promise<void>, inFlight: Set<Promise<void>>): Promise<void> {
  let due = performance.now() + offsetMs;
  while (due < until) {
    await sleep(Math.max(0, due - performance.now()));
    const job = work();
    inFlight.add(job);
    void job.finally(() => inFlight.delete(job));
    due += intervalMs;
  }
}

async function runAgents(tokens: string[], held: string[][], plan: Extract<FromParent, { type: 'run' }>): Promise<AgentsResults> {
  const results: AgentsResults = {
    type: 'finished',
    replyToGraphMs: [],
    postMs: [],
    listMs: Object.fromEntries(VIEWS.map((view) => [view, []])),
    listSizes: Object.fromEntries(VIEWS.map((view) => [view, 0])),
    rowsAssigned: 0,
    rowsWithCustomerWords: 0,
    rowsListed: 0,
    streamEvents: 0,
    brokenStreams: [],
    replies: 0, lists: 0, neverSent: 0, sentTwice: 0, errors: [], cpuMicros: 0,
  };
  const started = performance.now();
  const measureFrom = started + plan.warmupSeconds * 1000;
  const until = measureFrom + plan.seconds * 1000;
  const posted = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  let cpuAt = process.cpuUsage();
  let eventsAt = streamEvents;
  setTimeout(() => {
    cpuAt = process.cpuUsage();
    eventsAt = streamEvents;
    send({ type: 'measuring' });
  }, plan.warmupSeconds * 1000);

  const loops = tokens.flatMap((token, a) => {
    let n = 0;
    let v = a;
    const offset = (a / tokens.length) * plan.replyIntervalMs;
    const reply = async () => {
      const ref = `[a${a}m${++n}]`;
      const conversation = held[a]![n % held[a]!.length]!;
      const t0 = performance.now();
      const res = await api('POST', `/v1/sessions/${conversation}/messages`, token, { text: `It is on its way, sorry for the wait. ${ref}` }).catch((err: unknown) => ({ status: 0, body: { error: String(err) } as Record<string, unknown> }));
      const t1 = performance.now();
      if (res.status !== 201) return void results.errors.push(`reply ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      if (t0 < measureFrom) return;
      posted.set(ref, t0);
      results.postMs.push(t1 - t0);
      results.replies++;
    };
    const list = async () => {
      const view = VIEWS[v++ % VIEWS.length]!;
      const t0 = performance.now();
      const res = await api('GET', `/v1/inbox?view=${view}`, token).catch((err: unknown) => ({ status: 0, body: { error: String(err) } as Record<string, unknown> }));
      const t1 = performance.now();
      if (res.status !== 200) return void results.errors.push(`inbox ${view} ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      const rows = res.body.conversations as { assigned_to: unknown; customer_last_message: unknown }[];
      results.listSizes[view] = Math.max(results.listSizes[view]!, rows.length);
      if (t0 < measureFrom) return;
      results.listMs[view]!.push(t1 - t0);
      results.lists++;
      results.rowsListed += rows.length;
      for (const row of rows) {
        if (row.assigned_to) results.rowsAssigned++;
        if (row.customer_last_message) results.rowsWithCustomerWords++;
      }
    };
    return [every(plan.replyIntervalMs, offset, until, reply, inFlight), every(plan.listIntervalMs, offset + plan.listIntervalMs / 2, until, list, inFlight)];
  });
  await Promise.all(loops);
  while (inFlight.size > 0) await Promise.all([...inFlight]);
  const cpu = process.cpuUsage(cpuAt);
  results.cpuMicros = cpu.user + cpu.system;
  results.streamEvents = streamEvents - eventsAt;
  // Every measured reply must reach the Graph fake once; the worker may still be sending the last ones.
  const settleUntil = performance.now() + SETTLE_MS;
  while ([...posted.keys()].some((ref) => !graphSeen.agentAt.has(ref)) && performance.now() < settleUntil) await sleep(100);
  for (const [ref, t0] of posted) {
    const at = graphSeen.agentAt.get(ref);
    if (at === undefined) results.neverSent++;
    else results.replyToGraphMs.push(at - t0);
  }
  results.sentTwice = graphSeen.agentTwice;
  for (const stream of streams) stream.close();
  results.brokenStreams = brokenStreams;
  return results;
}

/** Agent `a`'s dashboard: the inbox's stream held open (which keeps them seen), then "available" in the header. */
async function comeToWork(token: string, a: number): Promise<void> {
  const stream = await openEventStream(`${engine}/v1/inbox/events`, { authorization: `Bearer ${token}` }, (type) => {
    if (type === 'conversation') streamEvents++;
  });
  streams.push(stream);
  void stream.ended.then((why) => {
    if (why !== null) brokenStreams.push(`agent ${a}'s stream: ${why}`);
  });
  await must('PUT', '/v1/me/presence', token, { status: 'available' });
}

let tokens: string[] = [];
let held: string[][] = [];
const streams: EventStream[] = [];
const brokenStreams: string[] = [];
let streamEvents = 0;
process.on('message', (message: FromParent) => {
  void (async () => {
    if (message.type === 'setup') {
      const seeded = await setUp(message);
      tokens = seeded.tokens;
      send({ type: 'seeded', workspaceId: seeded.workspaceId, agents: tokens.length });
    } else if (message.type === 'agents') {
      // The agents come to work (their dashboards open, available: the waiting conversations are assigned to them),
      // then each takes over its share of the conversations (round robin).
      for (const [a, token] of tokens.entries()) await comeToWork(token, a);
      held = tokens.map(() => []);
      message.conversations.forEach((id, i) => held[i % tokens.length]!.push(id));
      for (const [a, ids] of held.entries()) for (const id of ids) await must('POST', `/v1/sessions/${id}/takeover`, tokens[a]!);
      send({ type: 'taken' });
    } else if (message.type === 'run') {
      send(await runAgents(tokens, held, message));
    }
  })().catch((err: unknown) => {
    process.stderr.write(`inbox agents failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
});
process.on('disconnect', () => process.exit(0));
send({ type: 'listening', integrator: integrator.origin, graph: graph.origin });
