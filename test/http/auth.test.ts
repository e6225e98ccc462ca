/**
 * Signing in for people (docs/interfaces.md: Pages and tools for people; README: Sign in): an invite link sets a password
 * once, email and password give a token, failures say nothing about which part was wrong and slow down, signing out
 * revokes the token.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_FAILURES_PER_ACCOUNT, LOGIN_FAILURES_PER_ADDRESS, MAX_TOKENS_PER_USER } from '../../src/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/service.ts';

const PUBLIC_URL = 'https://botlink.example';
const WRONG = 'The email or password is not right.';
const PASSWORD = 'correct horse battery staple';

let serial = 0;
const uniqueEmail = (what: string) => `${what}-${++serial}-${Date.now().toString(36)}@acme.example`;
const inviteOf = (url: string) => url.split('#')[1]!;

/** A new agent of the workspace who has set PASSWORD through their invite link. */
async function userWithPassword(service: TestService, owner: string, email = uniqueEmail('user'), password = PASSWORD) {
  const made = await service.api('POST', '/v1/users', { token: owner, body: { email, role: 'agent' } });
  expect(made.status).toBe(201);
  const set = await service.api('POST', '/v1/auth/password', { body: { invite: inviteOf(made.body.invite_url), password } });
  expect(set.status).toBe(200);
  // A token for a script, made by the user (POST /v1/users answers none).
  const script = await service.api('POST', '/v1/tokens', { token: set.body.token });
  expect(script.status).toBe(201);
  return { id: made.body.user.id as string, email, token: set.body.token as string, scriptToken: script.body.token as string };
}

const login = (service: TestService, body: object) => service.api('POST', '/v1/auth/login', { body });

/** A login sent from another loopback address (Linux answers on all of 127.0.0.0/8), for the per-address limit. */
function loginFrom(service: TestService, localAddress: string, body: object): Promise<{ status: number; retryAfter: string | undefined; body: { error?: { message: string } } }> {
  const { hostname, port } = new URL(service.url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, localAddress, method: 'POST', path: '/v1/auth/login', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body: JSON.parse(text) as { error?: { message: string } } }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describeEachDatabase('signing in', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    service = await startTestService(get(), { PUBLIC_URL });
    ws = await seedWorkspace(service);
  });
  afterAll(() => service.stop());

  describe('invite links', () => {
    it('come with a new user, as a fragment of the dashboard URL', async () => {
      const made = await service.api('POST', '/v1/users', { token: ws.owner, body: { email: uniqueEmail('new'), role: 'agent' } });
      expect(made.status).toBe(201);
      expect(made.body.invite_url).toMatch(/^https:\/\/botlink\.example\/dashboard\/invite#bli_[A-Za-z0-9_-]{43}$/);
      // No token for the creator to keep: the person comes in through the link.
      expect(made.body).not.toHaveProperty('token');
    });

    it('set the password and sign the user in, once', async () => {
      const email = uniqueEmail('once');
      const made = await service.api('POST', '/v1/users', { token: ws.owner, body: { email, role: 'admin' } });
      const invite = inviteOf(made.body.invite_url);
      const set = await service.api('POST', '/v1/auth/password', { body: { invite, password: PASSWORD } });
      expect(set.status).toBe(200);
      expect(set.body).toEqual({
        token: expect.stringMatching(/^blt_/),
        expires_at: expect.any(String),
        user: { id: made.body.user.id, email, name: null, role: 'admin' },
        workspace: { id: ws.workspaceId, name: 'Acme', time_zone: null },
      });
      expect(set.headers.get('cache-control')).toBe('no-store');
      expect((await service.api('GET', '/v1/users', { token: set.body.token })).status).toBe(200);

      const again = await service.api('POST', '/v1/auth/password', { body: { invite, password: 'another password entirely' } });
      expect(again.status).toBe(410);
      expect(again.body.error.message).toContain('already used');
      // The first password still holds.
      expect((await login(service, { email, password: PASSWORD })).status).toBe(200);
      expect((await login(service, { email, password: 'another password entirely' })).status).toBe(401);
    });

    it('used twice at once: one sets the password, the other is 410', async () => {
      const made = await service.api('POST', '/v1/users', { token: ws.owner, body: { email: uniqueEmail('race'), role: 'agent' } });
      const invite = inviteOf(made.body.invite_url);
      const answers = await Promise.all(['first password here', 'second password here'].map((password) => service.api('POST', '/v1/auth/password', { body: { invite, password } })));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 410]);
    });

    it('GET /v1/users says who has set a password', async () => {
      const invited = await service.api('POST', '/v1/users', { token: ws.owner, body: { email: uniqueEmail('pending'), role: 'agent' } });
      const done = await userWithPassword(service, ws.owner);
      const users = (await service.api('GET', '/v1/users', { token: ws.owner })).body.users as { id: string; password_set: boolean }[];
      expect(users.find((u) => u.id === invited.body.user.id)?.password_set).toBe(false);
      expect(users.find((u) => u.id === done.id)?.password_set).toBe(true);
      expect(JSON.stringify(users)).not.toContain('scrypt');
    });

    it('expire after 7 days', async () => {
      const made = await service.api('POST', '/v1/users', { token: ws.owner, body: { email: uniqueEmail('late'), role: 'agent' } });
      const invite = await service.api('POST', `/v1/users/${made.body.user.id}/invite`, { token: ws.owner });
      expect(invite.status).toBe(201);
      expect(new Date(invite.body.expires_at).getTime() - Date.now()).toBeGreaterThan(7 * 24 * 3600_000 - 60_000);
      await get().db.updateTable('invites').set({ expires_at: new Date(Date.now() - 1000) }).where('user_id', '=', made.body.user.id).where('used_at', 'is', null).execute();
      const res = await service.api('POST', '/v1/auth/password', { body: { invite: inviteOf(invite.body.invite_url), password: PASSWORD } });
      expect(res.status).toBe(410);
      expect(res.body.error.code).toBe('gone');
      expect(res.body.error.message).toContain('expired');
    });

    it('a new link for a user replaces the older unused one', async () => {
      const made = await service.api('POST', '/v1/users', { token: ws.admin, body: { email: uniqueEmail('again'), role: 'agent' } });
      const newer = await service.api('POST', `/v1/users/${made.body.user.id}/invite`, { token: ws.admin });
      expect(newer.status).toBe(201);
      const old = await service.api('POST', '/v1/auth/password', { body: { invite: inviteOf(made.body.invite_url), password: PASSWORD } });
      expect(old.status).toBe(410);
      expect(old.body.error.message).toContain('replaced by a newer one');
      expect((await service.api('POST', '/v1/auth/password', { body: { invite: inviteOf(newer.body.invite_url), password: PASSWORD } })).status).toBe(200);
    });

    it('an unknown invite is 404, and a removed user cannot use theirs', async () => {
      const unknown = await service.api('POST', '/v1/auth/password', { body: { invite: 'bli_nothing-like-this', password: PASSWORD } });
      expect(unknown.status).toBe(404);
      const made = await service.api('POST', '/v1/users', { token: ws.owner, body: { email: uniqueEmail('gone'), role: 'agent' } });
      expect((await service.api('DELETE', `/v1/users/${made.body.user.id}`, { token: ws.owner })).status).toBe(204);
      expect((await service.api('POST', '/v1/auth/password', { body: { invite: inviteOf(made.body.invite_url), password: PASSWORD } })).status).toBe(410);
    });

    it("only an owner may make an owner's or an admin's link (it sets their password); admins make agents'; agents make none", async () => {
      const users = await service.api('GET', '/v1/users', { token: ws.owner });
      const ownerId = users.body.users.find((u: { role: string }) => u.role === 'owner').id as string;
      expect((await service.api('POST', `/v1/users/${ownerId}/invite`, { token: ws.admin })).status).toBe(403);
      // Another admin: an admin cannot take over a fellow admin's account with a link.
      const otherAdmin = await service.api('POST', '/v1/users', { token: ws.owner, body: { email: uniqueEmail('admin'), role: 'admin' } });
      const refused = await service.api('POST', `/v1/users/${otherAdmin.body.user.id}/invite`, { token: ws.admin });
      expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
      expect((await service.api('POST', `/v1/users/${ws.adminId}/invite`, { token: ws.admin })).status).toBe(403);
      expect((await service.api('POST', `/v1/users/${ws.agentId}/invite`, { token: ws.agent })).status).toBe(403);
      expect((await service.api('POST', `/v1/users/${ws.agentId}/invite`, { token: ws.admin })).status).toBe(201);
      expect((await service.api('POST', `/v1/users/${otherAdmin.body.user.id}/invite`, { token: ws.owner })).status).toBe(201);
      expect((await service.api('POST', `/v1/users/${ownerId}/invite`, { token: ws.owner })).status).toBe(201);
    });

    it('record who made them: the owner or admin, or null for the operator', async () => {
      const made = await service.api('POST', '/v1/users', { token: ws.admin, body: { email: uniqueEmail('recorded'), role: 'agent' } });
      const again = await service.api('POST', `/v1/users/${made.body.user.id}/invite`, { token: ws.owner });
      expect(again.status).toBe(201);
      const rows = await get().db.selectFrom('invites').select(['created_by', 'created_at']).where('user_id', '=', made.body.user.id).orderBy('created_at').execute();
      expect(rows.map((r) => r.created_by)).toEqual([ws.adminId, (await service.accounts.authenticate(ws.owner))!.userId]);
      const created = await service.api('POST', '/v1/admin/workspaces', { token: TEST_ADMIN_TOKEN, body: { name: 'Delta', owner_email: 'o@delta.example' } });
      const byOperator = await get().db.selectFrom('invites').select('created_by').where('user_id', '=', (await service.accounts.authenticate(created.body.owner.token))!.userId).execute();
      expect(byOperator).toEqual([{ created_by: null }]);
    });

    it("another workspace's user is not there (404)", async () => {
      const other = await seedWorkspace(service, 'Other');
      expect((await service.api('POST', `/v1/users/${other.agentId}/invite`, { token: ws.owner })).status).toBe(404);
    });

    it('come with a new workspace and a restored owner (operator)', async () => {
      const created = await service.api('POST', '/v1/admin/workspaces', { token: TEST_ADMIN_TOKEN, body: { name: 'Gamma', owner_email: 'o@gamma.example' } });
      expect(created.body.owner.invite_url).toMatch(/^https:\/\/botlink\.example\/dashboard\/invite#bli_/);
      const restored = await service.api('POST', `/v1/admin/workspaces/${created.body.workspace.id}/owners`, { token: TEST_ADMIN_TOKEN, body: { email: 'o@gamma.example' } });
      expect(restored.status).toBe(201);
      expect(restored.body.owner.invite_url).toMatch(/#bli_/);
      // The restored owner's link is the live one; the first was replaced.
      expect((await service.api('POST', '/v1/auth/password', { body: { invite: inviteOf(created.body.owner.invite_url), password: PASSWORD } })).status).toBe(410);
      const set = await service.api('POST', '/v1/auth/password', { body: { invite: inviteOf(restored.body.owner.invite_url), password: PASSWORD } });
      expect(set.body.user.role).toBe('owner');
    });
  });

  describe('password rules', () => {
    let invite: string;
    beforeAll(async () => {
      const made = await service.api('POST', '/v1/users', { token: ws.owner, body: { email: uniqueEmail('rules'), role: 'agent' } });
      invite = inviteOf(made.body.invite_url);
    });
    const setPassword = (password: string) => service.api('POST', '/v1/auth/password', { body: { invite, password } });

    it('at least 10 characters, counted as characters, not UTF-16 units', async () => {
      const short = await setPassword('123456789');
      expect(short.status).toBe(400);
      expect(short.body.error.message).toBe('password must NOT have fewer than 10 characters.');
      expect((await setPassword('😀'.repeat(9))).status).toBe(400);
    });

    it('at most 200 characters', async () => {
      const long = await setPassword('x'.repeat(201));
      expect(long.status).toBe(400);
      expect(long.body.error.message).toBe('password must NOT have more than 200 characters.');
    });

    it('not only whitespace', async () => {
      const blank = await setPassword(' \t'.repeat(6));
      expect(blank.status).toBe(400);
      expect(blank.body.error.message).toBe('The password may not be only spaces or other whitespace.');
      expect(blank.body.error.details).toEqual([{ field: 'password', message: blank.body.error.message }]);
    });

    it('a refused password leaves the invite unused', async () => {
      expect((await setPassword('😀'.repeat(10))).status).toBe(200);
    });
  });

  describe('email and password', () => {
    it('give a new token of the user, in their workspace', async () => {
      const user = await userWithPassword(service, ws.owner);
      const res = await login(service, { email: user.email.toUpperCase(), password: PASSWORD });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        token: expect.stringMatching(/^blt_/),
        expires_at: expect.any(String),
        user: { id: user.id, email: user.email, name: null, role: 'agent' },
        workspace: { id: ws.workspaceId, name: 'Acme', time_zone: null },
      });
      expect(new Date(res.body.expires_at).getTime() - Date.now()).toBeGreaterThan(29 * 24 * 3600_000);
      expect(res.body.token).not.toBe(user.token);
      expect((await service.api('GET', '/v1/sessions', { token: res.body.token })).status).toBe(200);
    });

    it('a wrong password and an unknown email get the same 401, in about the same time', async () => {
      const user = await userWithPassword(service, ws.owner);
      const wrong = await login(service, { email: user.email, password: 'not the password' });
      const unknown = await login(service, { email: uniqueEmail('nobody'), password: PASSWORD });
      const noPassword = await login(service, { email: `admin@acme.example`, password: PASSWORD });
      for (const res of [wrong, unknown, noPassword]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: { code: 'unauthorized', message: WRONG } });
      }
      // An unknown email costs a password hash too (timing); measured against a wrong password, generously.
      const time = async (body: object) => {
        const started = performance.now();
        await login(service, body);
        return performance.now() - started;
      };
      const wrongTimes: number[] = [];
      const unknownTimes: number[] = [];
      for (let i = 0; i < 3; i++) {
        wrongTimes.push(await time({ email: user.email, password: `wrong ${i}` }));
        unknownTimes.push(await time({ email: uniqueEmail('nobody'), password: PASSWORD }));
      }
      expect(median(unknownTimes)).toBeGreaterThan(median(wrongTimes) / 3);
    });

    it('an email in several workspaces: 409 naming them, then workspace_id chooses', async () => {
      const email = uniqueEmail('twice');
      const other = await seedWorkspace(service, 'Second');
      await userWithPassword(service, ws.owner, email);
      await userWithPassword(service, other.owner, email);
      const both = await login(service, { email, password: PASSWORD });
      expect(both.status).toBe(409);
      expect(both.body.error.details.workspaces).toEqual(
        expect.arrayContaining([
          { id: ws.workspaceId, name: 'Acme' },
          { id: other.workspaceId, name: 'Second' },
        ]),
      );
      const chosen = await login(service, { email, password: PASSWORD, workspace_id: other.workspaceId });
      expect(chosen.status).toBe(200);
      expect(chosen.body.workspace).toEqual({ id: other.workspaceId, name: 'Second', time_zone: null });
      // A wrong password says no more than for one workspace.
      expect((await login(service, { email, password: 'not the password' })).body.error.message).toBe(WRONG);
    });

    it('an email in several workspaces with different passwords: the password chooses', async () => {
      const email = uniqueEmail('two-passwords');
      const other = await seedWorkspace(service, 'Third');
      await userWithPassword(service, ws.owner, email);
      await userWithPassword(service, other.owner, email, 'a different password');
      const res = await login(service, { email, password: 'a different password' });
      expect(res.status).toBe(200);
      expect(res.body.workspace.id).toBe(other.workspaceId);
    });

    it(`still works at the limit of ${MAX_TOKENS_PER_USER} live tokens: the oldest made by signing in goes, else the oldest`, async () => {
      const user = await userWithPassword(service, ws.owner);
      const live = (token: string) => service.api('GET', '/v1/sessions', { token }).then((r) => r.status);
      // The one of the invite (signed in) and the user's first script token (the oldest script's); fill up to the limit.
      for (let i = 2; i < MAX_TOKENS_PER_USER; i++) expect((await service.api('POST', '/v1/tokens', { token: user.scriptToken })).status).toBe(201);
      expect((await service.api('POST', '/v1/tokens', { token: user.scriptToken })).status).toBe(409);

      const first = await login(service, { email: user.email, password: PASSWORD });
      expect(first.status).toBe(200);
      expect(await live(user.token)).toBe(401);
      expect(await live(user.scriptToken)).toBe(200);
      expect(await live(first.body.token)).toBe(200);
      expect((await service.api('POST', '/v1/tokens', { token: first.body.token })).status).toBe(409);

      // Only scripts' tokens left at the limit: the oldest of them goes.
      expect((await service.api('DELETE', '/v1/tokens/current', { token: first.body.token })).status).toBe(204);
      expect((await service.api('POST', '/v1/tokens', { token: user.scriptToken })).status).toBe(201);
      const second = await login(service, { email: user.email, password: PASSWORD });
      expect(second.status).toBe(200);
      expect(await live(user.scriptToken)).toBe(401);
      expect(await live(second.body.token)).toBe(200);
      const counted = await get()
        .db.selectFrom('tokens')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('user_id', '=', user.id)
        .where('revoked_at', 'is', null)
        .executeTakeFirstOrThrow();
      expect(Number(counted.n)).toBe(MAX_TOKENS_PER_USER);
    });

    it('signing out (DELETE /v1/tokens/current) revokes the token', async () => {
      const user = await userWithPassword(service, ws.owner);
      const signedIn = await login(service, { email: user.email, password: PASSWORD });
      expect((await service.api('DELETE', '/v1/tokens/current', { token: signedIn.body.token })).status).toBe(204);
      expect((await service.api('GET', '/v1/sessions', { token: signedIn.body.token })).status).toBe(401);
      // Only that token: the user's others still work.
      expect((await service.api('GET', '/v1/sessions', { token: user.token })).status).toBe(200);
    });

    it('a body that is not an email and a password is 400, naming the field', async () => {
      const res = await login(service, { email: 'not an email', password: PASSWORD });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'email' })]);
    });
  });
});

describeEachDatabase('failed sign-ins slow down', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    service = await startTestService(get(), { PUBLIC_URL });
    ws = await seedWorkspace(service);
  });
  afterAll(() => service.stop());

  it(`per account: after ${LOGIN_FAILURES_PER_ACCOUNT} failures, 429 with Retry-After, from any address, even with the right password`, async () => {
    const user = await userWithPassword(service, ws.owner);
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT; i++) expect((await login(service, { email: user.email, password: `guess ${i}` })).status).toBe(401);
    const blocked = await login(service, { email: user.email, password: PASSWORD });
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe('rate_limited');
    expect(Number(blocked.headers.get('retry-after'))).toBe(1);
    expect((await loginFrom(service, '127.0.0.2', { email: user.email, password: PASSWORD })).status).toBe(429);
    // Another account from the same address is not held up.
    const other = await userWithPassword(service, ws.owner);
    expect((await login(service, { email: other.email, password: PASSWORD })).status).toBe(200);

    // After the wait, one more try; a further failure waits twice as long.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await login(service, { email: user.email, password: 'guess again' })).status).toBe(401);
    const longer = await login(service, { email: user.email, password: PASSWORD });
    expect(longer.status).toBe(429);
    expect(Number(longer.headers.get('retry-after'))).toBe(2);
  });

  it('an unknown email is held up the same way (the answer tells nothing)', async () => {
    const email = uniqueEmail('nobody');
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT; i++) expect((await loginFrom(service, '127.0.0.3', { email, password: `guess ${i}` })).status).toBe(401);
    expect((await loginFrom(service, '127.0.0.3', { email, password: PASSWORD })).status).toBe(429);
  });

  it('a success clears the account\'s count', async () => {
    const user = await userWithPassword(service, ws.owner);
    for (let round = 0; round < 2; round++) {
      for (let i = 1; i < LOGIN_FAILURES_PER_ACCOUNT; i++) expect((await loginFrom(service, '127.0.0.4', { email: user.email, password: `guess ${i}` })).status).toBe(401);
      expect((await loginFrom(service, '127.0.0.4', { email: user.email, password: PASSWORD })).status).toBe(200);
    }
  });

  it(`per address: after ${LOGIN_FAILURES_PER_ADDRESS} failures from one address, every email waits there, and only there`, async () => {
    const user = await userWithPassword(service, ws.owner);
    for (let i = 0; i < LOGIN_FAILURES_PER_ADDRESS; i++) {
      expect((await loginFrom(service, '127.0.0.5', { email: uniqueEmail('spray'), password: PASSWORD })).status).toBe(401);
    }
    const blocked = await loginFrom(service, '127.0.0.5', { email: user.email, password: PASSWORD });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(blocked.body.error?.message).toMatch(/^Too many failed sign-ins; try again in \d+ seconds?\.$/);
    expect((await loginFrom(service, '127.0.0.6', { email: user.email, password: PASSWORD })).status).toBe(200);
  });
});
