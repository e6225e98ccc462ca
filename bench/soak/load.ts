/**
 * The soak's load: everyone outside the deployment. The integrator (echoing each message after 50 ms, so an answer
 * names its question), Meta (signed webhooks in, and the Graph API the replies go to), the website visitors and the
 * webhook receiver (verifying every delivery with the official `standardwebhooks` library). The phone callers run in
 * a process of their own (bench/processes/phone-callers.ts). What each server saw is in `seen`; what the traffic
 * sent and got back is in the Traffic object. Both are read by bench/soak/checks.ts.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { Agent, fetch as fetchFrom } from 'undici';
import { signWebhookBody } from '../../src/channels/whatsapp/signature.ts';
import { verifyChannelRequest } from '../../src/receiver/index.ts';
import { metaTextMessage } from '../../harness/meta-webhook.ts';
import { api } from '../../harness/service-process.ts';
import { https } from '../lib/https-peer.ts';

/** The load besides the phone: per second, across two workspaces (the widget's rate limit is 3 requests/s each). */
export const LOAD = {
  promptIntervalMs: 2_000,
  integratorMs: 50,
  whatsappPerSecond: 20,
  /** Each customer writes every this often; so 40 customers. */
  customerIntervalMs: 2_000,
  /** New website conversations per second per workspace; every 5th adds a lead, every 10th asks for a person. */
  chatsPerSecondPerWorkspace: 2,
  workspaces: 2,
};

export const APP_SECRET = `soak-app-secret-${randomBytes(8).toString('hex')}`;
export const ACCESS_TOKEN = `EAAGsoak${randomBytes(12).toString('hex')}`;
export const ADMIN_TOKEN = `soak-admin-${randomBytes(16).toString('hex')}`;
export const BRIDGE_TOKEN = `soak-bridge-${randomBytes(16).toString('hex')}`;
const EVENTS = ['new_chat', 'new_lead', 'escalation'] as const;
const SHOP_ORIGIN = 'https://shop.example';
/** The header the soak's HAProxy adds to every answer: which engine served it. */
export const ENGINE_HEADER = 'x-botlink-engine';

export interface Workspace {
  index: number;
  owner: string;
  integrationKey: string;
  widgetKey: string;
  phoneNumberId: string;
  secrets: Map<string, string>;
  id: string;
}

export function newWorkspaces(): Workspace[] {
  return Array.from({ length: LOAD.workspaces }, (_, index) => ({
    index,
    owner: '',
    id: '',
    integrationKey: '',
    widgetKey: '',
    phoneNumberId: `10${String(Math.floor(Math.random() * 1e12)).padStart(12, '0')}${index}`,
    secrets: new Map(),
  }));
}

/** Counters of this process's servers; every field that is not a count of work done is an error. */
export const seen = {
  channelRequests: 0,
  integratorUnverified: 0,
  /** WhatsApp token → replies sent to it, and the time of the first. */
  replies: new Map<string, number>(),
  firstReplyAt: new Map<string, number>(),
  graphUnmatched: 0,
  graphWrongToken: 0,
  /** webhook-id → deliveries received, the event and conversation it carried, and when it first arrived. */
  deliveries: new Map<string, { count: number; key: string; at: number }>(),
  deliveryRequests: 0,
  webhooksUnverified: 0,
};

function json(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export type Peers = Awaited<ReturnType<typeof startPeers>>;

export async function startPeers(workspaces: Workspace[]) {
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
    else seen.deliveries.set(id, { count: 1, key: `${payload.event}:${payload.conversation_id}`, at: performance.now() });
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

/** Two workspaces with the integrator, WhatsApp, the three webhooks and the web chat; the phone number on the first. */
export async function configure(base: string, peers: { integrator: string; receiver: string }, workspaces: Workspace[], number: string): Promise<void> {
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

/** WhatsApp customers and website visitors at LOAD's rates, each message named by a token its answer must carry. */
/** Deliveries of one WhatsApp message before it counts as refused (Meta goes on for days; the soak is minutes). */
const WHATSAPP_ATTEMPTS = 5;
const WHATSAPP_RETRY_MS = 1_000;

export class Traffic {
  readonly #base: string;
  readonly #workspaces: Workspace[];
  readonly #inFlight = new Set<Promise<void>>();
  readonly #timers: NodeJS.Timeout[] = [];
  readonly whatsapp = { sent: 0, acked: 0, retried: 0, ackedAt: new Map<string, number>(), errors: [] as string[], ackMs: [] as number[] };
  readonly webchat = { conversations: 0, answered: 0, leads: 0, escalations: 0, errors: [] as string[], replyMs: [] as number[] };
  /** `event:conversation_id` of every event the service acknowledged (a 201, a recorded lead, a first escalation), and when. */
  readonly expectedEvents = new Map<string, number>();
  /** Web chat turns answered, by the engine that served them (the load balancer's header). */
  readonly chatTurnsByEngine = new Map<string, number>();

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

  /**
   * One customer message, delivered as Meta delivers webhooks: a delivery that is not answered 200 (an engine killed
   * with the request in flight, before the balancer's health check takes it out) is sent again, here after 1 s, up to
   * WHATSAPP_ATTEMPTS times. Only a message never acknowledged is an error; its retries are counted.
   */
  async #whatsapp(workspace: Workspace, waId: string, token: string): Promise<void> {
    const body = JSON.stringify(metaTextMessage({ phoneNumberId: workspace.phoneNumberId, waId, messageId: `wamid.SOAK${randomBytes(10).toString('hex')}`, text: `Where is my order? ${token}` }));
    this.whatsapp.sent++;
    let status: number | string = 0;
    for (let attempt = 1; attempt <= WHATSAPP_ATTEMPTS; attempt++) {
      if (attempt > 1) {
        this.whatsapp.retried++;
        await new Promise((resolve) => setTimeout(resolve, WHATSAPP_RETRY_MS));
      }
      const started = performance.now();
      status = await fetch(`${this.#base}/v1/whatsapp/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': signWebhookBody(APP_SECRET, body) },
        body,
      }).then(
        async (r) => (await r.arrayBuffer(), r.status),
        (err: unknown) => String(err),
      );
      if (status === 200) {
        this.whatsapp.acked++;
        this.whatsapp.ackedAt.set(token, performance.now());
        this.whatsapp.ackMs.push(performance.now() - started);
        return;
      }
    }
    this.whatsapp.errors.push(`webhook ${status}`);
  }

  async #chat(workspace: Workspace, n: number): Promise<void> {
    const headers: Record<string, string> = { 'x-widget-key': workspace.widgetKey, origin: SHOP_ORIGIN, 'content-type': 'application/json' };
    // Each visitor from an address of their own, as on the web: the widget's budget is per visitor (docs/webchat.md).
    const dispatcher = visitorAgent(n);
    const post = async (path: string, body: unknown) => {
      const res = await fetchFrom(`${this.#base}/v1/webchat/conversations${path}`, { method: 'POST', headers, body: JSON.stringify(body), dispatcher }).catch((err: unknown) => String(err));
      if (typeof res === 'string') return { status: res, engine: null, body: {} as Record<string, unknown> };
      return { status: String(res.status), engine: res.headers.get(ENGINE_HEADER), body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
    };
    this.webchat.conversations++;
    const started = performance.now();
    const opened = await post('', { visitor_message: `Do you ship to Utrecht? (chat ${workspace.index}-${n})`, page_url: 'https://shop.example/p/1' });
    if (opened.status !== '201') return void this.webchat.errors.push(`conversation ${opened.status}`);
    this.webchat.replyMs.push(performance.now() - started);
    if (opened.engine) this.chatTurnsByEngine.set(opened.engine, (this.chatTurnsByEngine.get(opened.engine) ?? 0) + 1);
    const id = opened.body.conversation_id as string;
    // The conversation's writes after its start need the visitor's token (docs/webchat.md, "The visitor token").
    headers['x-visitor-token'] = String(opened.body.visitor_token);
    this.expectedEvents.set(`new_chat:${id}`, performance.now());
    if (typeof opened.body.reply === 'string' && opened.body.reply.length > 0) this.webchat.answered++;
    else this.webchat.errors.push('conversation answered without a reply');
    if (n % 5 === 0) {
      const lead = await post(`/${id}/lead`, { name: `Visitor ${n}`, email: `visitor${n}@example.com` });
      if (lead.status === '200' && lead.body.recorded === true) {
        this.webchat.leads++;
        this.expectedEvents.set(`new_lead:${id}`, performance.now());
      } else this.webchat.errors.push(`lead ${lead.status}`);
    }
    if (n % 10 === 0) {
      const escalation = await post(`/${id}/escalate`, { message: 'Can I talk to someone?' });
      if (escalation.status === '200') {
        this.webchat.escalations++;
        this.expectedEvents.set(`escalation:${id}`, performance.now());
      } else this.webchat.errors.push(`escalate ${escalation.status}`);
    }
  }
}
