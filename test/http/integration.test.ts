import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { verifyChannelRequest } from '../../src/receiver/index.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

describeEachDatabase('the Bot Link settings and the test button', (get) => {
  let service: TestService;
  let integrator: TestHttpsServer;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  /** The key the integrator verifies with, as the dashboard showed it. */
  let integratorKey = '';

  beforeAll(async () => {
    integrator = await startHttpsServer();
    service = await startTestService(get());
    ws = await seedWorkspace(service);
  });
  afterAll(async () => {
    await service.stop();
    await integrator.close();
  });
  beforeEach(() => {
    // The integrator of protocol §5.5: verify, then answer.
    integrator.handle((req, res, body) => {
      const verdict = verifyChannelRequest(integratorKey, body, req.headers['x-service-signature'] as string | undefined);
      if (!verdict.ok) {
        res.statusCode = 401;
        res.end();
        return;
      }
      sendJson(res, 200, { reply: 'Your order 1234 ships tomorrow.', handled: true, customer: { name: 'Jan' } });
    });
  });

  const endpoint = () => `${integrator.origin}/botlink/channel`;

  describe('before anything is configured', () => {
    it('GET answers 404', async () => {
      expect((await service.api('GET', '/v1/integration', { token: ws.owner })).status).toBe(404);
    });
    it('the test button answers 404', async () => {
      expect((await service.api('POST', '/v1/integration/test', { token: ws.owner })).status).toBe(404);
    });
  });

  describe('saving the endpoint URL', () => {
    it.each([
      ['http://127.0.0.1/channel', 'https'],
      ['https://10.0.0.8/channel', 'private'],
      ['https://169.254.169.254/latest', 'link-local'],
      ['https://user:pw@example.com/channel', ''],
      ['not a url', ''],
    ])('refuses %s with 422 and the reason', async (url, reasonPart) => {
      const res = await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: url } });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('invalid_url');
      expect(res.body.error.message.toLowerCase()).toContain(reasonPart);
    });

    it('refuses an own key shorter than 32 characters with 422', async () => {
      const res = await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: endpoint(), key: 'k'.repeat(31) } });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('invalid_key');
      expect(res.body.error.details[0].field).toBe('key');
    });

    it('refuses a key with spaces at its ends (it is used exactly as written)', async () => {
      const res = await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: endpoint(), key: ` ${'k'.repeat(40)}` } });
      expect(res.status).toBe(422);
    });

    it('the first time without a key generates a 64-character key, shown in this answer only', async () => {
      const res = await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: endpoint() } });
      expect(res.status).toBe(200);
      expect(res.body.key).toHaveLength(64);
      expect(res.body.tools_base).toBe(`${integrator.origin}/botlink/tools`);
      integratorKey = res.body.key;

      const read = await service.api('GET', '/v1/integration', { token: ws.admin });
      expect(read.status).toBe(200);
      expect(read.body).not.toHaveProperty('key');
      expect(read.text).not.toContain(integratorKey);
      expect(read.body.key_hint).toBe(`…${integratorKey.slice(-4)}`);
    });

    it('keeps the key sealed at rest', async () => {
      const row = await get().db.selectFrom('integrations').selectAll().where('workspace_id', '=', ws.workspaceId).executeTakeFirstOrThrow();
      expect(row.key_sealed).not.toContain(integratorKey);
      expect(row.key_sealed).toMatch(/^v1\./);
    });

    it('changing the URL without a key keeps the working key', async () => {
      const res = await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: `${integrator.origin}/v2/channel` } });
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty('key');
      const test = await service.api('POST', '/v1/integration/test', { token: ws.owner });
      expect(test.body.outcome).toBe('answer');
      expect(integrator.requests.at(-1)!.url).toBe('/v2/channel');
    });

    it('an own key of 32 characters or more is accepted and used as text', async () => {
      integratorKey = 'a1'.repeat(16); // looks like hex: must still be used as text
      const res = await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: endpoint(), key: integratorKey } });
      expect(res.status).toBe(200);
      expect(res.body.key).toBe(integratorKey);
      expect((await service.api('POST', '/v1/integration/test', { token: ws.owner })).body.outcome).toBe('answer');
    });
  });

  describe('the test button', () => {
    it('sends a signed webchat channel request and shows exactly what came back', async () => {
      const res = await service.api('POST', '/v1/integration/test', { token: ws.owner, body: { message: 'Where is my order?', language: 'nl-NL' } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        outcome: 'answer',
        reason: 'answer',
        http_status: 200,
        response: { reply: 'Your order 1234 ships tomorrow.', handled: true, customer: { name: 'Jan' } },
        problems: [],
      });
      expect(res.body.latency_ms).toBeGreaterThanOrEqual(0);
      const sent = JSON.parse(integrator.requests.at(-1)!.body.toString('utf8'));
      expect(sent).toMatchObject({ channel: 'webchat', message: 'Where is my order?', language: 'nl', customer: { phone: null } });
      expect(Number.isInteger(sent.sent_at)).toBe(true);
      expect(integrator.requests.at(-1)!.headers['user-agent']).toBe('Service-BotLink/1.0');
    });

    it('reports a non-2xx status as no answer, with the body excerpt', async () => {
      integrator.handle((_req, res) => {
        res.statusCode = 503;
        res.end('maintenance');
      });
      const res = await service.api('POST', '/v1/integration/test', { token: ws.owner });
      expect(res.body).toMatchObject({ outcome: 'no_answer', reason: 'status', http_status: 503, body_excerpt: 'maintenance', response: null });
    });

    it('reports invalid JSON as no answer', async () => {
      integrator.handle((_req, res) => void res.end('<html>oops</html>'));
      const res = await service.api('POST', '/v1/integration/test', { token: ws.owner });
      expect(res.body).toMatchObject({ outcome: 'no_answer', reason: 'invalid_json', http_status: 200 });
    });

    it('reports problems in an answer without failing it', async () => {
      integrator.handle((_req, res) => sendJson(res, 200, { reply: 'ok', handoff: 'teleport', customer: { email: 'nope' } }));
      const res = await service.api('POST', '/v1/integration/test', { token: ws.owner });
      expect(res.body.outcome).toBe('answer');
      expect(res.body.problems.map((p: { field: string }) => p.field).sort()).toEqual(['customer.email', 'handoff']);
    });

    it('reports a wrong key as the 401 the integrator answered', async () => {
      const rotated = await service.api('POST', '/v1/integration/key', { token: ws.owner });
      expect(rotated.status).toBe(200);
      expect(rotated.body.key).toHaveLength(64);
      const res = await service.api('POST', '/v1/integration/test', { token: ws.owner });
      expect(res.body).toMatchObject({ outcome: 'no_answer', reason: 'status', http_status: 401 });
      integratorKey = rotated.body.key;
      expect((await service.api('POST', '/v1/integration/test', { token: ws.owner })).body.outcome).toBe('answer');
    });

    it('counts outcomes in /metrics', async () => {
      const res = await service.api('GET', '/metrics');
      expect(res.text).toMatch(/botlink_outcomes_total\{channel="webchat",reason="answer"\} [1-9]/);
      expect(res.text).toMatch(/botlink_outcomes_total\{channel="webchat",reason="status"\} [1-9]/);
    });
  });

  describe('roles', () => {
    it.each([
      ['GET', '/v1/integration', undefined],
      ['PUT', '/v1/integration', { endpoint_url: 'https://example.com/channel' }],
      ['POST', '/v1/integration/key', {}],
      ['POST', '/v1/integration/test', {}],
      ['DELETE', '/v1/integration', undefined],
    ])('an agent gets 403 on %s %s', async (method, path, body) => {
      const res = await service.api(method, path, { token: ws.agent, body });
      expect(res.status).toBe(403);
    });

    it('another workspace sees none of it', async () => {
      const other = await seedWorkspace(service, 'Elsewhere');
      expect((await service.api('GET', '/v1/integration', { token: other.owner })).status).toBe(404);
    });

    it('without a token: 401', async () => {
      expect((await service.api('GET', '/v1/integration')).status).toBe(401);
    });
  });

  describe('removing', () => {
    it('DELETE answers 204, then the integration is gone', async () => {
      expect((await service.api('DELETE', '/v1/integration', { token: ws.admin })).status).toBe(204);
      expect((await service.api('GET', '/v1/integration', { token: ws.admin })).status).toBe(404);
      expect((await service.api('DELETE', '/v1/integration', { token: ws.admin })).status).toBe(404);
    });
  });
});
