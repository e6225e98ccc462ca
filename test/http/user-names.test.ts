/**
 * Users have a display name (docs/interfaces.md, "Going live"; migration 0036): given with the invite, by the person
 * accepting it or later (PATCH /v1/account), or by an owner or admin (PATCH /v1/users/{id}); trimmed, at most 120
 * characters, empty is none. Wherever a user is named (the widget's "…, from the team", the line that a colleague
 * joined, sessions, inbox rows, presence, notes and their @mentions) it is that name, else the email's first word.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phrase } from '../../src/ai/phrases.ts';
import { MAX_USER_NAME_CHARS } from '../../src/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { addUserWithToken, seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';
const PASSWORD = 'correct horse battery staple';
let serial = 0;
const uniqueEmail = (what: string) => `${what}-${++serial}-${Date.now().toString(36)}@acme.example`;

describeEachDatabase('users have a display name', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  const api = (method: string, path: string, token: string, body?: unknown) => service.api(method, path, { token, ...(body === undefined ? {} : { body }) });
  const usersOf = async (token: string) => (await api('GET', '/v1/users', token)).body.users as { id: string; email: string; name: string | null }[];

  beforeAll(async () => {
    service = await startTestService(get());
    ws = await seedWorkspace(service);
    expect((await api('PATCH', '/v1/workspace', ws.owner, { time_zone: 'Pacific/Auckland' })).status).toBe(200);
  });
  afterAll(() => service.stop());

  describe('given with the invite (POST /v1/users)', () => {
    it('trimmed, its white space made single; listed with the user', async () => {
      const email = uniqueEmail('named');
      const made = await api('POST', '/v1/users', ws.owner, { email, role: 'agent', name: '  Kim \t  de  Boer ' });
      expect(made.status).toBe(201);
      expect(made.body.user).toEqual({ id: expect.any(String), email, name: 'Kim de Boer', role: 'agent' });
      expect((await usersOf(ws.admin)).find((u) => u.email === email)?.name).toBe('Kim de Boer');
    });

    it('absent, empty or only spaces: no name (null)', async () => {
      for (const name of [undefined, '', '   ', null]) {
        const made = await api('POST', '/v1/users', ws.owner, { email: uniqueEmail('unnamed'), role: 'agent', ...(name === undefined ? {} : { name }) });
        expect([made.status, made.body.user.name]).toEqual([201, null]);
      }
    });

    it(`longer than ${MAX_USER_NAME_CHARS} characters: 400 naming the field, and nobody is added`, async () => {
      const email = uniqueEmail('long');
      const res = await api('POST', '/v1/users', ws.owner, { email, role: 'agent', name: 'é'.repeat(MAX_USER_NAME_CHARS + 1) });
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'name' })]);
      expect((await usersOf(ws.owner)).some((u) => u.email === email)).toBe(false);
      // Exactly the most is fine (characters, not bytes: é is two in UTF-8).
      const most = await api('POST', '/v1/users', ws.owner, { email, role: 'agent', name: 'é'.repeat(MAX_USER_NAME_CHARS) });
      expect([most.status, most.body.user.name]).toEqual([201, 'é'.repeat(MAX_USER_NAME_CHARS)]);
    });
  });

  describe('given by the person', () => {
    it('accepting the invite: the sign-in answer has the name and the time zone the dashboard shows times in', async () => {
      const email = uniqueEmail('accepts');
      const made = await api('POST', '/v1/users', ws.owner, { email, role: 'agent', name: 'Given By Owner' });
      const set = await service.api('POST', '/v1/auth/password', { body: { invite: (made.body.invite_url as string).split('#')[1], password: PASSWORD, name: ' Ada  Lovelace ' } });
      expect(set.status).toBe(200);
      expect(set.body.user).toEqual({ id: made.body.user.id, email, name: 'Ada Lovelace', role: 'agent' });
      expect(set.body.workspace).toEqual({ id: ws.workspaceId, name: 'Acme', time_zone: 'Pacific/Auckland' });
      const login = await service.api('POST', '/v1/auth/login', { body: { email, password: PASSWORD } });
      expect(login.body.user.name).toBe('Ada Lovelace');
      expect(login.body.workspace.time_zone).toBe('Pacific/Auckland');
    });

    it('accepting the invite without a name keeps the one given with the invite', async () => {
      const made = await api('POST', '/v1/users', ws.owner, { email: uniqueEmail('keeps'), role: 'agent', name: 'Bo' });
      const set = await service.api('POST', '/v1/auth/password', { body: { invite: (made.body.invite_url as string).split('#')[1], password: PASSWORD } });
      expect(set.body.user.name).toBe('Bo');
    });

    it('later, on their own account (PATCH /v1/account), every role; GET /v1/workspace says who is asking with it', async () => {
      const me = await addUserWithToken(service, ws.owner, uniqueEmail('me'), 'agent');
      const changed = await api('PATCH', '/v1/account', me.token, { name: 'Noor' });
      expect([changed.status, changed.body.name]).toEqual([200, 'Noor']);
      expect((await api('GET', '/v1/workspace', me.token)).body.user).toMatchObject({ id: me.id, name: 'Noor', role: 'agent' });
      const long = await api('PATCH', '/v1/account', me.token, { name: 'x'.repeat(MAX_USER_NAME_CHARS + 1) });
      expect(long.status).toBe(400);
      expect((await api('GET', '/v1/workspace', me.token)).body.user.name).toBe('Noor');
      expect((await api('PATCH', '/v1/account', me.token, { name: '' })).body.name).toBeNull();
      expect((await api('GET', '/v1/workspace', me.token)).body.user.name).toBeNull();
      // Email and name at once; the email alone as before.
      const both = await api('PATCH', '/v1/account', me.token, { name: 'Noor B', email: uniqueEmail('noor') });
      expect([both.status, both.body.name]).toEqual([200, 'Noor B']);
      expect((await api('PATCH', '/v1/account', me.token, { email: uniqueEmail('noor') })).body.name).toBe('Noor B');
    });
  });

  describe('given by an owner or admin (PATCH /v1/users/{id})', () => {
    it("owners name anyone; admins agents and themselves, not an owner or another admin; agents nobody", async () => {
      const other = await addUserWithToken(service, ws.owner, uniqueEmail('admin'), 'admin');
      const ownerId = (await service.accounts.authenticate(ws.owner))!.userId;
      const rename = (token: string, id: string, name: string | null) => api('PATCH', `/v1/users/${id}`, token, { name });
      const byAdmin = await rename(ws.admin, ws.agentId, 'Agent Smith');
      expect([byAdmin.status, byAdmin.body.user]).toEqual([200, { id: ws.agentId, email: 'agent@acme.example', name: 'Agent Smith', role: 'agent' }]);
      expect((await rename(ws.admin, ws.adminId, 'Admin Self')).status).toBe(200);
      expect([(await rename(ws.admin, ownerId, 'Boss')).status, (await rename(ws.admin, other.id, 'Other')).status]).toEqual([403, 403]);
      expect((await rename(ws.agent, ws.agentId, 'Me')).status).toBe(403);
      expect((await rename(ws.owner, other.id, 'Other Admin')).status).toBe(200);
      const names = new Map((await usersOf(ws.owner)).map((u) => [u.id, u.name]));
      expect([names.get(ws.agentId), names.get(ws.adminId), names.get(ownerId), names.get(other.id)]).toEqual(['Agent Smith', 'Admin Self', null, 'Other Admin']);
      expect((await rename(ws.owner, ws.agentId, null)).body.user.name).toBeNull();
    });

    it("another workspace's user is not there (404); a body without a name or with more is 400", async () => {
      const elsewhere = await seedWorkspace(service, 'Elsewhere');
      expect((await api('PATCH', `/v1/users/${elsewhere.agentId}`, ws.owner, { name: 'Nope' })).status).toBe(404);
      expect((await api('PATCH', `/v1/users/${ws.agentId}`, ws.owner, {})).status).toBe(400);
      expect((await api('PATCH', `/v1/users/${ws.agentId}`, ws.owner, { name: 'A', role: 'owner' })).status).toBe(400);
    });
  });

  it('the database itself keeps names trimmed and at most 120 characters', async () => {
    const set = (name: string) => sql`update users set name = ${name} where id = ${ws.agentId}`.execute(get().db);
    await expect(set(' padded')).rejects.toThrow();
    await expect(set('')).rejects.toThrow();
    await expect(set('x'.repeat(121))).rejects.toThrow();
    await expect(set('Fine Name')).resolves.toBeDefined();
  });

  describe('the name is what customers and colleagues see', () => {
    let widgetKey = '';
    const widget = (method: string, path: string, body?: unknown, token?: string) =>
      service.api(method, path, { headers: { 'x-widget-key': widgetKey, origin: SHOP, ...(token ? { 'x-visitor-token': token } : {}) }, ...(body === undefined ? {} : { body }) });
    beforeAll(async () => {
      expect((await api('PUT', '/v1/webchat', ws.owner, { allowed_origins: [SHOP] })).status).toBe(200);
      widgetKey = (await api('GET', '/v1/keys/widget', ws.owner)).body.key as string;
      expect((await api('PATCH', `/v1/users/${ws.agentId}`, ws.owner, { name: 'Sam Jansen' })).status).toBe(200);
      expect((await api('PATCH', '/v1/account', ws.admin, { name: 'Ada' })).status).toBe(200);
    });

    it('in the chat (the line that a colleague joined, their messages), the session, the inbox, presence and notes', async () => {
      const started = await widget('POST', '/v1/webchat/conversations', { visitor_message: 'Can I return boots I wore once?', page_url: `${SHOP}/returns` });
      expect(started.status).toBe(201);
      const conversationId = started.body.conversation_id as string;
      const visitor = started.body.visitor_token as string;
      await widget('POST', `/v1/webchat/conversations/${conversationId}/escalate`, { message: 'A person please' }, visitor);
      await service.runtime.settled();
      const sessionId = (await get().db.selectFrom('sessions').select('id').where('external_id', '=', conversationId).executeTakeFirstOrThrow()).id;
      expect((await api('PUT', '/v1/me/presence', ws.agent, { status: 'available' })).status).toBe(200);
      expect((await api('POST', `/v1/sessions/${sessionId}/takeover`, ws.agent)).status).toBe(200);
      expect((await api('POST', `/v1/sessions/${sessionId}/messages`, ws.agent, { text: 'Hello, yes you can.' })).status).toBe(201);

      const chat = (await widget('GET', `/v1/webchat/conversations/${conversationId}/messages`, undefined, visitor)).body.messages as { from: string; text: string; agent_name?: string }[];
      expect(chat.map((m) => m.text)).toContain(phrase('agent_joined', 'en').replace('{name}', 'Sam Jansen'));
      expect(chat.at(-1)).toMatchObject({ from: 'agent', text: 'Hello, yes you can.', agent_name: 'Sam Jansen' });

      const one = (await api('GET', `/v1/sessions/${sessionId}`, ws.owner)).body;
      expect(one.agent).toEqual({ user_id: ws.agentId, email: 'agent@acme.example', name: 'Sam Jansen' });
      expect(one.assigned_to).toEqual({ user_id: ws.agentId, name: 'Sam Jansen' });
      expect(one.messages.at(-1).agent).toMatchObject({ name: 'Sam Jansen' });
      const listed = ((await api('GET', '/v1/sessions', ws.owner)).body.sessions as { id: string; agent: unknown; assigned_to: unknown }[]).find((s) => s.id === sessionId)!;
      expect([listed.agent, listed.assigned_to]).toEqual([expect.objectContaining({ name: 'Sam Jansen' }), { user_id: ws.agentId, name: 'Sam Jansen' }]);
      const row = ((await api('GET', '/v1/inbox?view=open', ws.admin)).body.conversations as { id: string; agent: unknown; assigned_to: unknown }[]).find((c) => c.id === sessionId)!;
      expect([row.agent, row.assigned_to]).toEqual([expect.objectContaining({ name: 'Sam Jansen' }), { user_id: ws.agentId, name: 'Sam Jansen' }]);
      const team = (await api('GET', '/v1/team/presence', ws.owner)).body.users as { id: string; name: string; status: string }[];
      expect(team.find((u) => u.id === ws.agentId)).toEqual({ id: ws.agentId, name: 'Sam Jansen', status: 'available' });
      // A user with no name is still named by their email.
      const ownerId = (await service.accounts.authenticate(ws.owner))!.userId;
      expect(team.find((u) => u.id === ownerId)?.name).toBe('Owner');

      // @mentions by the whole name; the notification names the author by theirs.
      const note = await api('POST', `/v1/sessions/${sessionId}/notes`, ws.admin, { text: 'Thanks @Sam Jansen, all good.' });
      expect(note.body.note).toMatchObject({ author: { user_id: ws.adminId, name: 'Ada' }, mentions: [{ user_id: ws.agentId, name: 'Sam Jansen' }] });
      const mentions = ((await api('GET', '/v1/notifications', ws.agent)).body.notifications as { kind: string; message: string }[]).filter((n) => n.kind === 'mention');
      expect(mentions.map((n) => n.message)).toContain('Ada mentioned you in a note: Thanks @Sam Jansen, all good.');
    });
  });
});
