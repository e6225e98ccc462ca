// Over 400 lines: one benchmark script a reader follows top to bottom (peers, phases, matching answers, the report).
/**
 * An integrator's endpoint that goes dead mid-run: phone calls at a steady rate while the
 * endpoint is healthy, then hangs (accepts connections and requests, never answers), then answers again. Measured per
 * prompt, from sending the prompt frame to the answer's last frame: p50/p99 before, during (after the breaker
 * tripped) and after the outage; the turns that paid the full 3.5 s deadline before it tripped; how long the breaker
 * took to trust the endpoint again; the share of the healthy phases' answers that came from the integrator
 * (target 100 %). Target: during the outage p99 ≤ the knowledge-base answer time p99 + 100 ms.
 *
 * The knowledge-base answer time is measured in the same run, at the same time: a second workspace with the same
 * knowledge pages and no integration, called on its own number by its own callers throughout. Its turns take the path
 * a down endpoint's turns take (knowledge search ‖ no bot link, then the AI), so "during" is compared with the
 * baseline's p99 over the same window.
 *
 * Processes (sharing the machine's cores): the service as `npm start` runs it (`node src/main.ts`, LOG_LEVEL info,
 * PGlite in a temporary DATA_DIR, or a fresh database on BENCH_DATABASE_URL's PostgreSQL, dropped afterwards); the
 * callers (bench/processes/dead-endpoint-callers.ts, ConversationRelay over WebSockets); and this process, which plays the
 * integrator (loopback HTTPS with the test CA, 50 ms, switched between healthy and hanging at set times) and the AI
 * (an OpenAI-compatible server on loopback HTTPS, 50 ms). The AI is a scripted LLM rather than the embedded answerer
 * because every answer must be matched to its prompt by id: the LLM repeats the prompt's reference (and quotes the
 * best knowledge passage it was given, so the knowledge base is seen to answer), while an extractive answer can only
 * repeat the knowledge pages.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql } from 'kysely';
import { openDatabase } from '../db/database.ts';
import { PHONE_CHANNEL_TIMEOUT_MS } from '../src/limits.ts';
import { verifyChannelRequest } from '../src/receiver/index.ts';
import { api, freePort, startServiceProcess, type ServiceProcess } from '../harness/service-process.ts';
import type { Metric, RunResult } from './lib/benchmark.ts';
import { envNumber, progress as benchProgress } from './lib/benchmark.ts';
import { startCallersProcess, type CallersProcess, type CallersScript } from './lib/callers-process.ts';
import { caBundle, https } from './lib/https-peer.ts';
import { round, summarize, type LatencySummary } from './lib/stats.ts';
import type { DeadEndpointCallersConfig, DeadEndpointCallersMessage, DeadEndpointCallersResults, PromptRecord } from './processes/dead-endpoint-callers.ts';

export const name = 'dead-endpoint';
export const title = 'An integrator endpoint that goes dead mid-call';

const INTEGRATOR_MS = 50;
const LLM_MS = 50;
const MARGIN_MS = 100;
const ADMIN_TOKEN = `bench-admin-${randomBytes(16).toString('hex')}`;
const BRIDGE_TOKEN = `bench-bridge-${randomBytes(16).toString('hex')}`;
const NUMBERS = { endpoint: '+31201110001', knowledge: '+31201110002' };
const HEALTH_POLL_MS = 200;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const epochNow = (): number => performance.timeOrigin + performance.now();

/** The knowledge both workspaces are given: the callers' four questions each find a page. */
const PAGES = [
  { id: 'opening-hours', title: 'Opening hours', body: 'We are open from 9:00 to 17:00 on weekdays. On Saturday and Sunday the shop is open from 10:00 to 16:00.' },
  { id: 'shipping', title: 'Shipping', body: 'Shipping to the Netherlands takes one working day. Shipping to Belgium takes two working days.' },
  { id: 'returns', title: 'Returns', body: 'You can return a gift within 30 days. Without a receipt we give store credit for the gift.' },
  { id: 'payment', title: 'Payment methods', body: 'We accept iDEAL, Bancontact, credit cards and PayPal. Payment methods are chosen at checkout.' },
];

interface Parameters {
  endpointCalls: number;
  knowledgeCalls: number;
  intervalMs: number;
  warmupSeconds: number;
  healthySeconds: number;
  outageSeconds: number;
  recoveredSeconds: number;
  integratorMs: number;
  llmMs: number;
  database: 'pglite' | 'postgres';
}

// ── The integrator and the AI ───────────────────────────────────────────────────────────────────────────────────


function json(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * The integrator: answers each verified channel request after INTEGRATOR_MS with `Integrator: <message>` (handled),
 * so the answer names its prompt; in `hang` mode it reads the request and never answers (the connection stays open
 * until the service gives up). Requests held during the outage stay unanswered after it: the service's deadline ends
 * them, as it would for an integrator that lost them.
 */
async function startIntegrator(key: () => string) {
  const counts = { channelRequests: 0, probes: 0, held: 0, unverified: 0, manifests: 0 };
  /** The prompt references of the channel requests held unanswered. */
  const heldRefs = new Set<string>();
  let mode: 'healthy' | 'hang' = 'healthy';
  const { server, origin } = await https((req, res, body) => {
    if (mode === 'hang') {
      counts.held++;
      const ref = /reference (c\d+x\d+)/i.exec(body.toString('utf8'))?.[1];
      if (ref) heldRefs.add(ref);
      return;
    }
    if (req.method === 'GET') {
      counts.manifests++;
      return json(res, 200, { tools: [] });
    }
    if (!verifyChannelRequest(key(), body, req.headers['x-service-signature'] as string | undefined).ok) {
      counts.unverified++;
      return json(res, 401, { error: 'unverified' });
    }
    if (req.headers['x-service-probe'] !== undefined) counts.probes++;
    else counts.channelRequests++;
    const { message } = JSON.parse(body.toString('utf8')) as { message: string };
    setTimeout(() => json(res, 200, { reply: `Integrator: ${message}`, handled: true }), INTEGRATOR_MS);
  });
  return {
    origin,
    counts,
    heldRefs,
    setMode(next: 'healthy' | 'hang') {
      mode = next;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

interface ChatRequest {
  stream?: boolean;
  messages: { role: string; content: string | null }[];
}

/**
 * The AI: an OpenAI-compatible chat completion after LLM_MS that repeats the prompt's reference and quotes the first
 * sentence of the best knowledge passage it was given (streamed as one chunk when asked to stream).
 */
async function startLlm() {
  const counts = { requests: 0, withPassages: 0, withoutPassages: 0, unreferenced: 0 };
  const { server, origin } = await https((_req, res, body) => {
    counts.requests++;
    const request = JSON.parse(body.toString('utf8')) as ChatRequest;
    const user = request.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
    const ref = /reference (c\d+x\d+)/i.exec(user)?.[1];
    if (!ref) counts.unreferenced++;
    const passages = request.messages.find((m) => m.role === 'system' && m.content?.startsWith('Knowledge-base passages'))?.content ?? '';
    const best = /<passage n="1" title="([^"]*)"[^>]*>\n([^\n]*)/.exec(passages);
    if (best) counts.withPassages++;
    else counts.withoutPassages++;
    const firstSentence = best ? (/^[^.!?]*[.!?]/.exec(best[2]!)?.[0] ?? best[2]!) : 'I could not find that in our pages.';
    const content = `Knowledge answer, reference ${ref ?? 'none'}. ${best ? `From ${best[1]}: ` : ''}${firstSentence}`;
    setTimeout(() => {
      if (!request.stream) {
        return json(res, 200, { id: 'chatcmpl-bench', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content } }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
      res.end('data: [DONE]\n\n');
    }, LLM_MS);
  });
  return {
    origin,
    counts,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

// ── The service, its database and its set-up ────────────────────────────────────────────────────────────────────

/** PGlite in the DATA_DIR, or a database of its own on BENCH_DATABASE_URL's server, dropped afterwards. */
async function benchDatabase(url: string | undefined): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  if (!url) return { env: {}, drop: async () => {} };
  const database = `bench_dead_${randomBytes(4).toString('hex')}`;
  const admin = await openDatabase({ url, poolSize: 1 });
  await sql`create database ${sql.id(database)}`.execute(admin.db);
  const own = new URL(url);
  own.pathname = `/${database}`;
  return {
    env: { DATABASE_URL: own.href },
    async drop() {
      await sql`drop database if exists ${sql.id(database)} with (force)`.execute(admin.db);
      await admin.close();
    },
  };
}


/** A workspace with a phone number and the knowledge pages; with `endpointUrl`, also an integration (its key returned). */
async function workspace(base: string, label: string, number: string, endpointUrl?: string) {
  const created = await api(base, 'POST', '/v1/admin/workspaces', ADMIN_TOKEN, { name: `Bench ${label}`, owner_email: `owner-${label}@bench.example` });
  const owner = (created.owner as { token: string }).token;
  const key = endpointUrl ? ((await api(base, 'PUT', '/v1/integration', owner, { endpoint_url: endpointUrl })).key as string) : null;
  await api(base, 'PUT', '/v1/phone', owner, { numbers: [number] });
  const syncKey = (await api(base, 'POST', '/v1/keys/sync', owner)).key as string;
  for (const page of PAGES) {
    const res = await fetch(`${base}/v1/sync/pages/${page.id}`, {
      method: 'PUT',
      headers: { 'x-sync-key': syncKey, 'content-type': 'application/json' },
      body: JSON.stringify({ title: page.title, body: page.body, language: 'en' }),
    });
    if (!res.ok) throw new Error(`PUT /v1/sync/pages/${page.id}: ${res.status} ${await res.text()}`);
  }
  return { owner, key };
}

/** The breaker's changes of state as the service logs them (`the bot-link endpoint is …`), with the log's time. */
function watchTransitions(service: ServiceProcess) {
  const transitions: { at: number; from: string; to: string }[] = [];
  let pending = '';
  service.child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('the bot-link endpoint is')) continue;
      try {
        const entry = JSON.parse(line) as { time: number; from: string; to: string };
        transitions.push({ at: entry.time, from: entry.from, to: entry.to });
      } catch {
        // not a log line
      }
    }
  });
  return transitions;
}

interface TurnRecord {
  customer_message: string;
  source: string | null;
  status: string;
  botlink: { outcome?: string; reason?: string; latencyMs?: number; endpoint?: { state: string; decision: string; waitMs: number } } | null;
  timings: Record<string, number> | null;
}

/** Every phone turn of the workspace, by the reference in its message. */
async function turnsByRef(base: string, owner: string): Promise<Map<string, TurnRecord>> {
  const byRef = new Map<string, TurnRecord>();
  let before: string | null = null;
  do {
    const page = await api(base, 'GET', `/v1/sessions?channel=phone&limit=200${before ? `&before=${encodeURIComponent(before)}` : ''}`, owner);
    for (const s of page.sessions as { id: string }[]) {
      const session = await api(base, 'GET', `/v1/sessions/${s.id}`, owner);
      for (const t of session.turns as TurnRecord[]) {
        const ref = /reference (c\d+x\d+)/i.exec(t.customer_message)?.[1];
        if (ref) byRef.set(ref, t);
      }
    }
    before = page.next_before as string | null;
  } while (before);
  return byRef;
}

const DEAD_ENDPOINT_CALLERS: CallersScript = { url: new URL('./processes/dead-endpoint-callers.ts', import.meta.url), configVariable: 'DEAD_ENDPOINT_CALLERS_CONFIG' };
const startCallers = (config: DeadEndpointCallersConfig) =>
  startCallersProcess<DeadEndpointCallersMessage>(config, DEAD_ENDPOINT_CALLERS);

// ── The run ─────────────────────────────────────────────────────────────────────────────────────────────────────

export async function run(): Promise<RunResult> {
  const parameters: Parameters = {
    endpointCalls: envNumber('DEAD_ENDPOINT_CALLS', 40, { min: 1 }),
    knowledgeCalls: envNumber('DEAD_ENDPOINT_KB_CALLS', 20, { min: 1 }),
    intervalMs: envNumber('DEAD_ENDPOINT_INTERVAL_MS', 4_000, { min: 500 }),
    warmupSeconds: envNumber('DEAD_ENDPOINT_WARMUP_SECONDS', 6, { min: 0 }),
    healthySeconds: envNumber('DEAD_ENDPOINT_HEALTHY_SECONDS', 20, { min: 1 }),
    outageSeconds: envNumber('DEAD_ENDPOINT_OUTAGE_SECONDS', 30, { min: 5 }),
    recoveredSeconds: envNumber('DEAD_ENDPOINT_RECOVERED_SECONDS', 25, { min: 1 }),
    integratorMs: INTEGRATOR_MS,
    llmMs: LLM_MS,
    database: process.env.BENCH_DATABASE_URL ? 'postgres' : 'pglite',
  };
  const work = mkdtempSync(join(tmpdir(), 'botlink-bench-dead-'));
  let integrationKey = '';
  const integrator = await startIntegrator(() => integrationKey);
  const llm = await startLlm();
  const database = await benchDatabase(process.env.BENCH_DATABASE_URL);
  let service: ServiceProcess | undefined;
  let callers: CallersProcess<DeadEndpointCallersMessage> | undefined;
  const timeline = { start: 0, measureFrom: 0, hangAt: 0, recoverAt: 0, end: 0 };
  const measured = {
    connectErrors: 0,
    dropped: 0,
    results: undefined as DeadEndpointCallersResults | undefined,
    endpointTurns: new Map<string, TurnRecord>(),
    knowledgeTurns: new Map<string, TurnRecord>(),
    transitions: [] as { at: number; from: string; to: string }[],
    polled: [] as { at: number; state: string; since: number }[],
    serviceWarnings: [] as string[],
  };
  let poller: NodeJS.Timeout | undefined;
  // This process plays the integrator and the LLM: its own event loop's delay, per second, shows whether the peers
  // (rather than the service) were slow.
  const peersLoop = monitorEventLoopDelay({ resolution: 10 });
  const peersLoopSamples: { at: number; maxMs: number }[] = [];
  const loopSampler = setInterval(() => {
    peersLoopSamples.push({ at: epochNow(), maxMs: peersLoop.max / 1e6 });
    peersLoop.reset();
  }, 1_000);
  peersLoop.enable();
  try {
    const port = await freePort();
    service = await startServiceProcess({
      port,
      // A first start on PGlite migrates a new database; on a busy 2-core machine that has taken over 20 s.
      readyTimeoutMs: 120_000,
      // DEAD_ENDPOINT_CPU_PROF=<dir>: a V8 CPU profile of the service, written there when it stops (for finding out why).
      ...(process.env.DEAD_ENDPOINT_CPU_PROF ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${process.env.DEAD_ENDPOINT_CPU_PROF}`] } : {}),
      env: {
        ...database.env,
        DATA_DIR: join(work, 'data'),
        MASTER_KEY: randomBytes(32).toString('hex'),
        ADMIN_TOKEN,
        BRIDGE_TOKEN,
        OUTBOUND_ALLOW: '127.0.0.1/32',
        LLM_BASE_URL: `${llm.origin}/v1`,
        LLM_API_KEY: 'sk-bench',
        LLM_MODEL: 'bench-model',
        NODE_EXTRA_CA_CERTS: caBundle(work),
        LOG_LEVEL: 'info',
      },
    });
    measured.transitions = watchTransitions(service);
    const base = service.url;
    const endpoint = await workspace(base, 'endpoint', NUMBERS.endpoint, `${integrator.origin}/botlink/channel`);
    integrationKey = endpoint.key!;
    const knowledge = await workspace(base, 'knowledge', NUMBERS.knowledge);

    progress(`connecting ${parameters.endpointCalls} calls to the integration's number and ${parameters.knowledgeCalls} to the knowledge-only number`);
    callers = startCallers({
      url: `ws://127.0.0.1:${port}/v1/phone/ws`,
      token: BRIDGE_TOKEN,
      groups: [
        { name: 'endpoint', number: NUMBERS.endpoint, calls: parameters.endpointCalls },
        { name: 'knowledge', number: NUMBERS.knowledge, calls: parameters.knowledgeCalls },
      ],
      intervalMs: parameters.intervalMs,
      drainMs: PHONE_CHANNEL_TIMEOUT_MS + 4_000,
    });
    measured.connectErrors = (await callers.next('connected')).connectErrors;
    await sleep(500);

    const poll = async () => {
      const health = (await api(base, 'GET', '/v1/integration', endpoint.owner).catch(() => null))?.health as { state: string; since: string } | undefined;
      if (!health) return;
      const since = Date.parse(health.since);
      const last = measured.polled.at(-1);
      if (!last || last.state !== health.state || last.since !== since) measured.polled.push({ at: Date.now(), state: health.state, since });
    };
    poller = setInterval(() => void poll(), HEALTH_POLL_MS);

    timeline.start = epochNow();
    timeline.measureFrom = timeline.start + parameters.warmupSeconds * 1000;
    timeline.hangAt = timeline.measureFrom + parameters.healthySeconds * 1000;
    timeline.recoverAt = timeline.hangAt + parameters.outageSeconds * 1000;
    timeline.end = timeline.recoverAt + parameters.recoveredSeconds * 1000;
    callers.send('start');
    progress(`${parameters.warmupSeconds} s warm-up, ${parameters.healthySeconds} s healthy, then the endpoint hangs for ${parameters.outageSeconds} s, then ${parameters.recoveredSeconds} s answering again`);
    await sleep(timeline.hangAt - epochNow());
    integrator.setMode('hang');
    progress('the endpoint hangs');
    await sleep(timeline.recoverAt - epochNow());
    integrator.setMode('healthy');
    progress('the endpoint answers again');
    await sleep(timeline.end - epochNow());
    callers.send('stop');
    measured.results = await callers.next('finished');
    clearInterval(poller);
    await poll();
    measured.endpointTurns = await turnsByRef(base, endpoint.owner);
    measured.knowledgeTurns = await turnsByRef(base, knowledge.owner);
    callers.send('close');
    measured.dropped = (await callers.next('closed')).dropped;
  } finally {
    if (poller) clearInterval(poller);
    clearInterval(loopSampler);
    peersLoop.disable();
    await callers?.stop();
    if (service) {
      measured.serviceWarnings = service.warnings.map((w) => String(w.msg)).filter((m) => !m.startsWith('the bot-link endpoint is') && m !== 'bot-link endpoint failing');
      await service.stop();
    }
    await integrator.close();
    await llm.close();
    await database.drop();
    rmSync(work, { recursive: true, force: true });
  }
  return report(parameters, timeline, { ...measured, peersLoopSamples }, { integrator: integrator.counts, llm: llm.counts }, integrator.heldRefs);
}

// ── The report ──────────────────────────────────────────────────────────────────────────────────────────────────

type Phase = 'warmup' | 'before' | 'tripping' | 'during' | 'recovering' | 'after';

function report(
  parameters: Parameters,
  timeline: { start: number; measureFrom: number; hangAt: number; recoverAt: number; end: number },
  measured: {
    connectErrors: number;
    dropped: number;
    results: DeadEndpointCallersResults | undefined;
    endpointTurns: Map<string, TurnRecord>;
    knowledgeTurns: Map<string, TurnRecord>;
    transitions: { at: number; from: string; to: string }[];
    polled: { at: number; state: string; since: number }[];
    serviceWarnings: string[];
    peersLoopSamples: { at: number; maxMs: number }[];
  },
  peers: { integrator: Record<string, number>; llm: Record<string, number> },
  heldRefs: ReadonlySet<string>,
): RunResult {
  const prompts = measured.results?.prompts ?? [];
  const { transitions } = measured;
  // When the breaker tripped: its first change to down after the endpoint began to hang; recovered: its first change
  // to healthy after the endpoint answered again (both from the service's log, to the millisecond).
  const trippedAt = transitions.find((t) => t.to === 'down' && t.at >= timeline.hangAt)?.at ?? null;
  const recoveredAt = transitions.find((t) => t.to === 'healthy' && t.at >= timeline.recoverAt)?.at ?? null;
  // A prompt spoken just before the hang whose request reached the integrator after it was caught by the outage.
  const phaseOf = (sentAt: number, ref?: string): Phase => {
    if (sentAt < timeline.measureFrom) return 'warmup';
    if (sentAt < timeline.hangAt) return ref !== undefined && heldRefs.has(ref) ? 'tripping' : 'before';
    if (sentAt < timeline.recoverAt) return trippedAt !== null && sentAt >= trippedAt ? 'during' : 'tripping';
    return recoveredAt !== null && sentAt >= recoveredAt ? 'after' : 'recovering';
  };
  const fromIntegrator = (p: PromptRecord) => p.text?.startsWith('Integrator:') === true;
  const fromKnowledge = (p: PromptRecord) => p.text?.startsWith('Knowledge answer') === true;

  const unanswered = prompts.filter((p) => p.ms === null);
  const duplicates = measured.results?.duplicates ?? [];
  const unmatched = measured.results?.unmatched ?? [];
  const of = (group: string, phase: Phase) => prompts.filter((p) => p.group === group && p.ms !== null && phaseOf(p.sentAt, p.ref) === phase);
  const summary = (list: PromptRecord[]) => summarize(Float64Array.from(list.map((p) => p.ms!)));
  const phases: Phase[] = ['before', 'tripping', 'during', 'recovering', 'after'];
  const stats = Object.fromEntries(
    phases.map((phase) => {
      const endpoint = of('endpoint', phase);
      const knowledge = of('knowledge', phase);
      return [
        phase,
        {
          endpoint: summary(endpoint),
          knowledge: summary(knowledge),
          fromIntegrator: endpoint.filter(fromIntegrator).length,
          fromKnowledge: endpoint.filter(fromKnowledge).length,
        },
      ];
    }),
  ) as Record<Phase, { endpoint: LatencySummary; knowledge: LatencySummary; fromIntegrator: number; fromKnowledge: number }>;

  // What each endpoint turn did about the health (the turn's own record), by phase.
  const decisions = (phase: Phase) => {
    const counts: Record<string, number> = {};
    for (const p of prompts) {
      if (p.group !== 'endpoint' || phaseOf(p.sentAt, p.ref) !== phase) continue;
      const b = measured.endpointTurns.get(p.ref)?.botlink;
      const key = b?.endpoint ? `${b.endpoint.state}/${b.endpoint.decision}${b.reason && b.reason !== 'answer' ? `/${b.reason}` : ''}` : 'no record';
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  };
  const outageTurns = prompts.filter((p) => p.group === 'endpoint' && ['tripping', 'during'].includes(phaseOf(p.sentAt, p.ref)));
  const waitedFull = outageTurns.filter((p) => {
    const b = measured.endpointTurns.get(p.ref)?.botlink;
    return b?.reason === 'timeout' && b.endpoint?.decision === 'wait';
  });
  // Of those, the turns that began after the breaker had seen a failure (degraded or probing): every state but down
  // waits the whole deadline (docs/architecture.md, "Endpoint health"), so these are what tripping sooner would save.
  const waitedAfterFailure = waitedFull.filter((p) => measured.endpointTurns.get(p.ref)?.botlink?.endpoint?.state !== 'healthy');
  const notSent = prompts.filter((p) => p.group === 'endpoint' && measured.endpointTurns.get(p.ref)?.botlink?.endpoint?.decision === 'not_sent');
  const firstIntegratorAnswer = prompts
    .filter((p) => p.group === 'endpoint' && p.sentAt >= timeline.recoverAt && fromIntegrator(p))
    .reduce((min, p) => Math.min(min, p.sentAt + p.ms!), Number.POSITIVE_INFINITY);

  const healthy = [...of('endpoint', 'before'), ...of('endpoint', 'after')];
  const healthyShare = healthy.length === 0 ? Number.NaN : healthy.filter(fromIntegrator).length / healthy.length;
  const during = stats.during.endpoint;
  const kbDuring = stats.during.knowledge;
  const unansweredTotal = unanswered.length;
  const seconds = (at: number | null, from: number) => (at === null ? Number.NaN : (at - from) / 1000);
  const phaseWords: Record<Phase, string> = {
    warmup: 'warm-up',
    before: 'before the outage',
    tripping: 'outage, until the breaker tripped',
    during: 'outage, after the breaker tripped ("during")',
    recovering: 'answering again, breaker not yet healthy',
    after: 'after the breaker is healthy again',
  };
  const metrics: Metric[] = [
    {
      key: 'healthy_integrator_share_pct',
      label: 'healthy phases: answers from the integrator',
      unit: '%',
      digits: 1,
      value: healthyShare * 100,
      target: { op: '>=', value: 100 },
    },
    {
      key: 'during_p99_ms',
      label: 'endpoint calls p99 during the outage, after the breaker tripped',
      unit: 'ms',
      digits: 0,
      value: during.count === 0 ? Number.NaN : during.p99,
      target: { op: '<=', metric: 'during_limit_ms' },
    },
    {
      key: 'during_limit_ms',
      label: `knowledge-only calls p99 in the same window + ${MARGIN_MS} ms`,
      unit: 'ms',
      digits: 0,
      value: kbDuring.count === 0 ? Number.NaN : kbDuring.p99 + MARGIN_MS,
    },
    { key: 'breaker_tripped', label: 'breaker tripped (1 = yes)', unit: '', value: trippedAt === null ? 0 : 1, target: { op: '=', value: 1 } },
    { key: 'tripped_after_s', label: 'breaker tripped, after the endpoint began to hang', unit: 's', digits: 1, value: seconds(trippedAt, timeline.hangAt) },
    {
      key: 'breaker_recovered',
      label: 'breaker healthy again and endpoint calls answered after it (1 = yes)',
      unit: '',
      value: recoveredAt !== null && stats.after.endpoint.count > 0 ? 1 : 0,
      target: { op: '=', value: 1 },
    },
    { key: 'recovered_after_s', label: 'recovery: endpoint answering → breaker healthy', unit: 's', digits: 1, value: seconds(recoveredAt, timeline.recoverAt) },
    {
      key: 'first_integrator_answer_after_s',
      label: 'recovery: endpoint answering → first integrator answer heard',
      unit: 's',
      digits: 1,
      value: seconds(Number.isFinite(firstIntegratorAnswer) ? firstIntegratorAnswer : null, timeline.recoverAt),
    },
    { key: 'waited_full_deadline', label: 'turns that waited the full 3.5 s deadline before it tripped', unit: '', value: waitedFull.length },
    { key: 'waited_full_after_failure', label: 'of those, turns that began after its first failure was known', unit: '', value: waitedAfterFailure.length },
    { key: 'not_sent', label: 'turns whose request was not sent (detached requests at their limit)', unit: '', value: notSent.length },
    ...phases.flatMap((phase): Metric[] => [
      { key: `${phase}_endpoint_p50_ms`, label: `endpoint calls p50, ${phaseWords[phase]}`, unit: 'ms', digits: 0, value: stats[phase].endpoint.p50 },
      { key: `${phase}_endpoint_p99_ms`, label: `endpoint calls p99, ${phaseWords[phase]}`, unit: 'ms', digits: 0, value: stats[phase].endpoint.p99 },
      { key: `${phase}_knowledge_p99_ms`, label: `knowledge-only calls p99, ${phaseWords[phase]}`, unit: 'ms', digits: 0, value: stats[phase].knowledge.p99 },
    ]),
    { key: 'prompts_answered', label: 'prompts answered', unit: '', value: prompts.length - unansweredTotal },
  ];

  const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : '–');
  const breakerLine = `Breaker (service log, s from the start of the outage): ${transitions.map((t) => `${t.from}→${t.to} ${((t.at - timeline.hangAt) / 1000).toFixed(2)}`).join(', ') || 'no change'}.`;
  const decisionLine = `Endpoint turns by the health they saw (state/decision/reason): ${phases.map((phase) => `${phase}: ${Object.entries(decisions(phase)).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`).join('; ')}.`;
  const peerLine =
    `Integrator: ${peers.integrator.channelRequests} channel requests answered, ${peers.integrator.held} held unanswered during the outage, ${peers.integrator.probes} probes answered, ${peers.integrator.unverified} unverified. ` +
    `LLM: ${peers.llm.requests} requests, ${peers.llm.withPassages} with knowledge passages, ${peers.llm.withoutPassages} without.`;
  // Where a turn's time went, as the service recorded it (ms, p50 per phase): the knowledge search and the AI step.
  const timing = (group: string, turns: Map<string, TurnRecord>, phase: Phase, key: string) => {
    const values = prompts.filter((p) => p.group === group && phaseOf(p.sentAt, p.ref) === phase).map((p) => turns.get(p.ref)?.timings?.[key]).filter((v): v is number => typeof v === 'number');
    return values.length === 0 ? '–' : ms(summarize(Float64Array.from(values)).p50);
  };
  const timingsLine =
    `Service's own turn timings, p50 ms (knowledge search / AI step): ` +
    phases
      .map((phase) => `${phase}: endpoint ${timing('endpoint', measured.endpointTurns, phase, 'knowledge')} / ${timing('endpoint', measured.endpointTurns, phase, 'ai0')}, knowledge-only ${timing('knowledge', measured.knowledgeTurns, phase, 'knowledge')} / ${timing('knowledge', measured.knowledgeTurns, phase, 'ai0')}`)
      .join('; ') + '.';
  const loopMax = (from: number, to: number) => ms(Math.max(0, ...measured.peersLoopSamples.filter((x) => x.at >= from && x.at < to).map((x) => x.maxMs)));
  const peersLoopLine =
    `Event-loop delay of the integrator/LLM process, max ms: before ${loopMax(timeline.measureFrom, timeline.hangAt)}, outage ${loopMax(timeline.hangAt, timeline.recoverAt)}, ` +
    `after ${loopMax(timeline.recoverAt, timeline.end)}.`;
  const late = prompts.filter((p) => p.sentAt - p.dueAt > 50);
  const lateLine = `Prompts sent late because the previous answer was still outstanding: ${late.length} (longest ${ms(Math.max(0, ...late.map((p) => p.sentAt - p.dueAt)))} ms).`;
  const setup =
    `${parameters.endpointCalls} calls to the integration's number and ${parameters.knowledgeCalls} to a knowledge-only workspace's number, each speaking every ${parameters.intervalMs} ms ` +
    `(callers in a child process, ConversationRelay over WebSockets), the service as \`node src/main.ts\` in its own process (${parameters.database}, LOG_LEVEL info); ` +
    `${parameters.warmupSeconds} s warm-up, ${parameters.healthySeconds} s healthy, ${parameters.outageSeconds} s hanging (connections accepted, requests never answered), ${parameters.recoveredSeconds} s answering again; ` +
    `loopback HTTPS integrator ${INTEGRATOR_MS} ms (handled), scripted OpenAI-compatible LLM ${LLM_MS} ms; ${PAGES.length} knowledge pages in both workspaces. ` +
    `Time per prompt: from the prompt frame to the answer's last frame, the answer matched to its prompt by its reference.`;
  const invalid = [
    ...(prompts.length === 0 ? ['no prompt was recorded'] : []),
    ...(measured.connectErrors > 0 ? [`${measured.connectErrors} calls did not connect`] : []),
    ...(measured.dropped > 0 ? [`${measured.dropped} calls dropped`] : []),
    ...(unansweredTotal > 0
      ? [`${unansweredTotal} prompts unanswered: ${unanswered.slice(0, 5).map((p) => `${p.ref} (${phaseOf(p.sentAt, p.ref)})`).join(', ')}`]
      : []),
    ...(duplicates.length > 0 ? [`${duplicates.length} duplicate answers: ${duplicates.slice(0, 5).map((d) => d.ref).join(', ')}`] : []),
    ...(unmatched.length > 0
      ? [`${unmatched.length} answers matching no prompt: ${unmatched.slice(0, 3).map((u) => JSON.stringify(u.text.slice(0, 80))).join(', ')}`]
      : []),
  ];
  const answersLine =
    `Answers per phase, endpoint calls (integrator / knowledge): ` +
    phases.map((phase) => `${phase} ${stats[phase].endpoint.count} (${stats[phase].fromIntegrator} / ${stats[phase].fromKnowledge})`).join(', ') +
    '.';
  const warningsLine = measured.serviceWarnings.length > 0 ? `Service warnings: ${[...new Set(measured.serviceWarnings)].join('; ')}.` : '';
  const notes = [answersLine, breakerLine, decisionLine, timingsLine, peersLoopLine, peerLine, lateLine, warningsLine].filter(Boolean);

  return {
    metrics,
    invalid,
    setup: [setup, ...notes].join(' '),
    parameters: { ...parameters, deadlineMs: PHONE_CHANNEL_TIMEOUT_MS, marginMs: MARGIN_MS },
    details: {
      phasesMs: Object.fromEntries(
        phases.map((p) => [
          p,
          {
            endpoint: roundAll(stats[p].endpoint),
            knowledge: roundAll(stats[p].knowledge),
            fromIntegrator: stats[p].fromIntegrator,
            fromKnowledge: stats[p].fromKnowledge,
          },
        ]),
      ),
      decisions: Object.fromEntries(phases.map((p) => [p, decisions(p)])),
      transitions: transitions.map((t) => ({ ...t, atSecondsFromHang: round((t.at - timeline.hangAt) / 1000) })),
      polledHealth: measured.polled.map((p) => ({ state: p.state, sinceSecondsFromHang: round((p.since - timeline.hangAt) / 1000) })),
      prompts: prompts.length,
      unanswered: unanswered.map((p) => p.ref),
      duplicates,
      unmatched,
      late: late.length,
      connectErrors: measured.connectErrors,
      dropped: measured.dropped,
      peers,
      callersCpuMicros: measured.results?.cpuMicros ?? 0,
      serviceWarnings: [...new Set(measured.serviceWarnings)],
    },
  };
}

function roundAll(summary: LatencySummary): Record<string, number> {
  return Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, round(v)]));
}

function progress(line: string): void {
  benchProgress(name, line);
}
