/**
 * The dashboard API's bodies, queries and paths (src/http/routes), as properties over the real service: whatever a
 * dashboard user (or the operator) sends, the answer is a success or a clear 4xx, never a 5xx; what was saved holds
 * its text by the outside-text rule (src/text/outside-text.ts, applied where src/http/app.ts parses JSON, queries and
 * paths) and otherwise as sent.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cleanText, isCleanText } from '../../src/text/outside-text.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, TEST_ADMIN_TOKEN, type ApiResponse, type TestService } from '../helpers/service.ts';
import { dirtyText, expectAllClean, nestedJsonText, outsideJson, outsideText, OVER_HTTP } from './outside.ts';

const NUMBER = '+31201234567';

function expectClear(what: string, res: ApiResponse): void {
  expect(res.status < 300 || (res.status >= 400 && res.status < 500), `${what}: ${res.status} ${res.text.slice(0, 300)}`).toBe(true);
  if (res.status >= 400) expect(typeof res.body?.error?.code).toBe('string');
}

describeEachDatabase('dashboard bodies, queries and paths, whatever a user sends', (get) => {
  let service: TestService;
  let integrator: TestHttpsServer;
  let owner = '';
  /** A second workspace, for bodies that may change its settings at random. */
  let other = '';

  beforeAll(async () => {
    integrator = await startHttpsServer((_req, res) => sendJson(res, 200, { reply: 'Thanks.' }));
    service = await startTestService(get());
    owner = (await seedWorkspace(service, 'Acme')).owner;
    other = (await seedWorkspace(service, 'Globex')).owner;
    const put = await service.api('PUT', '/v1/integration', { token: owner, body: { endpoint_url: `${integrator.origin}/botlink/channel` } });
    if (put.status !== 200) throw new Error(`PUT /v1/integration failed: ${put.text}`);
  });
  afterAll(async () => {
    await service.stop();
    await integrator.close();
  });

  it('property: a workspace made with any name holds that name, cleaned (POST /v1/admin/workspaces)', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(dirtyText, outsideText({ minLength: 1, maxLength: 200 })), async (name) => {
        const res = await service.api('POST', '/v1/admin/workspaces', { token: TEST_ADMIN_TOKEN, body: { name, owner_email: `owner${n++}@prop.example` } });
        expectClear('POST /v1/admin/workspaces', res);
        expectAllClean(res.body);
        if (res.status !== 201) return;
        expect(res.body.workspace.name).toBe(cleanText(name).trim());
        const row = await get().db.selectFrom('workspaces').select('name').where('id', '=', res.body.workspace.id).executeTakeFirstOrThrow();
        expect(row.name).toBe(cleanText(name).trim());
      }),
      { numRuns: 25, ...OVER_HTTP },
    );
  });

  it('property: a phone greeting holding any text is saved and read back, cleaned (PUT /v1/phone)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(dirtyText, outsideText({ maxLength: 200 })), async (greeting) => {
        const res = await service.api('PUT', '/v1/phone', { token: owner, body: { numbers: [NUMBER], greeting } });
        expectClear('PUT /v1/phone', res);
        if (res.status !== 200) return;
        const saved = await service.api('GET', '/v1/phone', { token: owner });
        expect(saved.status).toBe(200);
        expect(saved.body.greeting).toBe(cleanText(greeting).trim() || null);
      }),
      { numRuns: 25, ...OVER_HTTP },
    );
  });

  it('property: the test button sends the message typed, cleaned, and shows it (POST /v1/integration/test)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(dirtyText, outsideText({ minLength: 1 })), async (message) => {
        const before = integrator.requests.length;
        const res = await service.api('POST', '/v1/integration/test', { token: owner, body: { message } });
        expectClear('POST /v1/integration/test', res);
        if (res.status !== 200) return;
        expectAllClean(res.body);
        const sent = JSON.parse(integrator.requests[before]!.body.toString('utf8')) as { message: string };
        expect(isCleanText(sent.message)).toBe(true);
        expect(sent.message).toBe(res.body.request.message);
        expect(cleanText(message).startsWith(sent.message)).toBe(true);
      }),
      { numRuns: 25, ...OVER_HTTP },
    );
  });

  it('property: any query on the session list, and any session id in the path: a success or a clear 4xx', async () => {
    const value = fc.oneof(outsideText().map((t) => encodeURIComponent(t.toWellFormed())), fc.constantFrom('%00', '%ED%A0%80', '%FF', 'phone', 'active', '10', '2025-01-01T00:00:00Z', '-1', '1e3'));
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom('channel', 'status', 'limit', 'before', 'x'), value), value, async (query, id) => {
        const qs = Object.entries(query).map(([k, v]) => `${k}=${v}`).join('&');
        const list = await service.api('GET', `/v1/sessions?${qs}`, { token: owner });
        expectClear(`GET /v1/sessions?${qs}`, list);
        expectAllClean(list.body);
        const one = await service.api('GET', `/v1/sessions/${id}`, { token: owner });
        expectClear(`GET /v1/sessions/${id}`, one);
        expectAllClean(one.body);
      }),
      { numRuns: 30, ...OVER_HTTP },
    );
  });

  it('property: any JSON body, and bodies nested thousands of levels deep, get a success or a clear 4xx on every route that takes one', async () => {
    const routes = [
      'PUT /v1/integration',
      'POST /v1/integration/key',
      'POST /v1/integration/test',
      'POST /v1/users',
      'PUT /v1/phone',
      'PUT /v1/team',
      'PUT /v1/webchat',
      'PUT /v1/whatsapp',
      'PUT /v1/webhooks/new_chat',
      'POST /v1/webhooks/test',
      'POST /v1/admin/workspaces',
    ];
    const fields = fc.constantFrom('endpoint_url', 'key', 'message', 'language', 'email', 'role', 'numbers', 'greeting', 'team_hours', 'available', 'allowed_origins', 'phone_number_id', 'access_token', 'url', 'event', 'name', 'owner_email');
    const body = fc.oneof(
      outsideJson().map((v) => JSON.stringify(v)),
      fc.dictionary(fields, fc.oneof(outsideText(), dirtyText, outsideJson(2))).map((v) => JSON.stringify(v)),
      fc.integer({ min: 1, max: 100_000 }).map((depth) => nestedJsonText(depth, '"\\u0000"')),
      fc.tuple(fields, fc.integer({ min: 1, max: 100_000 })).map(([field, depth]) => `{"${field}":${nestedJsonText(depth, '"\\ud800"')}}`),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), body, async (route, raw) => {
        const [method, path] = route.split(' ') as [string, string];
        const token = path.startsWith('/v1/admin/') ? TEST_ADMIN_TOKEN : other;
        const res = await service.api(method, path, { token, raw, headers: { 'content-type': 'application/json' } });
        expectClear(route, res);
        expectAllClean(res.body);
      }),
      { numRuns: 40, ...OVER_HTTP },
    );
  });
});
