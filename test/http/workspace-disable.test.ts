/**
 * The operator disables a workspace (docs/operations.md, "Operator commands"): every way into it is refused until it is
 * enabled again, through the real service. Tokens, sync and widget keys, sign-in and invite links answer 403
 * workspace_disabled; open live streams end; a call to its number hears the unknown number's apology; WhatsApp
 * messages are stored but not answered. Enabling restores all of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { BRIDGE_TOKEN, Caller, NUMBER } from '../helpers/phone-caller.ts';
import { fixture, unixSeconds } from '../channels/whatsapp/fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from '../channels/whatsapp/fixtures/harness.ts';

const PASSWORD = 'a long enough password';

describeEachDatabase('a disabled workspace', (get) => {
  let h: Harness;
  let syncKey: string;
  let widgetKey: string;
  let email: string;

  const disable = () => h.service.accounts.disableWorkspace(h.workspace.workspaceId, 'unpaid invoice');
  const enable = () => h.service.accounts.enableWorkspace(h.workspace.workspaceId);
  const refusedAsDisabled = (res: { status: number; body: { error?: { code?: string } } }) => {
    expect(res.status).toBe(403);
    expect(res.body.error?.code).toBe('workspace_disabled');
  };

  beforeAll(async () => {
    h = await startHarness(get(), { env: { BRIDGE_TOKEN } });
    const { owner } = h.workspace;
    syncKey = (await h.service.api('POST', '/v1/keys/sync', { token: owner })).body.key;
    widgetKey = (await h.service.api('GET', '/v1/keys/widget', { token: owner })).body.key;
    expect((await h.service.api('PUT', '/v1/webchat', { token: owner, body: { allowed_origins: ['https://shop.example'] } })).status).toBe(200);
    expect((await h.service.api('PUT', '/v1/phone', { token: owner, body: { numbers: [NUMBER] } })).status).toBe(200);
    email = `signs-in-${Date.now()}@acme.example`;
    const made = await h.service.api('POST', '/v1/users', { token: owner, body: { email, role: 'agent' } });
    const invite = (made.body.invite_url as string).split('#')[1];
    expect((await h.service.api('POST', '/v1/auth/password', { body: { invite, password: PASSWORD } })).status).toBe(200);
  });
  afterAll(async () => {
    await h?.close();
  });

  describe('refuses, then serves again once enabled', () => {
    beforeAll(disable);
    afterAll(enable);

    it("its users' bearer tokens: 403 workspace_disabled, with a message that says so", async () => {
      for (const token of [h.workspace.owner, h.workspace.agent]) {
        const res = await h.service.api('GET', '/v1/users', { token });
        refusedAsDisabled(res);
        expect(res.body.error.message).toMatch(/disabled/);
      }
    });

    it('its sync key and its widget key (sync API and web chat)', async () => {
      refusedAsDisabled(await h.service.api('GET', '/v1/sync/pages', { headers: { 'x-sync-key': syncKey } }));
      refusedAsDisabled(await h.service.api('GET', '/v1/sync/pages', { headers: { 'x-widget-key': widgetKey } }));
      const chat = await h.service.api('POST', '/v1/webchat/conversations', {
        headers: { 'x-widget-key': widgetKey, origin: 'https://shop.example' },
        body: { visitor_message: 'hello', page_url: 'https://shop.example/' },
      });
      refusedAsDisabled(chat);
    });

    it('sign-in with the right password (the wrong one stays 401, saying nothing more)', async () => {
      refusedAsDisabled(await h.service.api('POST', '/v1/auth/login', { body: { email, password: PASSWORD } }));
      expect((await h.service.api('POST', '/v1/auth/login', { body: { email, password: 'not the password at all' } })).status).toBe(401);
    });

    it('an invite link, which stays unused for later', async () => {
      const made = await h.service.accounts.createUser(await h.service.accounts.operatorOf(h.workspace.workspaceId), { email: `later-${Date.now()}@acme.example`, role: 'agent' });
      const invite = made.invite_url!.split('#')[1];
      refusedAsDisabled(await h.service.api('POST', '/v1/auth/password', { body: { invite, password: PASSWORD } }));
      await enable();
      expect((await h.service.api('POST', '/v1/auth/password', { body: { invite, password: PASSWORD } })).status).toBe(200);
      await disable();
    });

    it('a call to its number hears the apology of a number nobody answers', async () => {
      const caller = await Caller.connect(h.service);
      caller.setup(`CA-disabled-${Date.now()}`);
      expect((await caller.next((f) => f.type === 'text')).token).toMatch(/cannot take calls/);
      expect((await caller.next((f) => f.type === 'end')).type).toBe('end');
      caller.ws.close();
    });

    it('WhatsApp: the message is stored (200) but not answered', async () => {
      const messageId = wamid();
      const body = fixture('text-message', { PHONE_NUMBER_ID, WA_ID: '31600000013', MESSAGE_ID: messageId, TIMESTAMP: unixSeconds(), BODY: 'are you there?' });
      expect((await h.post(body)).status).toBe(200);
      const row = await until(async () => {
        const found = await h.service.database.db.selectFrom('whatsapp_inbound_messages').selectAll().where('message_id', '=', messageId).executeTakeFirst();
        return found?.state === 'done' && found;
      });
      expect(row).toMatchObject({ state: 'done', outcome: 'workspace_disabled' });
      expect(h.channelRequests().some((r) => r.message === 'are you there?')).toBe(false);
      expect(h.sends().some((s) => JSON.stringify(s.body).includes('are you there?'))).toBe(false);
    });
  });

  it('ends its open live streams (the stream guard)', async () => {
    const session = await h.service.runtime.handleMessage({ workspaceId: h.workspace.workspaceId, channel: 'webchat', externalId: `sse-${Date.now()}`, text: 'hello', language: 'en' });
    const res = await fetch(`${h.service.url}/v1/sessions/${session.sessionId}/events`, { headers: { authorization: `Bearer ${h.workspace.agent}` } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    await disable();
    try {
      const ended = (async () => {
        for (;;) if ((await reader.read()).done) return true;
      })();
      expect(await Promise.race([ended, new Promise((r) => setTimeout(r, 8_000, false))])).toBe(true);
    } finally {
      await enable();
    }
  }, 15_000);

  it('enabled again, everything answers as before', async () => {
    const { owner, agent } = h.workspace;
    expect((await h.service.api('GET', '/v1/users', { token: owner })).status).toBe(200);
    expect((await h.service.api('GET', '/v1/sessions', { token: agent })).status).toBe(200);
    expect((await h.service.api('GET', '/v1/sync/pages', { headers: { 'x-sync-key': syncKey } })).status).toBe(200);
    expect((await h.service.api('POST', '/v1/auth/login', { body: { email, password: PASSWORD } })).status).toBe(200);
    const chat = await h.service.api('POST', '/v1/webchat/conversations', {
      headers: { 'x-widget-key': widgetKey, origin: 'https://shop.example' },
      body: { visitor_message: 'hello', page_url: 'https://shop.example/' },
    });
    expect(chat.status).toBe(201);
    const caller = await Caller.connect(h.service);
    caller.setup(`CA-enabled-${Date.now()}`);
    caller.say('hello');
    expect((await caller.next((f) => f.type === 'text' && f.last === true)).token ?? '').not.toMatch(/cannot take calls/);
    caller.ws.close();
    const messageId = wamid();
    const body = fixture('text-message', { PHONE_NUMBER_ID, WA_ID: '31600000014', MESSAGE_ID: messageId, TIMESTAMP: unixSeconds(), BODY: 'back again?' });
    expect((await h.post(body)).status).toBe(200);
    expect(await until(() => h.sends().some((s) => JSON.stringify(s.body).includes('Answer to: back again?')))).toBe(true);
  });

  it('the operator lists it with its state, owners and users', async () => {
    await disable();
    const listed = (await h.service.accounts.listWorkspaces()).find((w) => w.id === h.workspace.workspaceId);
    expect(listed).toMatchObject({ name: 'Acme', owners: ['owner@acme.example'], disabled_reason: 'unpaid invoice', disabled_at: expect.any(Date) });
    expect(listed!.users).toBeGreaterThanOrEqual(4);
    expect((await enable()).disabled_at).toBeNull();
  });
});
