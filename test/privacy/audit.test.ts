/**
 * The audit log (docs/privacy.md, "Audit log"), through the real service on both databases: every audited action
 * leaves exactly one entry with who, when, from where and what; no entry holds a key, secret, token or password;
 * owners and admins read it a page at a time; nobody can change it, and only its own retention deletes from it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../channels/whatsapp/fixtures/harness.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';
const PASSWORD = 'correct horse battery staple';
const WHATSAPP_TOKEN = 'EAAG-whatsapp-access-token-secret-value';

describeEachDatabase('the audit log', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  /** Every secret value the calls below answered or sent: none may appear in an entry. */
  const secrets: string[] = [PASSWORD, WHATSAPP_TOKEN];

  const api = (method: string, path: string, token: string, body?: unknown) => service.api(method, path, { token, ...(body === undefined ? {} : { body }) });
  async function entries() {
    const res = await api('GET', '/v1/audit?limit=200', ws.owner);
    expect(res.status).toBe(200);
    return res.body.entries as { at: string; user_email: string | null; ip: string | null; action: string; target: string | null }[];
  }

  beforeAll(async () => {
    service = await startTestService(get(), {}, { retention: { intervalMs: 0 } });
    ws = await seedWorkspace(service, `Audit${Date.now()}`);
    secrets.push(ws.owner, ws.admin, ws.agent);
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('records each audited action exactly once, with the user, the address and a target', async () => {
    // The seed already made a workspace and invited two users.
    const seeded = await entries();
    expect(seeded.map((e) => e.action).sort()).toEqual(['user_invited', 'user_invited', 'workspace_created']);

    let chatSession = '';
    const steps: [string, () => Promise<{ status: number; body?: unknown }>][] = [
      ['integration_changed', () => api('PUT', '/v1/integration', ws.owner, { endpoint_url: 'https://127.0.0.1:9/botlink' })],
      ['integration_key_replaced', () => api('POST', '/v1/integration/key', ws.admin, {})],
      ['webhook_endpoint_set', () => api('PUT', '/v1/webhooks/new_chat', ws.owner, { url: 'https://127.0.0.1:9/hooks' })],
      ['webhook_secret_rotated', () => api('POST', '/v1/webhooks/new_chat/secret', ws.owner, {})],
      ['webhook_endpoint_removed', () => api('DELETE', '/v1/webhooks/new_chat', ws.owner)],
      ['sync_key_replaced', () => api('POST', '/v1/keys/sync', ws.owner)],
      ['phone_settings_changed', () => api('PUT', '/v1/phone', ws.owner, { numbers: ['+31 20 123 4567'] })],
      ['whatsapp_settings_changed', () => api('PUT', '/v1/whatsapp', ws.owner, { phone_number_id: String(Date.now()), access_token: WHATSAPP_TOKEN })],
      ['webchat_settings_changed', () => api('PUT', '/v1/webchat', ws.owner, { allowed_origins: [SHOP] })],
      ['token_created', () => api('POST', '/v1/tokens', ws.owner, {})],
      ['retention_changed', () => api('PUT', '/v1/workspace/retention', ws.owner, { days: 90 })],
      ['user_invited', () => api('POST', '/v1/users', ws.owner, { email: 'new.agent@example.org', role: 'agent' })],
      ['workspace_changed', () => api('PATCH', '/v1/workspace', ws.owner, { name: 'Audited' })],
      ['account_email_changed', () => api('PATCH', '/v1/account', ws.admin, { email: `admin.${Date.now()}@audit.example` })],
      ['user_renamed', () => api('PATCH', `/v1/users/${ws.agentId}`, ws.admin, { name: 'Sam Jansen' })],
      ['team_availability_changed', () => api('PUT', '/v1/team', ws.agent, { available: true })],
      ['inbox_settings_changed', () => api('PUT', '/v1/inbox/settings', ws.admin, { handback_after_minutes: null })],
      ['invite_link_made', () => api('POST', `/v1/users/${ws.agentId}/invite`, ws.owner)],
      [
        'token_revoked',
        async () => {
          const made = await api('POST', '/v1/tokens', ws.agent, {});
          const listed = await api('GET', '/v1/tokens', ws.agent);
          const id = (listed.body.tokens as { id: string; current: boolean }[]).find((t) => !t.current)!.id;
          secrets.push(made.body.token as string);
          return { before: 1, ...(await api('DELETE', `/v1/tokens/${id}`, ws.agent)) };
        },
      ],
      ['whatsapp_removed', () => api('DELETE', '/v1/whatsapp', ws.owner)],
      ['integration_removed', () => api('DELETE', '/v1/integration', ws.owner)],
      ['customer_exported', () => api('POST', '/v1/privacy/export', ws.owner, { email: 'nobody@example.org' })],
      ['customer_erased', () => api('POST', '/v1/privacy/erase', ws.owner, { phone: '+31 6 1234 5678' })],
      [
        'conversation_taken_over',
        async () => {
          const widgetKey = (await api('GET', '/v1/keys/widget', ws.owner)).body.key as string;
          const started = await service.api('POST', '/v1/webchat/conversations', { headers: { 'x-widget-key': widgetKey, origin: SHOP }, body: { visitor_message: 'Hello there', page_url: SHOP } });
          expect(started.status).toBe(201);
          await service.runtime.settled();
          const row = await get().db.selectFrom('sessions').select('id').where('external_id', '=', started.body.conversation_id).executeTakeFirstOrThrow();
          chatSession = row.id;
          return api('POST', `/v1/sessions/${chatSession}/takeover`, ws.admin);
        },
      ],
    ];
    for (const [action, call] of steps) {
      const before = (await entries()).length;
      const res = await call();
      expect(res.status, action).toBeLessThan(300);
      // A step that first made something audited itself (a token, to revoke it) says how many entries that made.
      const extra = (res as { before?: number }).before ?? 0;
      for (const field of ['key', 'secret', 'token', 'invite_url']) {
        const value = (res.body as Record<string, unknown> | undefined)?.[field];
        if (typeof value === 'string') secrets.push(value);
      }
      const after = await entries();
      expect(after.length, action).toBe(before + 1 + extra);
      expect(after[0]!.action).toBe(action);
      expect(after[0]!.ip).toMatch(/127\.0\.0\.1/);
      expect(after[0]!.user_email).toMatch(/@/);
    }
    const all = await entries();
    expect(all.find((e) => e.action === 'user_renamed')!.target).toBe(`user ${ws.agentId}: Sam Jansen`);
    // One's own name is nobody's access: not recorded (and never as a changed email).
    expect((await api('PATCH', '/v1/account', ws.agent, { name: 'Sam' })).status).toBe(200);
    expect(await entries()).toHaveLength(all.length);
    expect(all.find((e) => e.action === 'conversation_taken_over')!.target).toContain(chatSession);
    expect(all.find((e) => e.action === 'integration_changed')!.target).toContain('https://127.0.0.1:9/botlink');
    expect(all.find((e) => e.action === 'customer_erased')!.target).not.toMatch(/6\s?1234\s?5678/);
    expect(all.find((e) => e.action === 'customer_exported')!.target).toBe('by email: nothing; period: everything held, format: json');
  });

  it('records a conversations export with the period it covered, its channel and its format', async () => {
    const from = '2026-03-01T00:00:00.000Z';
    const to = '2026-03-08T00:00:00.000Z';
    // A streamed answer is recorded once the handler is done with it: a moment after the download has ended.
    const recorded = async (count: number) => until(async () => ((await entries()).filter((e) => e.action === 'conversations_exported').length === count ? (await entries())[0] : undefined));
    const chosen = await api('GET', `/v1/exports/conversations?from=${from}&to=${to}&channel=phone&format=jsonl`, ws.admin);
    expect(chosen.status).toBe(200);
    expect(await recorded(1)).toMatchObject({ action: 'conversations_exported', user_email: expect.stringMatching(/^admin/), target: `period: ${from} to ${to}, channel: phone, format: jsonl` });

    const defaults = await api('GET', '/v1/exports/conversations', ws.owner);
    expect(defaults.status).toBe(200);
    const target = (await recorded(2))!.target!;
    const [, start, end] = /^period: (\S+) to (\S+), format: csv$/.exec(target) ?? [];
    // Without from and to: the seven days up to the current hour's end, as the export read them.
    expect(new Date(end!).getTime() - new Date(start!).getTime()).toBe(7 * 86_400_000);
    expect(Math.abs(new Date(end!).getTime() - Date.now())).toBeLessThanOrEqual(3_600_000);
  });

  it('records a sign-in, a failed sign-in and a password set through an invite, once each', async () => {
    const made = await api('POST', '/v1/users', ws.owner, { email: 'signer@example.org', role: 'agent' });
    const invite = (made.body.invite_url as string).split('#')[1]!;
    secrets.push(invite);
    const before = (await entries()).length;
    expect((await service.api('POST', '/v1/auth/password', { body: { invite, password: PASSWORD } })).status).toBe(200);
    expect((await service.api('POST', '/v1/auth/login', { body: { email: 'signer@example.org', password: 'not the password at all' } })).status).toBe(401);
    const ok = await service.api('POST', '/v1/auth/login', { body: { email: 'Signer@example.org', password: PASSWORD } });
    expect(ok.status).toBe(200);
    secrets.push(ok.body.token as string);
    // An email no user has: nothing to record in any workspace.
    expect((await service.api('POST', '/v1/auth/login', { body: { email: 'stranger@example.org', password: PASSWORD } })).status).toBe(401);
    const after = await entries();
    expect(after.length).toBe(before + 3);
    expect(after.slice(0, 3).map((e) => [e.action, e.user_email])).toEqual([
      ['sign_in', 'signer@example.org'],
      ['sign_in_failed', null],
      ['password_set', 'signer@example.org'],
    ]);
    expect(after[1]!.target).toBe('signer@example.org');
  });

  it('holds no key, secret, token or password in any entry', async () => {
    const text = JSON.stringify(await get().db.selectFrom('audit_log').selectAll().execute());
    expect(secrets.length).toBeGreaterThan(8);
    for (const secret of secrets) expect(text).not.toContain(secret);
  });

  describe('GET /v1/audit', () => {
    it('is for owners and admins (403 for agents), a page at a time, newest first', async () => {
      expect((await api('GET', '/v1/audit', ws.agent)).status).toBe(403);
      const first = await api('GET', '/v1/audit?limit=2', ws.admin);
      expect(first.status).toBe(200);
      expect(first.body.entries).toHaveLength(2);
      expect(first.body.next_before).toEqual(expect.any(String));
      const second = await api('GET', `/v1/audit?limit=2&before=${first.body.next_before as string}`, ws.admin);
      expect(second.body.entries).toHaveLength(2);
      expect(new Date(second.body.entries[0].at).getTime()).toBeLessThanOrEqual(new Date(first.body.entries[1].at).getTime());
      expect((await api('GET', '/v1/audit?before=yesterday', ws.owner)).status).toBe(400);
    });

    it("shows no other workspace's entries", async () => {
      const other = await seedWorkspace(service, `Other${Date.now()}`);
      const res = await api('GET', '/v1/audit?limit=200', other.owner);
      expect(res.body.entries.map((e: { action: string }) => e.action).sort()).toEqual(['user_invited', 'user_invited', 'workspace_created']);
    });
  });

  describe('nobody changes it', () => {
    it('refuses UPDATE and DELETE in the database itself', async () => {
      const { db } = get();
      await expect(db.updateTable('audit_log').set({ target: 'changed' }).execute()).rejects.toThrow(/append-only/);
      await expect(db.deleteFrom('audit_log').execute()).rejects.toThrow(/append-only/);
    });

    it('lets its own retention delete entries older than two years, and only those', async () => {
      const { db } = get();
      // An old entry cannot be written by the service; the test inserts one as it would have been written then.
      await db.insertInto('audit_log').values({ workspace_id: ws.workspaceId, action: 'sign_in', at: new Date(Date.now() - 800 * 86_400_000) }).execute();
      const count = async () => Number((await db.selectFrom('audit_log').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', '=', ws.workspaceId).executeTakeFirstOrThrow()).n);
      const before = await count();
      expect(await service.privacy.audit.purge(100)).toBe(1);
      expect(await count()).toBe(before - 1);
    });
  });
});
