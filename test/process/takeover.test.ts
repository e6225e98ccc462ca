/**
 * Take-over between engines (docs/reliability.md, "Leases"): two engines on one PostgreSQL.
 *
 * - Engine A is killed with SIGKILL while it answers a WhatsApp message, a web chat message and a webhook delivery
 *   (each held at the outside server it waits on); engine B completes all three within 30 s of the kill, once, with
 *   the production lease (LEASE_MS unset: 15 s). Engine B is paused (SIGSTOP) while the work is handed to A, so all
 *   three are A's, and let go again just before the kill.
 * - A turn that takes eight or more lease lengths (a slow integrator and a slow model, a slow webhook receiver) is never
 *   taken over by the other engine while its engine works. The outside time-outs (bot link 6 s, model 8 s) bound a real
 *   turn, so this runs with `LEASE_MS=1000` (the setting exists for tests): the ratio of a two-minute turn to the
 *   15 s production lease (8) holds, and every turn here lasts 7 to 12 lease lengths.
 *
 * Needs the real PostgreSQL (TEST_DATABASE_URL, which CI sets): each test makes a database of its own.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { openDatabase } from '../../db/database.ts';
import { fixture, metaSignature, unixSeconds } from '../channels/whatsapp/fixtures/meta.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { api, freePort, startServiceProcess, type ServiceProcess } from '../../harness/service-process.ts';
import { startTestServiceOn, type TestService } from '../helpers/service.ts';
import { until } from '../webhooks/receiver.ts';

const admin = process.env.TEST_DATABASE_URL;

const ADMIN_TOKEN = `takeover-admin-${randomBytes(16).toString('hex')}`;
const MASTER_KEY = randomBytes(32).toString('hex');
const SHOP = 'https://shop.example';
const APP_SECRET = `takeover-app-secret-${randomBytes(8).toString('hex')}`;
const PHONE_NUMBER_ID = '106540352242977';
const ACCESS_TOKEN = 'EAAGtakeoverAccessToken0123456789abcdef';
const TAKEOVER_LIMIT_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The outside world: the model, the integrator, Meta's Graph API and the webhook receiver, with what each saw. */
interface World {
  llm: TestHttpsServer;
  integrator: TestHttpsServer;
  graph: TestHttpsServer;
  receiver: TestHttpsServer;
  /** Model requests per token (`tok-…` in the customer's words), and the time the answer to each token left. */
  llmRequests: Map<string, number>;
  llmFirstAt: Map<string, number>;
  llmAnsweredAt: Map<string, number>;
  /** Tokens whose first model request is held unanswered (the engine dies under it). */
  holdFirst: Set<string>;
  held: Map<string, ServerResponse>;
  /** Tokens whose answer takes this long. */
  slowMs: Map<string, number>;
  integratorRequests: Map<string, number>;
  /** Graph API sends per token. */
  replies: Map<string, number>;
  /** Webhook deliveries per webhook-id: requests, and answers given. */
  deliveryRequests: Map<string, number>;
  deliveryAnswers: Map<string, number>;
  holdFirstDelivery: boolean;
  deliveryDelayMs: number;
}

const tokenOf = (text: string) => [...text.matchAll(/tok-[a-z0-9-]+/g)].at(-1)?.[0] ?? 'none';
const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

async function startWorld(): Promise<World> {
  const w = {
    llmRequests: new Map(),
    llmFirstAt: new Map(),
    llmAnsweredAt: new Map(),
    holdFirst: new Set(),
    held: new Map(),
    slowMs: new Map(),
    integratorRequests: new Map(),
    replies: new Map(),
    deliveryRequests: new Map(),
    deliveryAnswers: new Map(),
    holdFirstDelivery: false,
    deliveryDelayMs: 0,
  } as unknown as World;
  w.llm = await startHttpsServer(async (_req, res, body) => {
    // The customer's words are the last user message of the prompt: its token names the turn.
    const messages = (JSON.parse(body.toString('utf8')) as { messages: { role: string; content: string }[] }).messages;
    const token = tokenOf(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
    bump(w.llmRequests, token);
    if (!w.llmFirstAt.has(token)) w.llmFirstAt.set(token, Date.now());
    if (w.holdFirst.has(token) && !w.held.has(token)) {
      w.held.set(token, res);
      return;
    }
    await sleep(w.slowMs.get(token) ?? 0);
    w.llmAnsweredAt.set(token, Date.now());
    sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: `Shipping is free, ${token}.` }, finish_reason: 'stop' }] });
  });
  w.integrator = await startHttpsServer(async (req, res, body) => {
    if (req.method === 'GET') return sendJson(res, 200, { tools: [] });
    const { message } = JSON.parse(body.toString('utf8')) as { message: string };
    const token = tokenOf(message);
    bump(w.integratorRequests, token);
    await sleep(w.slowMs.get(token) ?? 0);
    sendJson(res, 200, { reply: 'Orders ship within two days.', handled: false });
  });
  w.graph = await startHttpsServer((_req, res, body) => {
    const send = JSON.parse(body.toString('utf8')) as { to: string; text?: { body?: string } };
    bump(w.replies, tokenOf(send.text?.body ?? ''));
    sendJson(res, 200, { messaging_product: 'whatsapp', contacts: [{ input: send.to, wa_id: send.to }], messages: [{ id: `wamid.OUT${randomBytes(6).toString('hex')}` }] });
  });
  w.receiver = await startHttpsServer(async (req, res) => {
    const id = String(req.headers['webhook-id']);
    bump(w.deliveryRequests, id);
    if (w.holdFirstDelivery && w.deliveryRequests.get(id) === 1) return; // held: the engine dies under it
    await sleep(w.deliveryDelayMs);
    bump(w.deliveryAnswers, id);
    res.writeHead(204).end();
  });
  return w;
}

async function stopWorld(w: World | undefined): Promise<void> {
  if (!w) return;
  for (const res of w.held.values()) res.destroy();
  await Promise.all([w.llm.close(), w.integrator.close(), w.graph.close(), w.receiver.close()]);
}

/** A database of its own on the test server, dropped by the returned function. */
async function createDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `takeover_${randomBytes(6).toString('hex')}`;
  const direct = await openDatabase({ url, poolSize: 1 });
  await sql`create database ${sql.id(name)}`.execute(direct.db);
  await direct.close();
  const own = new URL(url);
  own.pathname = `/${name}`;
  return {
    url: own.toString(),
    async drop() {
      const again = await openDatabase({ url, poolSize: 1 });
      await sql`drop database if exists ${sql.id(name)} with (force)`.execute(again.db);
      await again.close();
    },
  };
}

function whatsappBody(waId: string, text: string): Buffer {
  return fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: `wamid.IN${randomBytes(8).toString('hex')}`, TIMESTAMP: unixSeconds(new Date()), BODY: text });
}

async function postWhatsapp(base: string, waId: string, text: string): Promise<number> {
  const body = whatsappBody(waId, text);
  const res = await fetch(`${base}/v1/whatsapp/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': metaSignature(APP_SECRET, body) }, body });
  return res.status;
}

/** The workspace as an owner sets it up: WhatsApp, web chat, a new_chat webhook and one knowledge page. */
async function configure(base: string, w: World, integration: boolean): Promise<{ widgetKey: string }> {
  const created = await api(base, 'POST', '/v1/admin/workspaces', ADMIN_TOKEN, { name: 'Take-over', owner_email: 'owner@takeover.example' });
  const owner = (created.owner as { token: string }).token;
  if (integration) await api(base, 'PUT', '/v1/integration', owner, { endpoint_url: `${w.integrator.origin}/botlink/channel` });
  await api(base, 'PUT', '/v1/whatsapp', owner, { phone_number_id: PHONE_NUMBER_ID, access_token: ACCESS_TOKEN });
  await api(base, 'PUT', '/v1/webhooks/new_chat', owner, { url: `${w.receiver.origin}/hooks/new_chat` });
  await api(base, 'PUT', '/v1/webchat', owner, { allowed_origins: [SHOP] });
  const syncKey = (await api(base, 'POST', '/v1/keys/sync', owner)).key as string;
  const page = { title: 'Shipping', language: 'en', body: 'We ship every order within two working days. Shipping is free above 50 euro.' };
  const synced = await fetch(`${base}/v1/sync/pages/shipping`, { method: 'PUT', headers: { 'x-sync-key': syncKey, 'content-type': 'application/json' }, body: JSON.stringify(page) });
  expect(synced.status).toBe(201);
  return { widgetKey: (await api(base, 'GET', '/v1/keys/widget', owner)).key as string };
}

function widget(widgetKey: string) {
  const headers = { 'x-widget-key': widgetKey, origin: SHOP, 'content-type': 'application/json' };
  /** Each conversation's visitor token, which its next messages carry. */
  const tokens = new Map<string, string>();
  return {
    async start(base: string, text: string): Promise<string> {
      const res = await fetch(`${base}/v1/webchat/conversations`, { method: 'POST', headers, body: JSON.stringify({ visitor_message: text, page_url: `${SHOP}/cart`, language: 'en' }) });
      expect(res.status).toBe(201);
      const started = (await res.json()) as { conversation_id: string; visitor_token: string };
      tokens.set(started.conversation_id, started.visitor_token);
      return started.conversation_id;
    },
    async say(base: string, conversationId: string, text: string): Promise<string | null> {
      const visitor = { ...headers, 'x-visitor-token': tokens.get(conversationId) ?? '' };
      const res = await fetch(`${base}/v1/webchat/conversations/${conversationId}/messages`, { method: 'POST', headers: visitor, body: JSON.stringify({ message: text, language: 'en' }) });
      expect(res.status).toBe(200);
      return ((await res.json()) as { reply: string | null }).reply;
    },
  };
}

for (const url of admin ? [admin] : []) {
  describe('two engines on one PostgreSQL: take-over after a crash', () => {
    let w: World;
    let database: Awaited<ReturnType<typeof createDatabase>>;
    const engines: ServiceProcess[] = [];

    beforeAll(async () => {
      w = await startWorld();
      database = await createDatabase(url);
    });
    afterAll(async () => {
      for (const e of engines) {
        try {
          process.kill(e.pid, 'SIGCONT');
        } catch {
          // already gone
        }
        await e.kill();
      }
      await stopWorld(w);
      await database?.drop();
    });

    it('engine A killed while it answers a WhatsApp message, a web chat message and a webhook delivery: engine B completes all three within 30 s, once', async () => {
      const env = {
        DATABASE_URL: database.url,
        MASTER_KEY,
        ADMIN_TOKEN,
        OUTBOUND_ALLOW: '127.0.0.1/32',
        WHATSAPP_APP_SECRET: APP_SECRET,
        WHATSAPP_VERIFY_TOKEN: 'takeover-verify',
        WHATSAPP_GRAPH_URL: `${w.graph.origin}/v21.0`,
        LLM_BASE_URL: `${w.llm.origin}/v1`,
        LLM_MODEL: 'test-model',
      };
      // A migrates first; B finds nothing to do.
      const a = await startServiceProcess({ port: await freePort(), env });
      engines.push(a);
      const b = await startServiceProcess({ port: await freePort(), env });
      engines.push(b);
      const { widgetKey } = await configure(a.url, w, false);
      const chat = widget(widgetKey);

      // B pauses while the work goes to A, so that all three are A's.
      process.kill(b.pid, 'SIGSTOP');
      w.holdFirst.add('tok-chat-two').add('tok-wa-one');
      w.holdFirstDelivery = true;
      const conversationId = await chat.start(a.url, 'Is shipping free? tok-chat-one');
      const dying = chat.say(a.url, conversationId, 'Is shipping free to Belgium? tok-chat-two').then(
        () => 'answered',
        () => 'no answer',
      );
      expect(await postWhatsapp(a.url, '31612345001', 'Is shipping free? tok-wa-one')).toBe(200);
      // The model is asked for both turns and the receiver has the delivery: well within the model's 8 s deadline.
      await until(() => w.held.has('tok-chat-two') && w.held.has('tok-wa-one') && [...w.deliveryRequests.values()].some((n) => n === 1), 6_000, 'all three under way on A');
      const [webhookId] = [...w.deliveryRequests.keys()];

      process.kill(b.pid, 'SIGCONT');
      const killedAt = Date.now();
      await a.kill();
      expect(await dying).toBe('no answer');

      // The visitor's widget sends the message again; the load balancer passes it to B.
      const reply = await chat.say(b.url, conversationId, 'Is shipping free to Belgium? tok-chat-two');
      const chatMs = Date.now() - killedAt;
      expect(reply).toContain('tok-chat-two');
      await until(() => w.replies.has('tok-wa-one'), TAKEOVER_LIMIT_MS, 'the WhatsApp reply');
      const whatsappMs = Date.now() - killedAt;
      await until(() => w.deliveryAnswers.has(webhookId!), TAKEOVER_LIMIT_MS, 'the webhook delivery');
      const webhookMs = Date.now() - killedAt;
      console.info(`[takeover] completed by engine B after the kill: web chat ${chatMs} ms, WhatsApp ${whatsappMs} ms, webhook ${webhookMs} ms`);
      expect(Math.max(chatMs, whatsappMs, webhookMs)).toBeLessThanOrEqual(TAKEOVER_LIMIT_MS);

      // Once: one reply sent, one delivery answered under the first webhook-id, one turn and one answer stored each.
      await sleep(2_000);
      expect(w.replies.get('tok-wa-one')).toBe(1);
      expect(w.deliveryRequests.get(webhookId!)).toBe(2);
      expect(w.deliveryAnswers.get(webhookId!)).toBe(1);
      const opened = await openDatabase({ url: database.url, poolSize: 1 });
      try {
        const turns = await sql<{ customer_message: string; n: number }>`
          select customer_message, count(*)::int as n from session_turns where status = 'completed' group by customer_message`.execute(opened.db);
        const count = (token: string) => turns.rows.filter((t) => t.customer_message.includes(token)).reduce((n, t) => n + t.n, 0);
        expect(count('tok-chat-two')).toBe(1);
        expect(count('tok-wa-one')).toBe(1);
        const botReplies = await sql<{ n: number }>`select count(*)::int as n from session_messages where "from" = 'bot' and text like '%tok-chat-two%'`.execute(opened.db);
        expect(botReplies.rows[0]!.n).toBe(1);
        const inbound = await sql<{ state: string }>`select state from whatsapp_inbound_messages`.execute(opened.db);
        expect(inbound.rows.map((r) => r.state)).toEqual(['done']);
        const deliveries = await sql<{ status: string }>`select status from webhook_deliveries`.execute(opened.db);
        expect(deliveries.rows.map((r) => r.status)).toEqual(['succeeded']);
      } finally {
        await opened.close();
      }
      expect(b.warnings.filter((l) => l.level >= 50)).toEqual([]);
    }, 120_000);
  });

  describe('two engines on one PostgreSQL: long work is never taken over', () => {
    let w: World;
    let database: Awaited<ReturnType<typeof createDatabase>>;
    const engines: TestService[] = [];

    beforeAll(async () => {
      w = await startWorld();
      database = await createDatabase(url);
    });
    afterAll(async () => {
      for (const e of engines) await e.stop();
      await stopWorld(w);
      await database?.drop();
    });

    it('a WhatsApp turn, a web chat turn and a webhook delivery of 7 to 12 lease lengths each run once, on one engine', async () => {
      const LEASE_MS = 1_000;
      const env = {
        DATABASE_URL: database.url,
        MASTER_KEY,
        ADMIN_TOKEN,
        LEASE_MS: String(LEASE_MS),
        WHATSAPP_APP_SECRET: APP_SECRET,
        WHATSAPP_VERIFY_TOKEN: 'takeover-verify',
        WHATSAPP_GRAPH_URL: `${w.graph.origin}/v21.0`,
        LLM_BASE_URL: `${w.llm.origin}/v1`,
        LLM_MODEL: 'test-model',
      };
      const one = await startTestServiceOn(env);
      engines.push(one);
      const two = await startTestServiceOn(env);
      engines.push(two);
      const { widgetKey } = await configure(one.url, w, true);
      const chat = widget(widgetKey);
      // The integrator answers after 5 s (its limit is 6 s), the model after 7 s (8 s), the receiver after 10 s (15 s).
      w.slowMs.set('tok-slow-wa', 5_000);
      w.slowMs.set('tok-slow-chat', 7_000);
      w.deliveryDelayMs = 10_000;

      const conversationId = await chat.start(one.url, 'Is shipping free? tok-first');
      expect(await postWhatsapp(two.url, '31612345002', 'Is shipping free? tok-slow-wa')).toBe(200);
      const slow = chat.say(one.url, conversationId, 'Is shipping free to Belgium? tok-slow-chat');
      // The visitor writes again, and the load balancer sends it to the other engine: it waits for the running turn.
      await sleep(2 * LEASE_MS);
      const next = chat.say(two.url, conversationId, 'And to Germany? tok-next');
      expect(await slow).toContain('tok-slow-chat');
      expect(await next).toContain('tok-next');
      expect(w.llmFirstAt.get('tok-next')!).toBeGreaterThanOrEqual(w.llmAnsweredAt.get('tok-slow-chat')!);

      await until(() => w.replies.has('tok-slow-wa'), 30_000, 'the slow WhatsApp reply');
      await until(() => w.deliveryAnswers.size > 0, 30_000, 'the slow webhook delivery');
      await sleep(3 * LEASE_MS);
      // Each piece of work was done once: never claimed again by the other engine while its own engine worked on it.
      expect(w.integratorRequests.get('tok-slow-wa')).toBe(1);
      expect(w.llmRequests.get('tok-slow-wa')).toBe(1);
      expect(w.replies.get('tok-slow-wa')).toBe(1);
      expect(w.llmRequests.get('tok-slow-chat')).toBe(1);
      expect([...w.deliveryRequests.values()]).toEqual([1]);
      expect([...w.deliveryAnswers.values()]).toEqual([1]);
    }, 120_000);
  });
}
