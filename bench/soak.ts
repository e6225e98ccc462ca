// Over 400 lines: one script a reader follows top to bottom: the peers, the load, the probe and the report of one soak.
/**
 * The soak (issue 11, item 6): the service as `npm start` runs it (`node src/main.ts`, a child process) under the
 * phone benchmark's load plus WhatsApp and website-chat traffic for a long time, watching whether anything grows,
 * slows down or goes missing.
 *
 *   npm run soak                              10 minutes (the default)
 *   npm run soak -- --minutes 3               any duration (decimals allowed)
 *   npm run soak -- --short                   1 minute, for trying the set-up; no CI job runs the soak
 *   npm run soak -- --record                  also write bench/results/soak-<database>.json
 *   npm run soak -- --calls 200               fewer phone calls (default 1000, a prompt every 2 s each)
 *   DATABASE_URL=postgres://…/soak npm run soak   on that PostgreSQL database (else PGlite in a temporary DATA_DIR)
 *
 * Processes (they share the machine's cores): the service, with a small probe loaded into it (bench/processes/soak-probe.ts)
 * that reports its memory and event loop over IPC; the phone callers (bench/processes/phone-callers.ts, as in the phone-calls
 * benchmark); and this process, which plays everyone else: the integrator (echoing each message after 50 ms, so an
 * answer names its question), Meta (signed webhooks, and the Graph API the replies go to), the website visitors and
 * the webhook receiver (verifying every delivery with the official `standardwebhooks` library).
 *
 * Everything is matched by id: a phone answer must carry its prompt's reference, a WhatsApp reply its message's
 * token, a webhook its event's conversation and webhook-id. Any error or lost message makes the exit code 1.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { Agent, fetch as fetchFrom } from 'undici';
import { openDatabase, type Db } from '../db/database.ts';
import { verifyChannelRequest } from '../src/receiver/index.ts';
import { fixture, metaSignature, unixSeconds } from '../test/channels/whatsapp/fixtures/meta.ts';
import { api, freePort, startServiceProcess, type ServiceProcess } from '../test/helpers/service-process.ts';
import { textTable } from './lib/benchmark.ts';
import { caBundle, https } from './lib/https-peer.ts';
import { machineInfo, runConditions } from './lib/report.ts';
import { round, summarize } from './lib/stats.ts';
import type { CallersResults } from './processes/phone-callers.ts';
import type { ProbeMessage, ProbeSample, ProbeSummary } from './processes/soak-probe.ts';
import { startCallersProcess, type CallersProcess } from './lib/callers-process.ts';

// ── Options ──────────────────────────────────────────────────────────────────────────────────────────────────────

const usage = `usage: npm run soak -- [--minutes N | --short] [--record] [--calls N] [--keep]
  --minutes N   how long the traffic runs (default 10; decimals allowed)
  --short       1 minute
  --record      write the results to bench/results/soak-<database>.json (else to a temporary folder, named at the end)
  --calls N     concurrent phone calls, each speaking every 2 s (default 1000: the phone benchmark's load)
  --keep        keep the PGlite DATA_DIR afterwards
DATABASE_URL    a PostgreSQL database to run on (its data stays); without it, PGlite in a temporary DATA_DIR`;

function options() {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string' },
      short: { type: 'boolean', default: false },
      record: { type: 'boolean', default: false },
      calls: { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const positive = (name: string, raw: string | undefined, fallback: number) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new RangeError(`--${name} must be a positive number (got ${JSON.stringify(raw)}).\n${usage}`);
    return n;
  };
  if (values.short && values.minutes !== undefined) throw new RangeError(`--short and --minutes exclude each other.\n${usage}`);
  return {
    minutes: values.short ? 1 : positive('minutes', values.minutes, 10),
    record: values.record,
    calls: Math.round(positive('calls', values.calls, 1_000)),
    keep: values.keep,
  };
}

/** The load besides the phone: per second, across two workspaces (the widget's rate limit is 3 requests/s each). */
const LOAD = {
  promptIntervalMs: 2_000,
  integratorMs: 50,
  whatsappPerSecond: 20,
  /** Each customer writes every this often; so 40 customers. */
  customerIntervalMs: 2_000,
  /** New website conversations per second per workspace; every 5th adds a lead, every 10th asks for a person. */
  chatsPerSecondPerWorkspace: 2,
  workspaces: 2,
};
const SAMPLE_MS = 5_000;
/** Every this many samples the heap is also read after a full collection (30 s). */
const GC_EVERY = 6;
const SETTLE_MS = 60_000;

const APP_SECRET = `soak-app-secret-${randomBytes(8).toString('hex')}`;
const ACCESS_TOKEN = `EAAGsoak${randomBytes(12).toString('hex')}`;
const ADMIN_TOKEN = `soak-admin-${randomBytes(16).toString('hex')}`;
const BRIDGE_TOKEN = `soak-bridge-${randomBytes(16).toString('hex')}`;
const EVENTS = ['new_chat', 'new_lead', 'escalation'] as const;


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mib = (bytes: number) => round(bytes / 2 ** 20, 1);
const progress = (line: string) => process.stderr.write(`  [soak] ${line}\n`);

// ── The outside world ───────────────────────────────────────────────────────────────────────────────────────────

/** Counters of this process's servers; every field that is not a count of work done is an error. */
const seen = {
  channelRequests: 0,
  integratorUnverified: 0,
  /** WhatsApp token → replies sent to it, and the time of the first. */
  replies: new Map<string, number>(),
  firstReplyAt: new Map<string, number>(),
  graphUnmatched: 0,
  graphWrongToken: 0,
  /** webhook-id → deliveries received, and the event and conversation it carried. */
  deliveries: new Map<string, { count: number; key: string }>(),
  deliveryRequests: 0,
  webhooksUnverified: 0,
};


function json(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

interface Workspace {
  index: number;
  owner: string;
  integrationKey: string;
  widgetKey: string;
  phoneNumberId: string;
  secrets: Map<string, string>;
  id: string;
}

async function startPeers(workspaces: Workspace[]) {
  const integrator = await https((req, res, body) => {
    // An integrator without tools: an empty manifest (protocol §4.3), fetched now and then (it is cached for 10 minutes).
    if (req.method === 'GET' && /^\/w\d+\/tools\/manifest$/.test(req.url ?? '')) return json(res, 200, { tools: [] });
    seen.channelRequests++;
    const workspace = workspaces[Number(/^\/w(\d+)\//.exec(req.url ?? '')?.[1])];
    if (!workspace || !verifyChannelRequest(workspace.integrationKey, body, req.headers['x-service-signature'] as string).ok) {
      seen.integratorUnverified++;
      res.writeHead(401, { 'content-length': '0' });
      return void res.end();
    }
    const { message } = JSON.parse(body.toString('utf8')) as { message: string };
    setTimeout(() => json(res, 200, { reply: `Answer to: ${message}`, handled: true }), LOAD.integratorMs);
  });
  let sent = 0;
  const graph = await https((req, res, body) => {
    const send = JSON.parse(body.toString('utf8')) as { to: string; text?: { body?: string } };
    if (req.headers.authorization !== `Bearer ${ACCESS_TOKEN}`) seen.graphWrongToken++;
    const token = /\bwa-\d+-\d+-\d+\b/.exec(send.text?.body ?? '')?.[0];
    if (token) {
      seen.replies.set(token, (seen.replies.get(token) ?? 0) + 1);
      if (!seen.firstReplyAt.has(token)) seen.firstReplyAt.set(token, performance.now());
    } else seen.graphUnmatched++;
    sent++;
    json(res, 200, { messaging_product: 'whatsapp', contacts: [{ input: send.to, wa_id: send.to }], messages: [{ id: `wamid.SOAK${sent}` }] });
  });
  const receiver = await https((req, res, body) => {
    seen.deliveryRequests++;
    const [, w, event] = /^\/hooks\/w(\d+)\/(\w+)$/.exec(req.url ?? '') ?? [];
    const id = String(req.headers['webhook-id']);
    try {
      new Webhook(workspaces[Number(w)]!.secrets.get(event!)!).verify(body.toString('utf8'), {
        'webhook-id': id,
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      });
    } catch {
      seen.webhooksUnverified++;
    }
    const payload = JSON.parse(body.toString('utf8')) as { event: string; conversation_id?: string };
    const known = seen.deliveries.get(id);
    if (known) known.count++;
    else seen.deliveries.set(id, { count: 1, key: `${payload.event}:${payload.conversation_id}` });
    res.writeHead(204);
    res.end();
  });
  return {
    integrator: integrator.origin,
    graph: graph.origin,
    receiver: receiver.origin,
    close: () => Promise.all([integrator, graph, receiver].map(({ server }) => new Promise((r) => server.close(r)))),
  };
}

// ── The service and its set-up ──────────────────────────────────────────────────────────────────────────────────



async function configure(base: string, peers: { integrator: string; receiver: string }, workspaces: Workspace[], number: string): Promise<void> {
  const run = randomBytes(3).toString('hex');
  for (const w of workspaces) {
    const created = await api(base, 'POST', '/v1/admin/workspaces', ADMIN_TOKEN, { name: `Soak ${run} ${w.index}`, owner_email: `owner${w.index}@soak-${run}.example` });
    w.owner = (created.owner as { token: string }).token;
    w.id = (created.workspace as { id: string }).id;
    w.integrationKey = (await api(base, 'PUT', '/v1/integration', w.owner, { endpoint_url: `${peers.integrator}/w${w.index}/channel` })).key as string;
    await api(base, 'PUT', '/v1/whatsapp', w.owner, { phone_number_id: w.phoneNumberId, access_token: ACCESS_TOKEN });
    for (const event of EVENTS) {
      const saved = await api(base, 'PUT', `/v1/webhooks/${event}`, w.owner, { url: `${peers.receiver}/hooks/w${w.index}/${event}` });
      w.secrets.set(event, saved.secret as string);
    }
    w.widgetKey = (await api(base, 'GET', '/v1/keys/widget', w.owner)).key as string;
    // The web chat answers pages of the allowed origins only (docs/webchat.md).
    await api(base, 'PUT', '/v1/webchat', w.owner, { allowed_origins: [SHOP_ORIGIN] });
  }
  await api(base, 'PUT', '/v1/phone', workspaces[0]!.owner, { numbers: [number] });
}

const SHOP_ORIGIN = 'https://shop.example';
const visitorAgents = new Map<number, Agent>();
/** A connection pool bound to one of 250 loopback addresses (127.0.1.1 to 127.0.1.250), one per visitor in turn. */
function visitorAgent(n: number): Agent {
  const slot = n % 250;
  let agent = visitorAgents.get(slot);
  if (!agent) {
    agent = new Agent({ localAddress: `127.0.1.${slot + 1}` });
    visitorAgents.set(slot, agent);
  }
  return agent;
}

function startProbe(service: ServiceProcess) {
  const child = service.child;
  const ask = <T extends ProbeMessage['type']>(message: { type: string; gc?: boolean }, reply: T, timeoutMs = 15_000) =>
    new Promise<Extract<ProbeMessage, { type: T }> | null>((resolve) => {
      const timer = setTimeout(() => {
        child.off('message', onMessage);
        resolve(null);
      }, timeoutMs);
      const onMessage = (m: ProbeMessage) => {
        if (m.type !== reply) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(m as Extract<ProbeMessage, { type: T }>);
      };
      child.on('message', onMessage);
      child.send(message);
    });
  return {
    start: () => child.send({ type: 'start' }),
    sample: (gc: boolean) => ask({ type: 'sample', gc }, 'sample'),
    summary: () => ask({ type: 'summary' }, 'summary'),
  };
}


// ── WhatsApp and website traffic ────────────────────────────────────────────────────────────────────────────────

class Traffic {
  readonly #base: string;
  readonly #workspaces: Workspace[];
  readonly #inFlight = new Set<Promise<void>>();
  readonly #timers: NodeJS.Timeout[] = [];
  readonly whatsapp = { sent: 0, acked: 0, ackedAt: new Map<string, number>(), errors: [] as string[], ackMs: [] as number[] };
  readonly webchat = { conversations: 0, answered: 0, leads: 0, escalations: 0, errors: [] as string[], replyMs: [] as number[] };
  /** `event:conversation_id` of every event the service acknowledged (a 201, a recorded lead, a first escalation). */
  readonly expectedEvents = new Set<string>();

  constructor(base: string, workspaces: Workspace[]) {
    this.#base = base;
    this.#workspaces = workspaces;
  }

  start(): void {
    const customers = (LOAD.whatsappPerSecond * LOAD.customerIntervalMs) / 1_000;
    for (let c = 0; c < customers; c++) {
      const workspace = this.#workspaces[c % this.#workspaces.length]!;
      const waId = `3162${String(c).padStart(7, '0')}`;
      let n = 0;
      this.#every(LOAD.customerIntervalMs, (c / customers) * LOAD.customerIntervalMs, () => this.#whatsapp(workspace, waId, `wa-${workspace.index}-${c}-${++n}`));
    }
    const chatMs = 1_000 / LOAD.chatsPerSecondPerWorkspace;
    for (const workspace of this.#workspaces) {
      let n = 0;
      this.#every(chatMs, (workspace.index / this.#workspaces.length) * chatMs, () => this.#chat(workspace, ++n));
    }
  }

  /** No new messages; waits for the requests in flight. */
  async stop(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  #every(intervalMs: number, offsetMs: number, work: () => Promise<void>): void {
    const started = performance.now() + offsetMs;
    let due = started;
    const tick = () => {
      const job = work().catch((err: unknown) => void this.whatsapp.errors.push(`unexpected: ${String(err)}`));
      this.#inFlight.add(job);
      void job.finally(() => this.#inFlight.delete(job));
      due += intervalMs;
      this.#timers.push(setTimeout(tick, Math.max(0, due - performance.now())));
    };
    this.#timers.push(setTimeout(tick, offsetMs));
  }

  async #whatsapp(workspace: Workspace, waId: string, token: string): Promise<void> {
    const body = fixture('text-message', {
      PHONE_NUMBER_ID: workspace.phoneNumberId,
      WA_ID: waId,
      MESSAGE_ID: `wamid.SOAK${randomBytes(10).toString('hex')}`,
      TIMESTAMP: unixSeconds(),
      BODY: `Where is my order? ${token}`,
    });
    this.whatsapp.sent++;
    const started = performance.now();
    const status = await fetch(`${this.#base}/v1/whatsapp/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': metaSignature(APP_SECRET, body) },
      body,
    }).then(
      async (r) => (await r.arrayBuffer(), r.status),
      (err: unknown) => String(err),
    );
    if (status === 200) {
      this.whatsapp.acked++;
      this.whatsapp.ackedAt.set(token, performance.now());
      this.whatsapp.ackMs.push(performance.now() - started);
    } else this.whatsapp.errors.push(`webhook ${status}`);
  }

  async #chat(workspace: Workspace, n: number): Promise<void> {
    const headers = { 'x-widget-key': workspace.widgetKey, origin: SHOP_ORIGIN, 'content-type': 'application/json' };
    // Each visitor from an address of their own, as on the web: the widget's budget is per visitor (docs/webchat.md).
    const dispatcher = visitorAgent(n);
    const post = async (path: string, body: unknown) => {
      const res = await fetchFrom(`${this.#base}/v1/webchat/conversations${path}`, { method: 'POST', headers, body: JSON.stringify(body), dispatcher }).catch((err: unknown) => String(err));
      if (typeof res === 'string') return { status: res, body: {} as Record<string, unknown> };
      return { status: String(res.status), body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
    };
    this.webchat.conversations++;
    const started = performance.now();
    const opened = await post('', { visitor_message: `Do you ship to Utrecht? (chat ${workspace.index}-${n})`, page_url: 'https://shop.example/p/1' });
    if (opened.status !== '201') return void this.webchat.errors.push(`conversation ${opened.status}`);
    this.webchat.replyMs.push(performance.now() - started);
    const id = opened.body.conversation_id as string;
    this.expectedEvents.add(`new_chat:${id}`);
    if (typeof opened.body.reply === 'string' && opened.body.reply.length > 0) this.webchat.answered++;
    else this.webchat.errors.push('conversation answered without a reply');
    if (n % 5 === 0) {
      const lead = await post(`/${id}/lead`, { name: `Visitor ${n}`, email: `visitor${n}@example.com` });
      if (lead.status === '200' && lead.body.recorded === true) {
        this.webchat.leads++;
        this.expectedEvents.add(`new_lead:${id}`);
      } else this.webchat.errors.push(`lead ${lead.status}`);
    }
    if (n % 10 === 0) {
      const escalation = await post(`/${id}/escalate`, { message: 'Can I talk to someone?' });
      if (escalation.status === '200') {
        this.webchat.escalations++;
        this.expectedEvents.add(`escalation:${id}`);
      } else this.webchat.errors.push(`escalate ${escalation.status}`);
    }
  }
}

// ── The run ─────────────────────────────────────────────────────────────────────────────────────────────────────

interface Sample {
  atSeconds: number;
  rssMiB: number;
  heapUsedMiB: number;
  heapAfterGcMiB: number | null;
  loopP99Ms: number;
  loopMaxMs: number;
}

async function main(): Promise<number> {
  const opts = options();
  const seconds = Math.round(opts.minutes * 60);
  const databaseUrl = process.env.DATABASE_URL?.trim() || null;
  const database = databaseUrl ? 'postgres' : 'pglite';
  const machine = await machineInfo();
  const conditions = runConditions();
  const work = mkdtempSync(join(tmpdir(), 'botlink-soak-'));
  const dataDir = join(work, 'data');
  const number = `+3120${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
  const workspaces: Workspace[] = Array.from({ length: LOAD.workspaces }, (_, index) => ({
    index,
    owner: '',
    id: '',
    integrationKey: '',
    widgetKey: '',
    phoneNumberId: `10${String(Math.floor(Math.random() * 1e12)).padStart(12, '0')}${index}`,
    secrets: new Map(),
  }));

  progress(`${seconds} s on ${database}${databaseUrl ? '' : ` (DATA_DIR ${dataDir})`}: ${opts.calls} calls speaking every ${LOAD.promptIntervalMs} ms, ` +
    `${LOAD.whatsappPerSecond} WhatsApp messages/s, ${LOAD.chatsPerSecondPerWorkspace * LOAD.workspaces} website chats/s`);
  const peers = await startPeers(workspaces);
  const port = await freePort();
  const service = await startServiceProcess({
    port,
    ipc: true,
    execArgv: ['--expose-gc', `--import=${new URL('./processes/soak-probe.ts', import.meta.url).href}`],
    env: {
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      DATA_DIR: dataDir,
      MASTER_KEY: randomBytes(32).toString('hex'),
      ADMIN_TOKEN,
      BRIDGE_TOKEN,
      OUTBOUND_ALLOW: '127.0.0.1/32',
      WHATSAPP_APP_SECRET: APP_SECRET,
      WHATSAPP_VERIFY_TOKEN: 'soak-verify-token',
      WHATSAPP_GRAPH_URL: `${peers.graph}/v21.0`,
      NODE_EXTRA_CA_CERTS: caBundle(work),
      LOG_LEVEL: 'warn',
    },
  });
  const probe = startProbe(service);
  let callers: CallersProcess | undefined;
  let traffic: Traffic | undefined;
  const samples: Sample[] = [];
  let sampler: NodeJS.Timeout | undefined;
  /** Set as the run goes (an object, so that a run that throws half-way still reads well). */
  const measured = {
    exitCode: null as number | null,
    callerResults: undefined as CallersResults | undefined,
    dropped: 0,
    connectErrors: 0,
    loop: null as ProbeSummary | null,
    cpuMicros: 0,
    after: null as ProbeSample | null,
    settled: false,
    trafficSeconds: 0,
  };
  try {
    await configure(service.url, peers, workspaces, number);
    callers = startCallersProcess({ url: `ws://127.0.0.1:${port}/v1/phone/ws`, token: BRIDGE_TOKEN, number, calls: opts.calls, intervalMs: LOAD.promptIntervalMs, warmupSeconds: 0, seconds, matchIds: true });
    measured.connectErrors = (await callers.next('connected')).connectErrors;
    await sleep(500);

    // The measured part.
    const first = await probe.sample(true);
    const t0 = performance.now();
    const record = (s: ProbeSample | null) => {
      if (!s) return;
      samples.push({
        atSeconds: Math.round((performance.now() - t0) / 1000),
        rssMiB: mib(s.rss),
        heapUsedMiB: mib(s.heapUsed),
        heapAfterGcMiB: s.heapAfterGc === null ? null : mib(s.heapAfterGc),
        loopP99Ms: round(s.loopP99 / 1e6, 2),
        loopMaxMs: round(s.loopMax / 1e6, 2),
      });
    };
    record(first);
    probe.start();
    traffic = new Traffic(service.url, workspaces);
    traffic.start();
    callers.send('start');
    let n = 0;
    sampler = setInterval(() => {
      n++;
      void probe.sample(n % GC_EVERY === 0).then((s) => {
        record(s);
        const last = samples.at(-1);
        if (last && n % 12 === 0) progress(`${last.atSeconds} s: RSS ${last.rssMiB} MiB, heap ${last.heapUsedMiB} MiB, loop p99 ${last.loopP99Ms} ms`);
      });
    }, SAMPLE_MS);
    const finished = callers.next('finished');
    await sleep(seconds * 1000);
    await traffic.stop();
    measured.callerResults = await finished;
    clearInterval(sampler);
    measured.trafficSeconds = (performance.now() - t0) / 1000;
    const last = await probe.sample(false);
    record(last);
    measured.loop = await probe.summary();
    measured.cpuMicros = (last?.cpuMicros ?? 0) - (first?.cpuMicros ?? 0);

    // Everything acknowledged arrives.
    const deadline = Date.now() + SETTLE_MS;
    const outstanding = () => {
      const delivered = new Set([...seen.deliveries.values()].map((d) => d.key));
      const unanswered = [...traffic!.whatsapp.ackedAt.keys()].filter((t) => !seen.replies.has(t)).length;
      return unanswered + [...traffic!.expectedEvents].filter((key) => !delivered.has(key)).length;
    };
    while (Date.now() < deadline && outstanding() > 0) await sleep(250);
    measured.settled = outstanding() === 0;
    measured.after = await probe.sample(true);
    callers.send('close');
    measured.dropped = (await callers.next('closed')).dropped;
  } finally {
    clearInterval(sampler);
    await traffic?.stop();
    await callers?.stop();
    measured.exitCode = await service.stop();
    await peers.close();
  }

  const { exitCode, callerResults, dropped, connectErrors, loop, cpuMicros, after, settled, trafficSeconds } = measured;

  // ── What the database holds ──
  const stored = await readStore(databaseUrl, dataDir, workspaces.map((w) => w.id));
  if (!databaseUrl && !opts.keep) rmSync(dataDir, { recursive: true, force: true });

  // ── Figures ──
  const t = traffic!;
  const results = callerResults!;
  const keysDelivered = new Set([...seen.deliveries.values()].map((d) => d.key));
  const lostWhatsapp = [...t.whatsapp.ackedAt.keys()].filter((token) => !seen.replies.has(token));
  const undeliveredExpected = [...t.expectedEvents].filter((key) => !keysDelivered.has(key));
  const undeliveredOutbox = stored.events.filter((e) => !seen.deliveries.has(e.id)).length;
  const repeatedDeliveries = seen.deliveryRequests - seen.deliveries.size;
  const repeatedReplies = [...seen.replies.values()].reduce((sum, n) => sum + n - 1, 0);
  const replyMs = [...t.whatsapp.ackedAt].filter(([token]) => seen.firstReplyAt.has(token)).map(([token, at]) => seen.firstReplyAt.get(token)! - at);
  const phoneMs = summarize(Float64Array.from(results.totalsMs.map((ms) => ms - LOAD.integratorMs)));
  const warnings = service.warnings;
  const errorLogs = warnings.filter((w) => w.level >= 50);

  const errors: Record<string, number> = {
    phoneConnectErrors: connectErrors,
    phoneCallsDropped: dropped,
    phonePromptsUnanswered: results.unanswered,
    phoneAnswersMismatched: results.mismatched,
    whatsappRequestErrors: t.whatsapp.errors.length,
    whatsappAckedWithoutReply: lostWhatsapp.length,
    whatsappRepliesWithoutToken: seen.graphUnmatched,
    whatsappWrongAccessToken: seen.graphWrongToken,
    whatsappMessagesNotDone: stored.inboundNotDone,
    webchatErrors: t.webchat.errors.length,
    webhookEventsUndelivered: undeliveredExpected.length,
    outboxEventsUndelivered: undeliveredOutbox,
    webhookDeliveriesNotSucceeded: stored.deliveriesNotSucceeded,
    webhooksUnverified: seen.webhooksUnverified,
    integratorUnverified: seen.integratorUnverified,
    serviceErrorLogs: errorLogs.length,
    serviceExitCode: exitCode === 0 ? 0 : 1,
    notSettled: settled ? 0 : 1,
  };
  const errorCount = Object.values(errors).reduce((a, b) => a + b, 0);
  /** Errors per operation the outside world started (a prompt, a WhatsApp message, a website chat). */
  const operations = (callerResults?.prompts ?? 0) + (traffic?.whatsapp.sent ?? 0) + (traffic?.webchat.conversations ?? 0);
  const errorRate = operations > 0 ? errorCount / operations : 0;

  const during = samples.filter((s) => s.atSeconds > 0 && s.atSeconds <= trafficSeconds);
  const secondHalf = during.filter((s) => s.atSeconds >= trafficSeconds / 2);
  const median = (values: number[]) => (values.length === 0 ? Number.NaN : [...values].sort((a, b) => a - b)[values.length >> 1]!);
  const gcLevels = samples.filter((s) => s.heapAfterGcMiB !== null);
  const memory = {
    rssMiB: {
      start: samples[0]?.rssMiB,
      plateau: median(secondHalf.map((s) => s.rssMiB)),
      end: during.at(-1)?.rssMiB,
      peak: Math.max(...samples.map((s) => s.rssMiB)),
      slopeSecondHalfPerMinute: slope(secondHalf.map((s) => [s.atSeconds, s.rssMiB])),
    },
    heapUsedMiB: {
      start: samples[0]?.heapUsedMiB,
      plateau: median(secondHalf.map((s) => s.heapUsedMiB)),
      end: during.at(-1)?.heapUsedMiB,
      peak: Math.max(...samples.map((s) => s.heapUsedMiB)),
    },
    heapAfterGcMiB: {
      start: gcLevels[0]?.heapAfterGcMiB,
      plateau: median(gcLevels.filter((s) => s.atSeconds >= trafficSeconds / 2 && s.atSeconds <= trafficSeconds).map((s) => s.heapAfterGcMiB!)),
      end: gcLevels.filter((s) => s.atSeconds <= trafficSeconds).at(-1)?.heapAfterGcMiB,
      afterTraffic: after?.heapAfterGc ? mib(after.heapAfterGc) : null,
      slopeSecondHalfPerMinute: slope(
        gcLevels.filter((s) => s.atSeconds >= trafficSeconds / 2 && s.atSeconds <= trafficSeconds).map((s) => [s.atSeconds, s.heapAfterGcMiB!]),
      ),
    },
    rssAfterTrafficMiB: after ? mib(after.rss) : null,
  };
  const eventLoop = {
    p50Ms: round((loop?.loopP50 ?? 0) / 1e6, 2),
    p99Ms: round((loop?.loopP99 ?? 0) / 1e6, 2),
    maxMs: round((loop?.loopMax ?? 0) / 1e6, 2),
    worstWindowP99Ms: Math.max(0, ...during.map((s) => s.loopP99Ms)),
  };
  const load = {
    seconds: round(trafficSeconds, 1),
    calls: opts.calls,
    promptIntervalMs: LOAD.promptIntervalMs,
    phoneTurnsPerSecond: round(results.prompts / seconds, 1),
    whatsappPerSecond: round(t.whatsapp.sent / seconds, 1),
    webchatConversationsPerSecond: round(t.webchat.conversations / seconds, 1),
    webhookEventsPerSecond: round(t.expectedEvents.size / seconds, 1),
    integratorMs: LOAD.integratorMs,
  };
  const counts = {
    phone: {
      prompts: results.prompts,
      answered: results.answered,
      unanswered: results.unanswered,
      mismatched: results.mismatched,
      fillers: results.fillers,
      dropped,
      connectErrors,
      answerMsBeyondIntegrator: { p50: round(phoneMs.p50, 2), p99: round(phoneMs.p99, 2), max: round(phoneMs.max, 2) },
    },
    whatsapp: {
      sent: t.whatsapp.sent,
      acked: t.whatsapp.acked,
      replied: t.whatsapp.acked - lostWhatsapp.length,
      lost: lostWhatsapp.length,
      repeatedReplies,
      ackMs: pct(t.whatsapp.ackMs),
      ackToReplyMs: pct(replyMs),
      errors: t.whatsapp.errors.slice(0, 20),
    },
    webchat: {
      conversations: t.webchat.conversations,
      answered: t.webchat.answered,
      leads: t.webchat.leads,
      escalations: t.webchat.escalations,
      replyMs: pct(t.webchat.replyMs),
      errors: t.webchat.errors.slice(0, 20),
    },
    webhooks: {
      expected: t.expectedEvents.size,
      outboxEvents: stored.events.length,
      delivered: seen.deliveries.size,
      undelivered: undeliveredExpected.length,
      repeatedDeliveries,
    },
    service: {
      cpuPercentOfCore: trafficSeconds > 0 ? Math.round(cpuMicros / 1e4 / trafficSeconds) : 0,
      warnings: warnings.length,
      errorLogs: errorLogs.slice(0, 20).map((w) => ({ msg: w.msg, err: (w.err as { message?: string } | undefined)?.message })),
      exitCode,
    },
  };
  const output = {
    benchmark: 'soak',
    date: conditions.date.toISOString(),
    status: errorCount === 0 ? 'pass' : 'failed',
    database,
    machine,
    conditions: { loadAverage1m: conditions.loadAverage1m, freeMemoryGiB: conditions.freeMemoryGiB },
    parameters: { minutes: opts.minutes, ...LOAD, calls: opts.calls, sampleMs: SAMPLE_MS, gcEverySeconds: (SAMPLE_MS * GC_EVERY) / 1000 },
    load,
    memory,
    eventLoop,
    counts,
    errors,
    errorRate,
    samples,
  };

  const f = (v: number | null | undefined) => (v === null || v === undefined || Number.isNaN(v) ? '–' : String(v));
  const rows: string[][] = [
    ['traffic, s', f(load.seconds)],
    ['phone: calls / turns per s', `${opts.calls} / ${load.phoneTurnsPerSecond}`],
    ['WhatsApp messages per s / website chats per s / webhook events per s', `${load.whatsappPerSecond} / ${load.webchatConversationsPerSecond} / ${load.webhookEventsPerSecond}`],
    ['RSS MiB: start / plateau / end / peak', `${f(memory.rssMiB.start)} / ${f(memory.rssMiB.plateau)} / ${f(memory.rssMiB.end)} / ${f(memory.rssMiB.peak)}`],
    ['RSS growth over the second half, MiB/min', f(memory.rssMiB.slopeSecondHalfPerMinute)],
    ['heap in use MiB: start / plateau / end', `${f(memory.heapUsedMiB.start)} / ${f(memory.heapUsedMiB.plateau)} / ${f(memory.heapUsedMiB.end)}`],
    ['heap after full GC MiB: start / plateau / end / after traffic', `${f(memory.heapAfterGcMiB.start)} / ${f(memory.heapAfterGcMiB.plateau)} / ${f(memory.heapAfterGcMiB.end)} / ${f(memory.heapAfterGcMiB.afterTraffic)}`],
    ['heap after GC growth over the second half, MiB/min', f(memory.heapAfterGcMiB.slopeSecondHalfPerMinute)],
    ['event loop delay beyond its 10 ms timer p50 / p99 / max, ms', `${eventLoop.p50Ms} / ${eventLoop.p99Ms} / ${eventLoop.maxMs}`],
    ['event loop delay, worst 5 s window p99, ms', f(eventLoop.worstWindowP99Ms)],
    ['service CPU, % of a core', f(counts.service.cpuPercentOfCore)],
    ['phone prompts answered / sent (matched by reference)', `${results.answered} / ${results.prompts}`],
    ['phone answer beyond the integrator p50 / p99, ms', `${counts.phone.answerMsBeyondIntegrator.p50} / ${counts.phone.answerMsBeyondIntegrator.p99}`],
    ['WhatsApp replied / acknowledged / sent (matched by token)', `${counts.whatsapp.replied} / ${t.whatsapp.acked} / ${t.whatsapp.sent}`],
    ['WhatsApp 200 → reply at the Graph API p50 / p99, ms', `${counts.whatsapp.ackToReplyMs.p50} / ${counts.whatsapp.ackToReplyMs.p99}`],
    ['website chats answered / started', `${t.webchat.answered} / ${t.webchat.conversations}`],
    ['webhook events delivered / expected (outbox rows)', `${t.expectedEvents.size - undeliveredExpected.length} / ${t.expectedEvents.size} (${stored.events.length})`],
    ['repeated deliveries / repeated WhatsApp replies', `${repeatedDeliveries} / ${repeatedReplies}`],
    ['errors / error rate (per prompt, message or chat started)', `${errorCount} / ${errorRate === 0 ? '0' : errorRate.toExponential(2)}`],
  ];
  console.log(`\n${textTable(['soak', database], rows)}\n`);
  console.log(`RSS over time (s: MiB): ${samples.filter((s, i) => i % 6 === 0 || s === samples.at(-1)).map((s) => `${s.atSeconds}: ${s.rssMiB}`).join(', ')}`);
  console.log(`Heap after full GC (s: MiB): ${gcLevels.map((s) => `${s.atSeconds}: ${s.heapAfterGcMiB}`).join(', ')}`);
  if (errorCount > 0) console.log(`ERRORS: ${JSON.stringify(Object.fromEntries(Object.entries(errors).filter(([, v]) => v > 0)))}`);

  const folder = opts.record ? fileURLToPath(new URL('./results/', import.meta.url)) : join(work, 'results');
  mkdirSync(folder, { recursive: true });
  const file = join(folder, `soak-${database}.json`);
  writeFileSync(file, `${JSON.stringify(output, null, 2)}\n`);
  console.log(`\n${errorCount === 0 ? 'PASS' : 'FAILED'}: ${errorCount} errors. Results: ${file}`);
  return errorCount === 0 ? 0 : 1;
}

function pct(values: number[]): { p50: number; p99: number; max: number } {
  const s = summarize(Float64Array.from(values));
  return { p50: round(s.p50, 1), p99: round(s.p99, 1), max: round(s.max, 1) };
}

/** Least-squares slope of (seconds, MiB) points, in MiB per minute; null with fewer than 3 points. */
function slope(points: [number, number][]): number | null {
  if (points.length < 3) return null;
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  return sxx === 0 ? null : round((sxy / sxx) * 60, 2);
}

/** After the service stopped: the outbox of our workspaces, and the WhatsApp messages' and deliveries' final states. */
async function readStore(url: string | null, dataDir: string, workspaceIds: string[]) {
  const opened = url ? await openDatabase({ url, poolSize: 1 }) : await openDatabase({ dataDir });
  const db: Db = opened.db;
  try {
    const events = await db.selectFrom('webhook_events').select(['id']).where('workspace_id', 'in', workspaceIds).where('event', '!=', 'test').execute();
    const deliveries = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', 'in', workspaceIds).where('status', '!=', 'succeeded').executeTakeFirstOrThrow();
    const inbound = await db.selectFrom('whatsapp_inbound_messages').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', 'in', workspaceIds).where('state', '!=', 'done').executeTakeFirstOrThrow();
    return { events, deliveriesNotSucceeded: Number(deliveries.n), inboundNotDone: Number(inbound.n) };
  } finally {
    await opened.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof RangeError ? err.message : err);
    process.exit(err instanceof RangeError ? 2 : 1);
  },
);
