/**
 * The settings a shop owner changes without a developer (docs/glossary.md; docs/webchat.md, "Settings on the
 * dashboard"; docs/phone.md, "Numbers"), through the real service on both databases: the workspace's name and time
 * zone (owners only), the user's own email, the website chat's switch, phone numbers as people type them, and what
 * to paste into Twilio and Meta.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { refuseUnsigned, sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';

describeEachDatabase('an owner without a developer', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let integrator: TestHttpsServer;
  /** The key the loopback integrator verifies with; '' answers every request. */
  let integratorKey = '';

  beforeAll(async () => {
    integrator = await startHttpsServer();
    integrator.handle((req, res, body) => {
      if (integratorKey && refuseUnsigned(integratorKey, req, res, body)) return;
      sendJson(res, 200, { reply: 'Order 1001 ships tomorrow.', handled: true });
    });
    service = await startTestService(get(), { PUBLIC_URL: 'https://botlink.example', WHATSAPP_VERIFY_TOKEN: 'verify-me-please', WHATSAPP_APP_SECRET: 'app-secret' });
    ws = await seedWorkspace(service, `Owner${Date.now()}`);
  });
  afterAll(async () => {
    await service?.stop();
    await integrator?.close();
  });

  describe('GET /v1/workspace', () => {
    it('says whether the integration and a sync key exist, so the dashboard need not ask for what answers 404', async () => {
      const fresh = await seedWorkspace(service, `Fresh${Date.now()}`);
      const before = await service.api('GET', '/v1/workspace', { token: fresh.agent });
      expect(before.status).toBe(200);
      expect(before.body.configured).toEqual({ integration: false, sync_key: false, whatsapp: false });
      // Who asks: a token sign-in learns its user's role here, without a refused request.
      expect(before.body.user).toEqual({ id: fresh.agentId, email: expect.stringMatching(/^agent@/), name: null, role: 'agent' });
      expect((await service.api('GET', '/v1/integration', { token: fresh.owner })).status).toBe(404);

      integratorKey = '';
      expect((await service.api('PUT', '/v1/integration', { token: fresh.owner, body: { endpoint_url: `${integrator.origin}/channel` } })).status).toBe(200);
      expect((await service.api('POST', '/v1/keys/sync', { token: fresh.owner })).status).toBe(201);
      const after = await service.api('GET', '/v1/workspace', { token: fresh.owner });
      expect(after.body.configured).toEqual({ integration: true, sync_key: true, whatsapp: false });
    });
  });

  describe('PATCH /v1/workspace', () => {
    it('renames the workspace and sets its time zone for an owner, and every role reads it', async () => {
      const res = await service.api('PATCH', '/v1/workspace', { token: ws.owner, body: { name: '  Trail & Tent  ', time_zone: 'Europe/London' } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: ws.workspaceId, name: 'Trail & Tent', time_zone: 'Europe/London', webchat_idle_minutes: 30 });
      const read = await service.api('GET', '/v1/workspace', { token: ws.agent });
      expect(read.status).toBe(200);
      expect(read.body.name).toBe('Trail & Tent');
    });

    it('refuses admins and agents with 403, and changes nothing', async () => {
      for (const token of [ws.admin, ws.agent]) {
        const res = await service.api('PATCH', '/v1/workspace', { token, body: { name: 'Taken over' } });
        expect(res.status).toBe(403);
      }
      expect((await service.api('GET', '/v1/workspace', { token: ws.owner })).body.name).toBe('Trail & Tent');
    });

    it('names the field of a mistake in words', async () => {
      const res = await service.api('PATCH', '/v1/workspace', { token: ws.owner, body: { name: '   ', time_zone: 'Mars/Olympus', webchat_idle_minutes: 1 } });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([
        { field: 'name', message: 'Enter a name for the workspace.' },
        { field: 'time_zone', message: expect.stringContaining('Choose a time zone') },
        { field: 'webchat_idle_minutes', message: expect.stringContaining('Choose between 5 minutes') },
      ]);
    });
  });

  describe('PATCH /v1/account', () => {
    it("changes the signed-in user's own email, and refuses one another user has", async () => {
      const res = await service.api('PATCH', '/v1/account', { token: ws.owner, body: { email: 'sam@trailandtent.example' } });
      expect(res.status).toBe(200);
      const users = (await service.api('GET', '/v1/users', { token: ws.owner })).body.users as { email: string; role: string }[];
      expect(users.filter((u) => u.role === 'owner').map((u) => u.email)).toEqual(['sam@trailandtent.example']);
      const taken = await service.api('PATCH', '/v1/account', { token: ws.admin, body: { email: 'SAM@trailandtent.example' } });
      expect(taken.status).toBe(409);
      expect(taken.body.error.details[0].field).toBe('email');
    });
  });

  describe('PUT /v1/phone', () => {
    it('reads numbers as people type them, with the country for national ones, and answers E.164', async () => {
      const res = await service.api('PUT', '/v1/phone', { token: ws.owner, body: { numbers: ['020 123 4567', '0031 (0)20-765 4321', 'tel:+44 20 7946 0000'], country: '31' } });
      expect(res.status).toBe(200);
      expect(res.body.numbers).toEqual(['+31201234567', '+31207654321', '+442079460000']);
      expect(res.body.voice_url).toBe('https://botlink.example/v1/phone/twilio/voice');
    });

    it('says in words which number needs a country code, naming its field', async () => {
      const res = await service.api('PUT', '/v1/phone', { token: ws.owner, body: { numbers: ['+31 20 123 4567', '020 123 4567'] } });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ field: 'numbers.1', message: expect.stringContaining('020 123 4567 has no country code') }]);
      expect(res.body.error.message).not.toMatch(/pattern|E\.164/);
    });

    it('says that calls are refused until the operator sets the bridge token', async () => {
      const res = await service.api('GET', '/v1/phone', { token: ws.admin });
      expect(res.body.calls.ready).toBe(false);
      expect(res.body.calls.reason).toMatch(/TWILIO_AUTH_TOKEN .* or BRIDGE_TOKEN/);
    });
  });

  describe('GET /v1/channels/setup', () => {
    it('gives the Twilio address, the Meta callback URL and the verify token to owners and admins', async () => {
      const res = await service.api('GET', '/v1/channels/setup', { token: ws.admin });
      expect(res.status).toBe(200);
      expect(res.body.phone.voice_url).toBe('https://botlink.example/v1/phone/twilio/voice');
      expect(res.body.whatsapp).toEqual({ callback_url: 'https://botlink.example/v1/whatsapp/webhook', verify_token: 'verify-me-please', ready: true, reason: null });
      expect((await service.api('GET', '/v1/channels/setup', { token: ws.agent })).status).toBe(403);
    });
  });

  describe('the website chat switch', () => {
    it('is on for a first save; off, a visitor from an allowed site is told the chat is closed', async () => {
      const key = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
      const first = await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } });
      expect(first.body).toMatchObject({ allowed_origins: [SHOP], enabled: true });
      const visit = () =>
        service.api('POST', '/v1/webchat/conversations', { headers: { 'x-widget-key': key, origin: SHOP }, body: { visitor_message: 'Hello', page_url: `${SHOP}/` } });
      expect((await visit()).status).toBe(201);

      const off = await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP], enabled: false } });
      expect(off.body.enabled).toBe(false);
      const refused = await visit();
      expect(refused.status).toBe(403);
      expect(refused.body.error.details).toEqual({ reason: 'switched_off' });
      // Readable by the page: the origin is allowed, only the switch is off.
      expect(refused.headers.get('access-control-allow-origin')).toBe(SHOP);

      // Saving the sites again without the switch keeps it off.
      expect((await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } })).body.enabled).toBe(false);
      await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP], enabled: true } });
      expect((await visit()).status).toBe(201);
    });
  });

  describe('POST /v1/integration/test before saving', () => {
    it('tests the URL typed, with nothing saved, and saves nothing', async () => {
      const res = await service.api('POST', '/v1/integration/test', { token: ws.owner, body: { endpoint_url: `${integrator.origin}/botlink/channel` } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ outcome: 'answer', endpoint_url: `${integrator.origin}/botlink/channel`, signed_with: 'temporary_key' });
      expect(res.body.response.reply).toBe('Order 1001 ships tomorrow.');
      expect(res.body.advice).toMatch(/answered/);
      expect((await service.api('GET', '/v1/integration', { token: ws.owner })).status).toBe(404);
    });

    it('signs with the key given, so the endpoint can check it', async () => {
      integratorKey = 'k'.repeat(40);
      try {
        const signed = await service.api('POST', '/v1/integration/test', { token: ws.admin, body: { endpoint_url: `${integrator.origin}/botlink/channel`, key: integratorKey } });
        expect(signed.body).toMatchObject({ outcome: 'answer', signed_with: 'given_key' });
        const unsigned = await service.api('POST', '/v1/integration/test', { token: ws.admin, body: { endpoint_url: `${integrator.origin}/botlink/channel` } });
        expect(unsigned.body).toMatchObject({ outcome: 'no_answer', reason: 'status', http_status: 401 });
        expect(unsigned.body.advice).toMatch(/different key/);
      } finally {
        integratorKey = '';
      }
    });

    it('refuses a private or loopback URL with the same rules as saving, naming OUTBOUND_ALLOW for a local one', async () => {
      const res = await service.api('POST', '/v1/integration/test', { token: ws.owner, body: { endpoint_url: 'https://10.0.0.8/botlink/channel' } });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('invalid_url');
      expect(res.body.error.details).toEqual([{ field: 'endpoint_url', message: expect.stringContaining('OUTBOUND_ALLOW') }]);
    });

    it('without a URL and nothing saved, asks for the address in words', async () => {
      const res = await service.api('POST', '/v1/integration/test', { token: ws.owner, body: {} });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe('No endpoint is saved yet: enter its address to test it, or save it first.');
    });

    it('the saved endpoint is "not contacted" until the first request, then healthy', async () => {
      expect((await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: `${integrator.origin}/botlink/channel` } })).status).toBe(200);
      const before = (await service.api('GET', '/v1/integration', { token: ws.owner })).body.health;
      expect(before).toMatchObject({ contacted: false, advice: null });
      expect((await service.api('POST', '/v1/integration/test', { token: ws.owner, body: {} })).body.outcome).toBe('answer');
      const after = (await service.api('GET', '/v1/integration', { token: ws.owner })).body.health;
      expect(after).toMatchObject({ contacted: true, state: 'healthy' });
    });
  });
});
