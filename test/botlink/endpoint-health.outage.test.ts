/**
 * An integrator's endpoint that is healthy, then hangs, then refuses connections, then recovers, with phone calls and
 * WhatsApp messages running through the change, on two service instances sharing one database (as two processes do):
 * after the endpoint goes down turns no longer wait for it, the request is still sent, the other instance learns the
 * state from the database, the owner is told once, and after recovery the integrator answers again. A slow endpoint
 * (2.5 s) never loses an answer.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyChannelRequest } from '../../src/receiver/index.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { BRIDGE_TOKEN, Caller } from '../helpers/phone-caller.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';
import { fixture, unixSeconds } from '../channels/whatsapp/fixtures/meta.ts';
import { ACCESS_TOKEN, APP_SECRET, MASTER_KEY, PHONE_NUMBER_ID, TEST_WORKER, VERIFY_TOKEN, wamid } from '../channels/whatsapp/fixtures/harness.ts';
import { metaSignature } from '../channels/whatsapp/fixtures/meta.ts';
import { PROBE_MESSAGE } from '../../src/integration/endpoint-health-events.ts';
import { CHANNEL_TIMEOUT_MS, PHONE_CHANNEL_TIMEOUT_MS } from '../../src/limits.ts';

type Mode = 'healthy' | 'hang' | 'slow';
const SLOW_MS = 2_500;
/** The phone's deadline (protocol §8): a turn that did not wait answers well before it. */
const PHONE_DEADLINE_MS = PHONE_CHANNEL_TIMEOUT_MS;

async function until<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describeEachDatabase('a broken endpoint that callers never notice', (get) => {
  let a: TestService;
  let b: TestService;
  let integrator: TestHttpsServer;
  let graph: TestHttpsServer;
  let owner: string;
  let workspaceId: string;
  let key = '';
  let mode: Mode = 'healthy';
  let seq = 0;
  const callers: Caller[] = [];

  /** Channel requests (not probes) the integrator received, verified with our key. */
  const received = () =>
    integrator.requests.filter((r) => r.method === 'POST' && r.headers['x-service-probe'] === undefined).map((r) => JSON.parse(r.body.toString()) as { message: string; channel: string });
  const health = async (service: TestService) => (await service.api('GET', '/v1/integration', { token: owner })).body.health;

  /** One phone turn on a new call: what the caller heard, how long it took and the turn's record. */
  async function phoneTurn(service: TestService, text: string) {
    const caller = await Caller.connect(service);
    callers.push(caller);
    const sid = `CA${Date.now()}${seq++}`;
    caller.setup(sid);
    const started = performance.now();
    caller.say(text);
    const frame = await caller.answer();
    const ms = performance.now() - started;
    const session = await until(async () => {
      const row = await service.database.db.selectFrom('sessions').select(['id', 'turn_count']).where('external_id', '=', sid).executeTakeFirst();
      return row && row.turn_count >= 1 ? row : undefined;
    });
    const turn = await service.database.db.selectFrom('session_turns').selectAll().where('session_id', '=', session.id).executeTakeFirstOrThrow();
    caller.close();
    return { token: frame.token as string, ms, turn };
  }

  /** One WhatsApp message: the text sent to the customer and how long from the webhook to the Graph send. */
  async function whatsappTurn(service: TestService, text: string) {
    const waId = `3161${String(1000000 + seq++)}`;
    const body = fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(new Date()), BODY: text });
    const started = performance.now();
    const res = await fetch(`${service.url}/v1/whatsapp/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': metaSignature(APP_SECRET, body) },
      body,
    });
    expect(res.status).toBe(200);
    const send = await until(() => graph.requests.find((r) => r.method === 'POST' && JSON.parse(r.body.toString()).to === waId));
    return { text: (JSON.parse(send.body.toString()) as { text: { body: string } }).text.body, ms: performance.now() - started };
  }

  beforeAll(async () => {
    graph = await startHttpsServer((_req, res, body) => {
      const to = (JSON.parse(body.toString()) as { to: string }).to;
      sendJson(res, 200, { messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: `wamid.OUT${seq++}` }] });
    });
    integrator = await startHttpsServer(async (req, res, body) => {
      if (req.method === 'GET') return sendJson(res, 200, { tools: [] });
      if (!verifyChannelRequest(key, body, req.headers['x-service-signature'] as string).ok) return void res.writeHead(401).end();
      const request = JSON.parse(body.toString()) as { message: string };
      if (mode === 'hang') return; // accepts the connection and never answers
      if (mode === 'slow') await new Promise((r) => setTimeout(r, SLOW_MS));
      sendJson(res, 200, { reply: `Integrator: ${request.message}` });
    });
    const env = { BRIDGE_TOKEN, MASTER_KEY, WHATSAPP_APP_SECRET: APP_SECRET, WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN, WHATSAPP_GRAPH_URL: `${graph.origin}/v21.0` };
    const options = { whatsapp: { worker: TEST_WORKER }, health: { refreshMs: 200, flushMs: 50, probeIntervalMs: 600 } };
    a = await startTestService(get(), env, { ...options, sessions: { instanceId: 'process-a' } });
    b = await startTestService(get(), env, { ...options, sessions: { instanceId: 'process-b' } });
    const ws = await seedWorkspace(a);
    owner = ws.owner;
    workspaceId = ws.workspaceId;
    key = (await a.api('PUT', '/v1/integration', { token: owner, body: { endpoint_url: `${integrator.origin}/botlink/channel` } })).body.key;
    expect((await a.api('PUT', '/v1/phone', { token: owner, body: { numbers: ['+31 20 123 4567'] } })).status).toBe(200);
    expect((await a.api('PUT', '/v1/whatsapp', { token: owner, body: { phone_number_id: PHONE_NUMBER_ID, access_token: ACCESS_TOKEN } })).status).toBe(200);
  });

  afterAll(async () => {
    for (const c of callers) c.ws.terminate();
    await a.stop();
    await b.stop();
    await integrator.close().catch(() => {});
    await graph.close();
  });

  it('healthy: the integrator answers on the phone and on WhatsApp, and the integration says healthy', async () => {
    expect((await phoneTurn(a, 'Where is order 1?')).token).toBe('Integrator: Where is order 1?');
    expect((await whatsappTurn(a, 'Where is order 2?')).text).toBe('Integrator: Where is order 2?');
    expect(await health(a)).toMatchObject({ state: 'healthy', wait_ms: { phone: PHONE_CHANNEL_TIMEOUT_MS, whatsapp: CHANNEL_TIMEOUT_MS }, consecutive_failures: 0 });
  });

  it('hanging: three turns time out, then turns no longer wait while the request is still sent', async () => {
    mode = 'hang';
    const timedOut = await Promise.all([1, 2, 3].map((i) => phoneTurn(a, `Hanging question ${i}`)));
    for (const t of timedOut) expect(t.turn.botlink).toMatchObject({ outcome: 'no_answer', reason: 'timeout', endpoint: { state: expect.any(String), decision: 'wait' } });
    await until(async () => (await health(a)).state === 'down');

    const before = received().length;
    const down = await phoneTurn(a, 'Are you open on Sunday?');
    expect(down.turn.botlink).toMatchObject({ outcome: 'no_answer', reason: 'endpoint_down', endpoint: { state: 'down', decision: 'not_waited', waitMs: 0 } });
    expect(down.turn.source).not.toBe('integrator');
    // Not held for the deadline (the record says so too); a knowledge answer once took 1.5 s on a loaded CI machine.
    expect(down.ms).toBeLessThan(PHONE_DEADLINE_MS);
    const whatsapp = await whatsappTurn(a, 'Do you ship to Belgium?');
    expect(whatsapp.text).not.toContain('Integrator:');
    expect(whatsapp.ms).toBeLessThan(PHONE_DEADLINE_MS);
    // The messages still reached the integrator.
    await until(() => received().length >= before + 2);
    expect(received().slice(before).map((r) => r.message).sort()).toEqual(['Are you open on Sunday?', 'Do you ship to Belgium?']);
  });

  it('the other process learns the state from the database and does not wait either', async () => {
    await until(async () => (await health(b)).state === 'down', 5_000);
    const turn = await phoneTurn(b, 'And on Monday?');
    expect(turn.turn.botlink).toMatchObject({ reason: 'endpoint_down', endpoint: { decision: 'not_waited' } });
    expect(turn.ms).toBeLessThan(PHONE_DEADLINE_MS);
  });

  it('the owner is told once: one notification and one endpoint_down event, however many processes saw it', async () => {
    const notes = (await a.api('GET', '/v1/notifications', { token: owner })).body;
    const list = (Array.isArray(notes) ? notes : notes.notifications) as { kind: string; message: string }[];
    expect(list.filter((n) => n.kind === 'endpoint_down')).toHaveLength(1);
    expect(list.find((n) => n.kind === 'endpoint_down')!.message).toContain('stopped answering');
    const events = await a.database.db.selectFrom('webhook_events').selectAll().where('workspace_id', '=', workspaceId).where('event', '=', 'endpoint_down').execute();
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({ event: 'endpoint_down', endpoint_url: `${integrator.origin}/botlink/channel`, problem: expect.stringMatching(/^no answer within 3[45]\d\d ms$/) });
    const view = await health(a);
    expect(view.recent.timeout).toBeGreaterThanOrEqual(3);
    expect(view.last_problem).toContain('no answer within');
  });

  it('refusing connections: still answered without waiting; the error mix shows the connection failures', async () => {
    integrator.server.closeAllConnections();
    await new Promise<void>((resolve) => integrator.server.close(() => resolve()));
    const turn = await phoneTurn(a, 'Can I return a gift?');
    expect(turn.turn.botlink).toMatchObject({ reason: 'endpoint_down', endpoint: { decision: 'not_waited' } });
    await until(async () => (await health(a)).recent.connection >= 1);
    expect((await health(b)).state).toBe('down');
  });

  it('recovering: a probe or a turn sees an answer, the endpoint is healthy again and the integrator answers', async () => {
    mode = 'healthy';
    await new Promise<void>((resolve) => integrator.server.listen(integrator.port, '127.0.0.1', resolve));
    expect((integrator.server.address() as AddressInfo).port).toBe(integrator.port);
    // Nobody writes: the background probe finds the endpoint answering again.
    await until(async () => (await health(a)).state !== 'down', 10_000);
    const probes = integrator.requests.filter((r) => r.headers['x-service-probe'] === '1');
    expect(probes.length).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(probes[0]!.body.toString())).toMatchObject({ channel: 'webchat', message: PROBE_MESSAGE });
    // Probing waits again; answered turns complete the recovery.
    for (let i = 0; i < 3 && (await health(a)).state !== 'healthy'; i++) await phoneTurn(a, `Recovery question ${i}`);
    await until(async () => (await health(a)).state === 'healthy');
    await until(async () => (await health(b)).state === 'healthy', 5_000);
    expect((await phoneTurn(b, 'Where is order 3?')).token).toBe('Integrator: Where is order 3?');
    expect((await whatsappTurn(b, 'Where is order 4?')).text).toBe('Integrator: Where is order 4?');
    const recovered = await a.database.db.selectFrom('webhook_events').select('event').where('workspace_id', '=', workspaceId).where('event', '=', 'endpoint_recovered').execute();
    expect(recovered).toHaveLength(1);
  });

  describe('a slow but healthy endpoint (2.5 s)', () => {
    it('never loses an answer, also after a timeout made it degraded', async () => {
      mode = 'slow';
      const slow = await Promise.all([1, 2, 3].map((i) => phoneTurn(a, `Slow question ${i}?`)));
      expect(slow.map((t) => t.token)).toEqual([1, 2, 3].map((i) => `Integrator: Slow question ${i}?`));
      mode = 'hang';
      await phoneTurn(a, 'One hiccup');
      await until(async () => (await health(a)).state === 'degraded');
      mode = 'slow';
      const after = await Promise.all([4, 5].map((i) => phoneTurn(a, `Slow question ${i}?`)));
      expect(after.map((t) => t.token)).toEqual(['Integrator: Slow question 4?', 'Integrator: Slow question 5?']);
      // Degraded, and still the whole 3.5 s is waited.
      for (const t of after) {
        expect(t.turn.botlink).toMatchObject({ outcome: 'answer', endpoint: { state: 'degraded', decision: 'wait' } });
        expect((t.turn.botlink as { endpoint: { waitMs: number } }).endpoint.waitMs).toBeGreaterThan(3_400);
      }
    });
  });
});
