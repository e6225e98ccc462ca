/** Meta's webhook on our side: the verify handshake, the signature over the raw bytes, storage before the 200. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../../helpers/db.ts';
import { seedWorkspace } from '../../helpers/service.ts';
import { fixture, metaSignature, unixSeconds } from './fixtures/meta.ts';
import { ACCESS_TOKEN, APP_SECRET, PHONE_NUMBER_ID, startHarness, until, VERIFY_TOKEN, wamid, type Harness } from './fixtures/harness.ts';

describeEachDatabase('WhatsApp webhook', (get) => {
  let h: Harness;
  const events = async () => h.service.database.db.selectFrom('whatsapp_webhook_events').selectAll().orderBy('received_at').execute();

  beforeAll(async () => {
    h = await startHarness(get(), { integratorDelayMs: 400 });
  });
  afterAll(async () => {
    await h.close();
  });

  describe('the verify handshake', () => {
    const verify = (query: string) => fetch(`${h.service.url}/v1/whatsapp/webhook?${query}`);

    it('echoes hub.challenge as text/plain when the verify token is ours', async () => {
      const res = await verify(`hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1158201444`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toBe('1158201444');
    });

    it('refuses a wrong token, a wrong mode or a missing challenge with 403', async () => {
      expect((await verify('hub.mode=subscribe&hub.verify_token=guess&hub.challenge=1')).status).toBe(403);
      expect((await verify(`hub.mode=unsubscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`)).status).toBe(403);
      expect((await verify(`hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}`)).status).toBe(403);
      expect((await verify('')).status).toBe(403);
    });
  });

  describe('the signature', () => {
    it('refuses a wrong or missing X-Hub-Signature-256 with 401 and stores nothing', async () => {
      const before = (await events()).length;
      const body = fixture('text-message', { PHONE_NUMBER_ID, WA_ID: '31612345678', MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(), BODY: 'hello' });
      const wrongSecret = await h.post(body, metaSignature('another-app-secret', body));
      const missing = await h.post(body, null);
      const malformed = await h.post(body, 'sha1=0123');
      expect([wrongSecret.status, missing.status, malformed.status]).toEqual([401, 401, 401]);
      expect((await events()).length).toBe(before);
      expect(h.channelRequests()).toHaveLength(0);
    });

    it('is checked over the raw bytes: the same JSON serialised again (UTF-8 instead of \\u escapes) does not verify', async () => {
      const raw = fixture('text-message-non-ascii', { PHONE_NUMBER_ID, WA_ID: '31612345678', MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds() });
      const reserialised = Buffer.from(JSON.stringify(JSON.parse(raw.toString('utf8'))), 'utf8');
      expect(reserialised.equals(raw)).toBe(false);
      // Signed over what Meta sent, delivered re-serialised: a proxy that re-encodes bodies breaks the signature.
      expect((await h.post(reserialised, metaSignature(APP_SECRET, raw))).status).toBe(401);
    });
  });

  describe('durable first', () => {
    it('answers 200 once the raw body is committed, before the message is processed', async () => {
      const body = fixture('text-message', { PHONE_NUMBER_ID, WA_ID: '31611110000', MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(), BODY: 'Is the shop open on Sunday?' });
      const res = await h.post(body);
      expect(res.status).toBe(200);
      // The integrator takes 400 ms to answer: the 200 did not wait for it (no reply was sent when it came).
      const answered = (): boolean => h.sends().some((s) => (s.body.text as { body: string }).body === 'Answer to: Is the shop open on Sunday?');
      expect(answered()).toBe(false);
      const stored = (await events()).find((e) => e.body === body.toString('utf8'));
      expect(stored).toBeDefined();
      // Processed afterwards: the reply goes out.
      await until(() => answered());
      await until(async () => (await events()).find((e) => e.body === body.toString('utf8'))?.outcome === 'processed');
    });

    it('stores an event for an unknown phone_number_id, answers 200 and ignores it (Meta must not retry for days)', async () => {
      const sendsBefore = h.sends().length;
      const requestsBefore = h.channelRequests().length;
      const body = fixture('text-message', { PHONE_NUMBER_ID: '999000111222333', WA_ID: '31622220000', MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(), BODY: 'hello?' });
      expect((await h.post(body)).status).toBe(200);
      const event = await until(async () => (await events()).find((e) => e.body === body.toString('utf8') && e.processed_at !== null));
      expect(event).toMatchObject({ outcome: 'unknown_number', detail: expect.stringContaining('999000111222333') });
      const inbound = await h.service.database.db.selectFrom('whatsapp_inbound_messages').select('id').where('phone_number_id', '=', '999000111222333').execute();
      expect(inbound).toEqual([]);
      expect(h.sends()).toHaveLength(sendsBefore);
      expect(h.channelRequests()).toHaveLength(requestsBefore);
    });

    it('keeps a signed body that is not a WhatsApp payload as invalid, with 200', async () => {
      const body = Buffer.from('{"object":"page","entry":[]}');
      expect((await h.post(body)).status).toBe(200);
      const event = await until(async () => (await events()).find((e) => e.body === body.toString() && e.processed_at !== null));
      expect(event.outcome).toBe('invalid');
    });
  });

  describe('settings: PUT, GET, DELETE /v1/whatsapp', () => {
    it('answers a hint of the token, never the token, and seals it at rest', async () => {
      const res = await h.service.api('GET', '/v1/whatsapp', { token: h.workspace.admin });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ phone_number_id: PHONE_NUMBER_ID, webhook_url: expect.stringMatching(/\/v1\/whatsapp\/webhook$/) });
      expect(ACCESS_TOKEN.endsWith(res.body.token_hint.replace('…', ''))).toBe(true);
      expect(res.text).not.toContain(ACCESS_TOKEN);
      const row = await h.service.database.db.selectFrom('whatsapp_accounts').selectAll().where('workspace_id', '=', h.workspace.workspaceId).executeTakeFirstOrThrow();
      expect(row.access_token_sealed).not.toContain(ACCESS_TOKEN);
    });

    it('is for owners and admins only', async () => {
      expect((await h.service.api('GET', '/v1/whatsapp', { token: h.workspace.agent })).status).toBe(403);
      expect((await h.service.api('PUT', '/v1/whatsapp', { token: h.workspace.agent, body: { phone_number_id: '1', access_token: 'x' } })).status).toBe(403);
      expect((await h.service.api('GET', '/v1/whatsapp')).status).toBe(401);
    });

    it('refuses a phone_number_id another workspace has connected with 409, and bad bodies with 400', async () => {
      const other = await seedWorkspace(h.service, 'Other');
      const taken = await h.service.api('PUT', '/v1/whatsapp', { token: other.owner, body: { phone_number_id: PHONE_NUMBER_ID, access_token: 'EAAGother' } });
      expect(taken.status).toBe(409);
      expect(taken.body.error.code).toBe('conflict');
      expect((await h.service.api('PUT', '/v1/whatsapp', { token: other.owner, body: { phone_number_id: '+31 6 1234', access_token: 'EAAG' } })).status).toBe(400);
      expect((await h.service.api('PUT', '/v1/whatsapp', { token: other.owner, body: { phone_number_id: '123' } })).status).toBe(400);
      expect((await h.service.api('GET', '/v1/whatsapp', { token: other.owner })).status).toBe(404);
      const own = await h.service.api('PUT', '/v1/whatsapp', { token: other.owner, body: { phone_number_id: '555000111', access_token: 'EAAGotherToken123' } });
      expect(own.status).toBe(200);
      expect((await h.service.api('DELETE', '/v1/whatsapp', { token: other.owner })).status).toBe(204);
      expect((await h.service.api('DELETE', '/v1/whatsapp', { token: other.owner })).status).toBe(404);
    });

    it('describes its routes in /openapi.json', async () => {
      const res = await h.service.api('GET', '/openapi.json');
      expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(['/v1/whatsapp', '/v1/whatsapp/webhook']));
    });
  });
});
