import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../channels/whatsapp/fixtures/harness.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

describeEachDatabase('operations', (get) => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService(get());
  });
  afterAll(() => service.stop());

  it('/healthz answers ok', async () => {
    const res = await service.api('GET', '/healthz');
    expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('/readyz answers ready with a database', async () => {
    expect((await service.api('GET', '/readyz')).status).toBe(200);
  });

  it('/metrics is Prometheus text with our histograms', async () => {
    const res = await service.api('GET', '/metrics');
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(res.text).toContain('# TYPE botlink_request_duration_seconds histogram');
    expect(res.text).toContain('# TYPE http_request_duration_seconds histogram');
  });

  it('/openapi.json describes every route the server answers, with its security', async () => {
    const res = await service.api('GET', '/openapi.json');
    expect(res.body.openapi).toBe('3.1.0');
    const paths = res.body.paths;
    for (const [path, method] of [
      ['/v1/admin/workspaces', 'post'],
      ['/v1/users', 'post'],
      ['/v1/users/{id}', 'delete'],
      ['/v1/tokens', 'post'],
      ['/v1/tokens/current', 'delete'],
      ['/v1/integration', 'get'],
      ['/v1/integration', 'put'],
      ['/v1/integration', 'delete'],
      ['/v1/integration/key', 'post'],
      ['/v1/integration/test', 'post'],
      ['/healthz', 'get'],
      ['/readyz', 'get'],
      ['/metrics', 'get'],
    ] as const) {
      expect(paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    expect(paths['/v1/integration'].put.security).toEqual([{ bearer: [] }]);
    expect(paths['/v1/integration'].put.responses['403']).toBeDefined();
    expect(paths['/healthz'].get.security).toEqual([]);
    expect(paths['/v1/integration'].put.requestBody.content['application/json'].schema.required).toEqual(['endpoint_url']);
  });

  it('after stop, the server takes no new connections', async () => {
    const extra = await startTestService(get());
    expect((await extra.api('GET', '/readyz')).status).toBe(200);
    await extra.stop();
    await expect(fetch(`${extra.url}/readyz`)).rejects.toThrow();
  });
});

describe('graceful stop', () => {
  it('lets a request in flight finish before the server closes', async () => {
    const { openTestDatabase } = await import('../helpers/db.ts');
    const db = await openTestDatabase('pglite');
    const service = await startTestService(db);
    // A slow request: the test button toward an endpoint that answers after 300 ms.
    const { startHttpsServer, sendJson } = await import('../helpers/https-server.ts');
    const integrator = await startHttpsServer((_req, res) => void setTimeout(() => sendJson(res, 200, { reply: 'late but fine' }), 300));
    const { seedWorkspace } = await import('../helpers/service.ts');
    const ws = await seedWorkspace(service);
    await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: `${integrator.origin}/channel` } });
    const inFlight = service.api('POST', '/v1/integration/test', { token: ws.owner });
    // In flight: the endpoint has the request (and answers it 300 ms later).
    await until(() => integrator.requests.length === 1);
    const stopping = service.stop();
    const res = await inFlight;
    await stopping;
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('answer');
    await integrator.close();
    await db.close();
  });
});
