/**
 * Outgoing webhooks through the real service (protocol §6, docs/interfaces.md Dashboard API): settings, signed deliveries
 * verified with the official `standardwebhooks` library, the test button, the log, manual retry, rotation, and the
 * refusals (SSRF at connect time, redirects, 410).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dashboardUrl, timestamp, type NewChatPayload } from '../../src/webhooks/events.ts';
import { recordEvent } from '../../src/webhooks/outbox.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';
import { received, until, verify } from './receiver.ts';

describeEachDatabase('outgoing webhooks through the dashboard API', (get) => {
  let service: TestService;
  let receiver: TestHttpsServer;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  /** Where hooks.integrator.test points: steered per test to prove the address is checked at connect time. */
  let integratorAddress = '127.0.0.1';
  let secret = '';

  const newChat = (n: number): NewChatPayload => ({
    event: 'new_chat',
    conversation_id: `conv-${n}`,
    visitor_message: `Hello ${n}, do you ship to Belgium?`,
    page_url: 'https://shop.example/products/1',
    timestamp: timestamp(new Date()),
    dashboard_url: dashboardUrl('https://botlink.example', `conv-${n}`),
  });
  const emit = (payload: NewChatPayload) => recordEvent(service.database.db, ws.workspaceId, payload);
  const hooks = (id: string) => receiver.requests.filter((r) => r.headers['webhook-id'] === id);
  const delivery = async (webhookId: string) => {
    const log = await service.api('GET', `/v1/webhooks/deliveries?webhook_id=${webhookId}`, { token: ws.owner });
    return log.body.deliveries[0];
  };

  beforeAll(async () => {
    receiver = await startHttpsServer();
    const env: Record<string, string> = get().url ? { DATABASE_URL: get().url! } : {};
    service = await startTestService(get(), env, {
      lookup: async (hostname) => (hostname === 'hooks.integrator.test' ? [{ address: integratorAddress, family: 4 }] : []),
      webhooks: { pollIntervalMs: 200 },
    });
    ws = await seedWorkspace(service);
  });
  afterAll(async () => {
    await service.stop();
    await receiver.close();
  });
  beforeEach(() => {
    integratorAddress = '127.0.0.1';
    receiver.handle((_req, res) => sendJson(res, 200, { ok: true }));
  });

  describe('who may change webhooks (protocol §5.6)', () => {
    it.each([
      ['GET', '/v1/webhooks'],
      ['PUT', '/v1/webhooks/new_chat'],
      ['DELETE', '/v1/webhooks/new_chat'],
      ['POST', '/v1/webhooks/new_chat/secret'],
      ['POST', '/v1/webhooks/test'],
      ['GET', '/v1/webhooks/deliveries'],
      ['POST', '/v1/webhooks/deliveries/00000000-0000-4000-8000-000000000000/retry'],
    ])('an agent gets 403 on %s %s', async (method, path) => {
      const body = method === 'PUT' ? { url: 'https://127.0.0.1/x' } : method === 'POST' && path.endsWith('test') ? { event: 'new_chat' } : undefined;
      const res = await service.api(method, path, { token: ws.agent, ...(body ? { body } : {}) });
      expect(res.status).toBe(403);
    });
  });

  describe('saving a URL', () => {
    it.each([
      ['http://127.0.0.1/hook', 'https'],
      ['https://10.0.0.8/hook', 'private'],
      ['https://169.254.169.254/latest/meta-data', 'link-local'],
    ])('refuses %s with 422 and the reason', async (url, reason) => {
      const res = await service.api('PUT', '/v1/webhooks/new_chat', { token: ws.owner, body: { url } });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('invalid_url');
      expect(res.body.error.message.toLowerCase()).toContain(reason);
    });

    it('answers 404 for an event that is not new_chat, escalation or new_lead (405 on /v1/webhooks/test, a path of its own)', async () => {
      const res = await service.api('PUT', '/v1/webhooks/bogus', { token: ws.owner, body: { url: `${receiver.origin}/x` } });
      expect(res.status).toBe(404);
      const test = await service.api('PUT', '/v1/webhooks/test', { token: ws.owner, body: { url: `${receiver.origin}/x` } });
      expect(test.status).toBe(405);
      expect(test.headers.get('allow')).toBe('POST');
    });

    it('shows a new whsec_ secret once; later saves keep it and never show it', async () => {
      const first = await service.api('PUT', '/v1/webhooks/new_chat', { token: ws.owner, body: { url: `${receiver.origin}/first` } });
      expect(first.status).toBe(200);
      secret = first.body.secret;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
      expect(first.body.secret_hint).toBe(`whsec_…${secret.slice(-4)}`);

      const second = await service.api('PUT', '/v1/webhooks/new_chat', { token: ws.admin, body: { url: `${receiver.origin}/hooks/new_chat` } });
      expect(second.status).toBe(200);
      expect(second.body.secret).toBeUndefined();
      expect(second.body.secret_hint).toBe(first.body.secret_hint);

      const list = await service.api('GET', '/v1/webhooks', { token: ws.owner });
      expect(list.text).not.toContain(secret.slice(6));
      expect(list.body.webhooks).toEqual([
        expect.objectContaining({ event: 'new_chat', url: `${receiver.origin}/hooks/new_chat`, enabled: true, disabled_reason: null, last_success_at: null }),
      ]);
    });
  });

  describe('a delivery', () => {
    it('POSTs the protocol §6 payload as JSON, signed so that the official library verifies it', async () => {
      const payload = newChat(1);
      const id = await emit(payload);
      const request = await until(() => hooks(id)[0], 10_000, 'the delivery');
      expect(request.method).toBe('POST');
      expect(request.url).toBe('/hooks/new_chat');
      expect(request.headers['content-type']).toBe('application/json');
      const w = received(request);
      expect(w.id).toBe(id);
      expect(Math.abs(w.timestamp - Date.now() / 1000)).toBeLessThan(30);
      expect(w.signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(verify(secret, w)).toEqual(payload);
      // Keys in the order of protocol §6's table, event first.
      expect(Object.keys(JSON.parse(w.body))).toEqual(['event', 'conversation_id', 'visitor_message', 'page_url', 'timestamp', 'dashboard_url']);

      const logged = await until(async () => {
        const d = await delivery(id);
        return d?.status === 'succeeded' ? d : undefined;
      });
      expect(logged).toMatchObject({ webhook_id: id, event: 'new_chat', kind: 'event', attempt_count: 1, payload });
      expect(logged.attempts).toEqual([expect.objectContaining({ attempt: 1, status: 'succeeded', http_status: 200, error: null, response_excerpt: '{"ok":true}' })]);
      // The endpoint's bookkeeping is written right after the outcome.
      await until(async () => (await service.api('GET', '/v1/webhooks', { token: ws.owner })).body.webhooks[0].last_success_at !== null, 5_000, 'last_success_at');
    });

    it('keeps at most 4 KB of the answer in the log', async () => {
      receiver.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('é'.repeat(10_000));
      });
      const id = await emit(newChat(2));
      const logged = await until(async () => {
        const d = await delivery(id);
        return d?.status === 'succeeded' ? d : undefined;
      });
      const excerpt: string = logged.attempts[0].response_excerpt;
      expect(Buffer.byteLength(excerpt)).toBeLessThanOrEqual(4096);
      expect(Buffer.byteLength(excerpt)).toBeGreaterThan(4090);
      expect(excerpt).not.toContain('\uFFFD');
    });

    it('schedules a failed attempt 5 s (±20 %) later, and a manual retry sends it now with the same webhook-id', async () => {
      receiver.handle((_req, res) => sendJson(res, 503, { error: 'busy' }));
      const id = await emit(newChat(3));
      const failed = await until(async () => {
        const d = await delivery(id);
        return d?.attempt_count === 1 ? d : undefined;
      });
      expect(failed.status).toBe('pending');
      expect(failed.attempts[0]).toMatchObject({ status: 'failed', http_status: 503, response_excerpt: '{"error":"busy"}' });
      const delay = Date.parse(failed.next_attempt_at) - Date.parse(failed.attempts[0].started_at);
      expect(delay).toBeGreaterThanOrEqual(4_000);
      expect(delay).toBeLessThanOrEqual(6_000);

      receiver.handle((_req, res) => sendJson(res, 200, { ok: true }));
      const retry = await service.api('POST', `/v1/webhooks/deliveries/${failed.id}/retry`, { token: ws.owner });
      expect(retry.status).toBe(202);
      const done = await until(async () => {
        const d = await delivery(id);
        return d?.status === 'succeeded' ? d : undefined;
      }, 4_000, 'the manual retry');
      expect(done.attempts.map((a: { http_status: number }) => a.http_status)).toEqual([503, 200]);
      const requests = hooks(id).map(received);
      expect(requests).toHaveLength(2);
      for (const w of requests) expect(verify(secret, w)).toMatchObject({ conversation_id: 'conv-3' });
    });

    it('treats a redirect as a failure and never follows it', async () => {
      receiver.handle((req, res) => {
        if (req.url === '/moved') return sendJson(res, 200, { followed: true });
        res.writeHead(302, { location: `${receiver.origin}/moved` });
        res.end();
      });
      const id = await emit(newChat(4));
      const failed = await until(async () => {
        const d = await delivery(id);
        return d?.attempt_count === 1 ? d : undefined;
      });
      expect(failed.status).toBe('pending');
      expect(failed.attempts[0]).toMatchObject({ status: 'failed', http_status: 302 });
      expect(failed.attempts[0].error).toContain('redirect');
      expect(receiver.requests.some((r) => r.url === '/moved')).toBe(false);
      await service.api('PUT', '/v1/webhooks/new_chat', { token: ws.owner, body: { url: `${receiver.origin}/hooks/new_chat` } });
    });
  });

  describe('the test button (protocol §4.6, §6)', () => {
    it("sends {\"event\":\"test\"} to the event's URL and answers what came back", async () => {
      receiver.handle((_req, res) => sendJson(res, 202, { accepted: true }));
      const res = await service.api('POST', '/v1/webhooks/test', { token: ws.owner, body: { event: 'new_chat' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ event: 'test', kind: 'test', status: 'succeeded', attempt_count: 1, payload: { event: 'test' } });
      expect(res.body.attempts[0]).toMatchObject({ http_status: 202, response_excerpt: '{"accepted":true}' });
      const w = received(hooks(res.body.webhook_id)[0]!);
      expect(w.body).toBe('{"event":"test"}');
      expect(verify(secret, w)).toEqual({ event: 'test' });
    });

    it('answers 404 when no URL is set for the event', async () => {
      const res = await service.api('POST', '/v1/webhooks/test', { token: ws.owner, body: { event: 'new_lead' } });
      expect(res.status).toBe(404);
    });
  });

  describe('secret rotation', () => {
    it('signs with the new and the previous secret for 24 hours; each signature verifies with its own secret', async () => {
      const rotated = await service.api('POST', '/v1/webhooks/new_chat/secret', { token: ws.owner });
      expect(rotated.status).toBe(200);
      const next: string = rotated.body.secret;
      expect(next).toMatch(/^whsec_/);
      expect(next).not.toBe(secret);
      const overlap = Date.parse(rotated.body.previous_secret_expires_at) - Date.now();
      expect(overlap).toBeGreaterThan(23.9 * 3600_000);
      expect(overlap).toBeLessThanOrEqual(24 * 3600_000);

      const id = await emit(newChat(5));
      const w = received(await until(() => hooks(id)[0]));
      const signatures = w.signature.split(' ');
      expect(signatures).toHaveLength(2);
      expect(verify(next, w, signatures[0])).toMatchObject({ conversation_id: 'conv-5' });
      expect(verify(secret, w, signatures[1])).toMatchObject({ conversation_id: 'conv-5' });
      expect(() => verify(next, w, signatures[1])).toThrow();
      // Receivers that know either secret accept the header as sent.
      expect(verify(next, w)).toBeTruthy();
      expect(verify(secret, w)).toBeTruthy();
      secret = next;
    });
  });

  describe('SSRF: the address is checked when the connection is made', () => {
    it('refuses a host that resolved publicly when saved and points inward when called', async () => {
      const saved = await service.api('PUT', '/v1/webhooks/escalation', { token: ws.owner, body: { url: `https://hooks.integrator.test:${receiver.port}/hooks/escalation` } });
      expect(saved.status).toBe(200);
      integratorAddress = '10.0.0.7';
      const before = receiver.requests.length;
      const id = await recordEvent(service.database.db, ws.workspaceId, {
        event: 'escalation',
        conversation_id: 'conv-ssrf',
        type: 'requested',
        visitor_message: 'A person, please.',
        timestamp: timestamp(new Date()),
      });
      const failed = await until(async () => {
        const d = await delivery(id);
        return d?.attempt_count === 1 ? d : undefined;
      });
      expect(failed.status).toBe('pending');
      expect(failed.attempts[0]).toMatchObject({ status: 'failed', http_status: null });
      // The kind of address, never the address the name resolved to (the delivery log is the workspace's to read).
      expect(failed.attempts[0].error).toMatch(/refused_address.*resolves to a private address/);
      expect(failed.attempts[0].error).not.toContain('10.0.0.7');
      expect(receiver.requests.length).toBe(before);
    });
  });

  describe('410 Gone', () => {
    it('disables the endpoint, says why, and queues nothing more for it until its URL is saved again', async () => {
      const saved = await service.api('PUT', '/v1/webhooks/new_lead', { token: ws.owner, body: { url: `${receiver.origin}/hooks/new_lead` } });
      const leadSecret: string = saved.body.secret;
      receiver.handle((_req, res) => {
        res.statusCode = 410;
        res.end();
      });
      const lead = (n: number) =>
        recordEvent(service.database.db, ws.workspaceId, { event: 'new_lead', conversation_id: `conv-lead-${n}`, name: 'Jan', email: 'jan@example.com', phone: '', timestamp: timestamp(new Date()) });
      const id = await lead(1);
      const gone = await until(async () => {
        const d = await delivery(id);
        return d?.status === 'failed' ? d : undefined;
      });
      expect(gone.attempts[0]).toMatchObject({ http_status: 410 });
      expect(verify(leadSecret, received(hooks(id)[0]!))).toMatchObject({ event: 'new_lead', phone: '' });

      const list = await service.api('GET', '/v1/webhooks', { token: ws.owner });
      const endpoint = list.body.webhooks.find((w: { event: string }) => w.event === 'new_lead');
      expect(endpoint).toMatchObject({ enabled: false });
      expect(endpoint.disabled_reason).toContain('410 Gone');

      const ignored = await lead(2);
      expect((await service.api('GET', `/v1/webhooks/deliveries?webhook_id=${ignored}`, { token: ws.owner })).body.deliveries).toEqual([]);
      const retry = await service.api('POST', `/v1/webhooks/deliveries/${gone.id}/retry`, { token: ws.owner });
      expect(retry.status).toBe(409);
      expect(retry.body.error.message).toContain('disabled');

      receiver.handle((_req, res) => sendJson(res, 200, { ok: true }));
      const again = await service.api('PUT', '/v1/webhooks/new_lead', { token: ws.owner, body: { url: `${receiver.origin}/hooks/new_lead` } });
      expect(again.body).toMatchObject({ enabled: true, disabled_reason: null });
      const id3 = await lead(3);
      await until(async () => (await delivery(id3))?.status === 'succeeded');
    });
  });

  describe('the delivery log', () => {
    it('filters by event and status and pages by time', async () => {
      const all = await service.api('GET', '/v1/webhooks/deliveries?limit=200', { token: ws.owner });
      expect(all.status).toBe(200);
      expect(all.body.deliveries.length).toBeGreaterThan(3);
      const failed = await service.api('GET', '/v1/webhooks/deliveries?status=failed&event=new_lead', { token: ws.owner });
      expect(failed.body.deliveries.length).toBeGreaterThan(0);
      for (const d of failed.body.deliveries) expect(d).toMatchObject({ status: 'failed', event: 'new_lead' });
      const page = await service.api('GET', '/v1/webhooks/deliveries?limit=2', { token: ws.owner });
      expect(page.body.deliveries).toHaveLength(2);
      const rest = await service.api('GET', `/v1/webhooks/deliveries?limit=200&before=${encodeURIComponent(page.body.next_before)}`, { token: ws.owner });
      expect(rest.body.deliveries.map((d: { id: string }) => d.id)).not.toContain(page.body.deliveries[1].id);
      expect((await service.api('GET', '/v1/webhooks/deliveries?status=lost', { token: ws.owner })).status).toBe(400);
    });
  });

  describe('removing a webhook', () => {
    it('deletes it and queues nothing more for the event', async () => {
      expect((await service.api('DELETE', '/v1/webhooks/escalation', { token: ws.owner })).status).toBe(204);
      expect((await service.api('DELETE', '/v1/webhooks/escalation', { token: ws.owner })).status).toBe(404);
      const list = await service.api('GET', '/v1/webhooks', { token: ws.owner });
      expect(list.body.webhooks.map((w: { event: string }) => w.event)).not.toContain('escalation');
      const cancelled = await service.api('GET', '/v1/webhooks/deliveries?event=escalation', { token: ws.owner });
      expect(cancelled.body.deliveries[0]).toMatchObject({ status: 'cancelled' });
    });
  });
});
