/**
 * What every route does before its handler runs: the caller is authenticated before the
 * body is read, an `{id}` that is not a UUID is 404, and an unsupported method on a known path is 405 with `Allow`.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/service.ts';

/** A JSON body of about `bytes` bytes nested `depth` deep: costly to parse, and invalid after the nesting. */
function nestedBody(depth: number, bytes: number): string {
  const inner = JSON.stringify({ pad: 'x'.repeat(Math.max(0, bytes - depth * 8)) });
  return '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
}

describeEachDatabase('before the handler', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;

  beforeAll(async () => {
    service = await startTestService(get());
    ws = await seedWorkspace(service, 'Edges');
  });
  afterAll(async () => {
    await service.stop();
  });

  describe('authentication comes before the body', () => {
    it('an unauthenticated request with a body that is not JSON is 401, not 400: the body was never parsed', async () => {
      for (const [method, path] of [['POST', '/v1/users'], ['PUT', '/v1/integration'], ['POST', '/v1/admin/workspaces'], ['PUT', '/v1/sync/pages/a']] as const) {
        const res = await service.api(method, path, { raw: '{not json', headers: { 'content-type': 'application/json' } });
        expect(res.status, `${method} ${path}`).toBe(401);
      }
    });

    it('a wrong token with a 1 MB nested body is 401; a right token with the same body gets the parser\'s 400', async () => {
      const body = nestedBody(500, 1024 * 1024 - 1024);
      const refused = await service.api('POST', '/v1/users', { raw: body, token: 'blt_wrong', headers: { 'content-type': 'application/json' } });
      expect(refused.status).toBe(401);
      const parsed = await service.api('POST', '/v1/users', { raw: body, token: ws.owner, headers: { 'content-type': 'application/json' } });
      expect(parsed.status).toBe(400);
      expect(parsed.body.error.code).toBe('validation_failed');
    });

    it('an unknown path is 404 without reading the body, and the connection stays usable', async () => {
      const res = await service.api('POST', '/v1/nowhere', { raw: '{', headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(404);
      expect((await service.api('GET', '/healthz')).status).toBe(200);
    });

    it('an authenticated body that is not JSON is still 415', async () => {
      const res = await service.api('POST', '/v1/users', { raw: 'email=a', token: ws.owner, headers: { 'content-type': 'text/plain' } });
      expect(res.status).toBe(415);
    });
  });

  describe('ids', () => {
    it('every {id} route answers 404 to an id that is not a UUID', async () => {
      const cases: Array<[string, string, string | undefined]> = [
        ['DELETE', '/v1/users/0', ws.owner],
        ['GET', '/v1/sessions/0', ws.owner],
        ['GET', '/v1/sessions/not-a-uuid/events', ws.owner],
        ['GET', '/v1/webhooks/deliveries/1', ws.owner],
        ['POST', '/v1/webhooks/deliveries/1/retry', ws.owner],
      ];
      for (const [method, path, token] of cases) {
        const res = await service.api(method, path, { token });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    });
  });

  describe('methods', () => {
    it('an unsupported method on a known path is 405 with Allow; an unknown path stays 404', async () => {
      const users = await service.api('PATCH', '/v1/users', { token: ws.owner });
      expect(users.status).toBe(405);
      expect(users.headers.get('allow')).toBe('GET, HEAD, POST');
      expect(users.body.error.code).toBe('method_not_allowed');

      const one = await service.api('PUT', '/v1/users/00000000-0000-4000-8000-000000000000', { token: ws.owner });
      expect(one.status).toBe(405);
      expect(one.headers.get('allow')).toBe('DELETE, PATCH');

      const health = await service.api('POST', '/healthz');
      expect(health.status).toBe(405);
      expect(health.headers.get('allow')).toBe('GET, HEAD');

      expect((await service.api('GET', '/v1/nothing-here')).status).toBe(404);
      expect((await service.api('DELETE', '/v1/admin/workspaces', { token: TEST_ADMIN_TOKEN })).status).toBe(405);
    });
  });

  it('a body sent without being read does not stall the server (raw socket, 1 MB, 401)', async () => {
    const url = new URL(service.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: '/v1/users', method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(nestedBody(500, 1024 * 1024 - 1024));
    });
    expect(status).toBe(401);
  });
});
