import { afterAll, beforeAll, expect, it } from 'vitest';
import { verifyToolsRequest } from '../../src/receiver/index.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { refuseUnsigned, sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

describeEachDatabase('sessions API, live events, team and tools test', (get) => {
  let service: TestService;
  let integrator: TestHttpsServer;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let key = '';

  beforeAll(async () => {
    integrator = await startHttpsServer((req, res, body) => {
      if (req.url === '/botlink/tools/manifest') {
        // The manifest GET is signed over sent_at + '.' (protocol §5.4).
        if (!verifyToolsRequest(key, body, req.headers['x-service-sent-at'] as string, req.headers['x-service-signature'] as string).ok) {
          res.statusCode = 401;
          return void res.end();
        }
        return sendJson(res, 200, {
          tools: [
            { name: 'order_status', description: 'Status of an order', parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] } },
            { name: 'bad name', description: 'x', parameters: { type: 'object', properties: {} } },
          ],
        });
      }
      if (refuseUnsigned(key, req, res, body)) return;
      const message = JSON.parse(body.toString()).message as string;
      if (message.includes('person')) return sendJson(res, 200, { reply: 'Let me check.', handoff: 'human' });
      sendJson(res, 200, { reply: `Answer to: ${message}` });
    });
    service = await startTestService(get());
    ws = await seedWorkspace(service);
    const put = await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: `${integrator.origin}/botlink/channel` } });
    key = put.body.key;
  });
  afterAll(async () => {
    await service.stop();
    await integrator.close();
  });

  it('lists sessions with their channel, state and customer, for every role', async () => {
    await service.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'whatsapp', externalId: 'wa-100', text: 'order 5?', language: 'en', customerPhone: '+31612345678' });
    await service.runtime.settled();
    const res = await service.api('GET', '/v1/sessions?channel=whatsapp', { token: ws.agent });
    expect(res.status).toBe(200);
    expect(res.body.sessions[0]).toMatchObject({ channel: 'whatsapp', session_id: 'wa-100', status: 'active', state: 'idle', customer: { phone: '+31612345678' }, turn_count: 1 });
  });

  it('shows one session with every turn: reply source, bot-link outcome, timings', async () => {
    const list = await service.api('GET', '/v1/sessions', { token: ws.agent });
    const id = list.body.sessions.find((s: { session_id: string }) => s.session_id === 'wa-100').id;
    const res = await service.api('GET', `/v1/sessions/${id}`, { token: ws.agent });
    expect(res.status).toBe(200);
    expect(res.body.turns).toHaveLength(1);
    expect(res.body.turns[0]).toMatchObject({ customer_message: 'order 5?', reply: 'Answer to: order 5?', source: 'integrator', botlink: { outcome: 'answer', httpStatus: 200 } });
    expect(res.body.turns[0].timings.botlink).toBeGreaterThanOrEqual(0);
  });

  it('refuses bad filters and unknown ids clearly', async () => {
    expect((await service.api('GET', '/v1/sessions?channel=fax', { token: ws.agent })).status).toBe(400);
    expect((await service.api('GET', '/v1/sessions?limit=0', { token: ws.agent })).status).toBe(400);
    expect((await service.api('GET', '/v1/sessions/not-a-uuid', { token: ws.agent })).status).toBe(404);
    expect((await service.api('GET', '/v1/sessions/00000000-0000-4000-8000-000000000000', { token: ws.agent })).status).toBe(404);
  });

  it('another workspace cannot see the session', async () => {
    const other = await seedWorkspace(service, 'Other');
    const list = await service.api('GET', '/v1/sessions', { token: ws.agent });
    const id = list.body.sessions[0].id;
    expect((await service.api('GET', `/v1/sessions/${id}`, { token: other.owner })).status).toBe(404);
    expect((await service.api('GET', '/v1/sessions', { token: other.owner })).body.sessions).toEqual([]);
  });

  it('streams live updates over SSE', async () => {
    const first = await service.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'phone', externalId: 'call-sse', text: 'hello', language: 'en' });
    const controller = new AbortController();
    const res = await fetch(`${service.url}/v1/sessions/${first.sessionId}/events`, { headers: { authorization: `Bearer ${ws.agent}` }, signal: controller.signal });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    let text = '';
    const readUntil = async (needle: string) => {
      while (!text.includes(needle)) text += new TextDecoder().decode((await reader.read()).value);
    };
    await readUntil('event: state');
    await service.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'phone', externalId: 'call-sse', text: 'second', language: 'en' });
    await readUntil('event: turn_completed');
    controller.abort();
    expect(text).toContain('event: turn_started');
    expect(text).toMatch(/event: reply\ndata: \{[^\n]*"source":"integrator"/);
  });

  it('the team switch decides whether a human handoff on the phone connects', async () => {
    // Agents turn the switch too: they are the ones who start and stop taking calls.
    expect((await service.api('PUT', '/v1/team', { token: ws.agent, body: { available: true } })).body).toEqual({ available: true, available_now: true });
    expect((await service.api('GET', '/v1/team', { token: ws.agent })).body).toEqual({ available: true, available_now: true });
    expect((await service.api('PUT', '/v1/team', { token: ws.admin, body: { available: true } })).body).toEqual({ available: true, available_now: true });
    const connected = await service.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'phone', externalId: 'call-person', text: 'a person please', language: 'en' });
    expect(connected).toMatchObject({ handoff: { kind: 'human', connected: true } });
    await service.api('PUT', '/v1/team', { token: ws.admin, body: { available: false } });
    const followUp = await service.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'phone', externalId: 'call-person-2', text: 'a person please', language: 'en' });
    expect(followUp).toMatchObject({ handoff: { kind: 'human', connected: false } });
    const notes = await service.api('GET', '/v1/notifications', { token: ws.agent });
    // The caller's own request for a person (src/text/person-request.ts): the notification says so and quotes it.
    expect(notes.body.notifications[0]).toMatchObject({ kind: 'human_followup', message: 'The caller asked for a person. a person please', read_at: null });

    // An agent marks it done; another workspace cannot see or mark it.
    const id = notes.body.notifications[0].id as string;
    const other = await seedWorkspace(service, 'Elsewhere');
    expect((await service.api('POST', `/v1/notifications/${id}/read`, { token: other.owner })).status).toBe(404);
    expect((await service.api('POST', `/v1/notifications/${id}/read`, { token: ws.agent })).status).toBe(204);
    const done = (await service.api('GET', '/v1/notifications', { token: ws.agent })).body.notifications[0];
    expect(done.read_at).toMatch(/^\d{4}-/);
    expect((await service.api('POST', `/v1/notifications/${id}/read`, { token: ws.agent })).status).toBe(204);
    expect((await service.api('GET', '/v1/notifications', { token: ws.agent })).body.notifications[0].read_at).toBe(done.read_at);
  });

  it('the tools test button fetches the manifest now and lists tools and problems', async () => {
    const res = await service.api('POST', '/v1/integration/tools/test', { token: ws.owner });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', tools_base: `${integrator.origin}/botlink/tools` });
    expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual(['order_status']);
    expect(res.body.problems[0]).toMatchObject({ tool: 'bad name' });
    expect((await service.api('POST', '/v1/integration/tools/test', { token: ws.agent })).status).toBe(403);
  });
});
