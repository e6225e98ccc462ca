/**
 * Through a transaction pooler (docs/operations.md, "Several processes on one PostgreSQL"): two engines whose
 * DATABASE_URL is Debian's pgbouncer in transaction mode, with DATABASE_POOLER=transaction, on a database of their own
 * that they migrate themselves through the pooler. Every channel works, the knowledge base and webhooks work, and a
 * stream on one engine sees a turn handled by the other (by polling: no LISTEN through a pooler). Needs the real
 * PostgreSQL (TEST_DATABASE_URL, which CI sets) and pgbouncer (which .ci/run installs).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnDatabase, type OwnDatabase } from '../helpers/db.ts';
import { fixture, metaSignature, unixSeconds } from '../channels/whatsapp/fixtures/meta.ts';
import { ACCESS_TOKEN, APP_SECRET, PHONE_NUMBER_ID, TEST_WORKER, VERIFY_TOKEN, until, wamid } from '../channels/whatsapp/fixtures/harness.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { startPgbouncer, type Pgbouncer } from '../../harness/pgbouncer.ts';
import { BRIDGE_TOKEN, Caller } from '../helpers/phone-caller.ts';
import { seedWorkspace, startTestServiceOn, type TestService } from '../helpers/service.ts';

const admin = process.env.TEST_DATABASE_URL;
const SHOP = 'https://shop.example';
const NUMBER = '+31201119999';

for (const url of admin ? [admin] : []) {
  describe('two engines through pgbouncer in transaction mode', () => {
    let bouncer: Pgbouncer;
    let database: OwnDatabase | undefined;
    let a: TestService;
    let b: TestService;
    let graph: TestHttpsServer;
    let receiver: TestHttpsServer;
    let ws: Awaited<ReturnType<typeof seedWorkspace>>;
    const callers: Caller[] = [];

    beforeAll(async () => {
      const upstream = new URL(url);
      bouncer = await startPgbouncer({ host: upstream.hostname, port: Number(upstream.port || 5432), user: decodeURIComponent(upstream.username || 'postgres') });
      database = await createOwnDatabase(url, 'pooler');
      graph = await startHttpsServer((_req, res, body) => {
        const to = (JSON.parse(body.toString()) as { to: string }).to;
        sendJson(res, 200, { messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: `wamid.OUT${randomUUID()}` }] });
      });
      receiver = await startHttpsServer((_req, res) => void res.writeHead(204).end());
      const env = {
        DATABASE_URL: bouncer.url(database.name),
        DATABASE_POOLER: 'transaction',
        MASTER_KEY: randomBytes(32).toString('hex'),
        BRIDGE_TOKEN,
        WHATSAPP_APP_SECRET: APP_SECRET,
        WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
        WHATSAPP_GRAPH_URL: `${graph.origin}/v21.0`,
      };
      const options = { whatsapp: { worker: TEST_WORKER }, webhooks: { pollIntervalMs: 200 }, live: { pollMs: 200, watchesRefreshMs: 200 } };
      // Both migrate through the pooler, the second finding nothing to do.
      a = await startTestServiceOn(env, { ...options, sessions: { instanceId: 'pooled-a' } });
      b = await startTestServiceOn(env, { ...options, sessions: { instanceId: 'pooled-b' } });
      ws = await seedWorkspace(a, 'Pooled');
    }, 60_000);

    afterAll(async () => {
      for (const c of callers) c.ws.terminate();
      await a?.stop();
      await b?.stop();
      await graph?.close();
      await receiver?.close();
      await bouncer?.stop();
      await database?.drop();
    });

    it('the knowledge base, web chat and its webhook: synced on one engine, answered and delivered by the engines', async () => {
      const hook = await a.api('PUT', '/v1/webhooks/new_chat', { token: ws.owner, body: { url: `${receiver.origin}/hooks/new-chat` } });
      expect(hook.status).toBe(200);
      const syncKey = (await a.api('POST', '/v1/keys/sync', { token: ws.owner })).body.key as string;
      const page = { title: 'Shipping', language: 'en', body: 'We ship every order within two working days. Shipping is free above 50 euro.' };
      expect((await a.api('PUT', '/v1/sync/pages/shipping', { headers: { 'x-sync-key': syncKey }, body: page })).status).toBe(201);
      expect((await b.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } })).status).toBe(200);
      const widgetKey = (await b.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
      const started = await b.api('POST', '/v1/webchat/conversations', {
        headers: { 'x-widget-key': widgetKey, origin: SHOP },
        body: { visitor_message: 'Is shipping free?', page_url: `${SHOP}/cart` },
      });
      expect(started.status).toBe(201);
      expect(started.body.reply).toContain('Shipping is free above 50 euro.');
      await until(() => receiver.requests.some((r) => r.url === '/hooks/new-chat'), 10_000);
      const delivered = receiver.requests.filter((r) => r.url === '/hooks/new-chat').map((r) => JSON.parse(r.body.toString()) as { conversation_id: string });
      expect(delivered).toEqual([expect.objectContaining({ event: 'new_chat', conversation_id: started.body.conversation_id })]);
    });

    it('WhatsApp: a message acknowledged by one engine is answered once', async () => {
      expect((await a.api('PUT', '/v1/whatsapp', { token: ws.owner, body: { phone_number_id: PHONE_NUMBER_ID, access_token: ACCESS_TOKEN } })).status).toBe(200);
      const waId = `3161${String(1_000_000 + Math.floor(Math.random() * 8_000_000))}`;
      const body = fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(new Date()), BODY: 'Is shipping free?' });
      const res = await fetch(`${b.url}/v1/whatsapp/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': metaSignature(APP_SECRET, body) },
        body,
      });
      expect(res.status).toBe(200);
      const sends = await until(() => {
        const to = graph.requests.filter((r) => (JSON.parse(r.body.toString()) as { to: string }).to === waId);
        return to.length > 0 ? to : undefined;
      }, 15_000);
      await new Promise((r) => setTimeout(r, 500));
      expect(graph.requests.filter((r) => (JSON.parse(r.body.toString()) as { to: string }).to === waId)).toHaveLength(1);
      expect((JSON.parse(sends[0]!.body.toString()) as { text: { body: string } }).text.body).toContain('Shipping is free above 50 euro.');
    });

    it('the phone on either engine, and a stream on one engine sees the turns the other handled', async () => {
      expect((await a.api('PUT', '/v1/phone', { token: ws.owner, body: { numbers: [NUMBER] } })).status).toBe(200);
      const sid = `CA${randomUUID().replaceAll('-', '')}`;
      const caller = await Caller.connect(a);
      callers.push(caller);
      caller.setup(sid, NUMBER);
      caller.say('Is shipping free?');
      expect(String((await caller.answer()).token)).toContain('Shipping is free above 50 euro.');
      const session = await until(async () => (await b.api('GET', '/v1/sessions?channel=phone', { token: ws.agent })).body.sessions[0] as { id: string } | undefined);

      const controller = new AbortController();
      const stream = await fetch(`${b.url}/v1/sessions/${session.id}/events`, { headers: { authorization: `Bearer ${ws.agent}` }, signal: controller.signal });
      expect(stream.status).toBe(200);
      const reader = stream.body!.getReader();
      let text = '';
      const pump = (async () => {
        for (;;) {
          const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
          if (done) return;
          text += new TextDecoder().decode(value);
        }
      })();
      await until(() => text.includes('event: state'), 5_000);
      // The watch reaches engine A at its next look (no NOTIFY through a pooler; every 200 ms, generous for a loaded machine).
      await new Promise((r) => setTimeout(r, 1_200));
      caller.say('And do you ship to Belgium?');
      await caller.answer();
      await until(() => text.includes('event: turn_completed'), 5_000);
      controller.abort();
      await pump;
      expect(text).toContain('"message":"And do you ship to Belgium?"');

      // A call on the other engine works too.
      const other = await Caller.connect(b);
      callers.push(other);
      other.setup(`CA${randomUUID().replaceAll('-', '')}`, NUMBER);
      other.say('Is shipping free?');
      expect(String((await other.answer()).token)).toContain('Shipping is free above 50 euro.');
    });
  });
}
