/**
 * Tokens that end (docs/interfaces.md: Accounts and authorisation; README: Sign in; docs/reliability.md, "Limits per
 * token"): the creator of a user keeps no token of theirs, every token expires, a user lists and revokes their own,
 * a password set through an invite ends every other token, and removing a user or changing their role ends them all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/auth/tokens.ts';
import { MAX_TOKEN_TTL_SECONDS } from '../../src/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { addUserWithToken, seedWorkspace, startTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/service.ts';

const PASSWORD = 'correct horse battery staple';
let serial = 0;
const uniqueEmail = (what: string) => `${what}-${++serial}-${Date.now().toString(36)}@acme.example`;
const inviteOf = (url: string) => url.split('#')[1]!;

describeEachDatabase('tokens that end', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  const status = async (token: string) => (await service.api('GET', '/v1/sessions', { token })).status;
  /** A new user who set PASSWORD through their invite; their signed-in token and a script token they made. */
  const person = async (role: 'admin' | 'agent' = 'agent') => {
    const email = uniqueEmail(role);
    const made = await service.api('POST', '/v1/users', { token: ws.owner, body: { email, role } });
    expect(made.status).toBe(201);
    const set = await service.api('POST', '/v1/auth/password', { body: { invite: inviteOf(made.body.invite_url), password: PASSWORD } });
    expect(set.status).toBe(200);
    const script = await service.api('POST', '/v1/tokens', { token: set.body.token, body: { expires_in: 3600 } });
    expect(script.status).toBe(201);
    return { id: made.body.user.id as string, email, token: set.body.token as string, script: script.body.token as string };
  };

  beforeAll(async () => {
    service = await startTestService(get(), { PUBLIC_URL: 'https://botlink.example' });
    ws = await seedWorkspace(service);
  });
  afterAll(() => service.stop());

  describe('the creator of a user', () => {
    it('gets the invite link and no token: no token of the new user exists until they use the link', async () => {
      const made = await service.api('POST', '/v1/users', { token: ws.admin, body: { email: uniqueEmail('copy'), role: 'agent' } });
      expect(made.status).toBe(201);
      expect(Object.keys(made.body).sort()).toEqual(['invite_emailed', 'invite_url', 'user']);
      const tokens = await get().db.selectFrom('tokens').select('id').where('user_id', '=', made.body.user.id).execute();
      expect(tokens).toEqual([]);
      // The admin who added them is removed: nothing of the new user's was ever theirs to keep acting with.
      const set = await service.api('POST', '/v1/auth/password', { body: { invite: inviteOf(made.body.invite_url), password: PASSWORD } });
      expect(set.status).toBe(200);
      expect(await get().db.selectFrom('tokens').select('id').where('user_id', '=', made.body.user.id).execute()).toHaveLength(1);
    });
  });

  describe('every token expires', () => {
    it('POST /v1/tokens without expires_in: the longest lifetime, from a signed-in (30-day) token too', async () => {
      const user = await person();
      const minted = await service.api('POST', '/v1/tokens', { token: user.token });
      expect(minted.status).toBe(201);
      const lifetime = (Date.parse(minted.body.expires_at) - Date.now()) / 1000;
      expect(lifetime).toBeGreaterThan(MAX_TOKEN_TTL_SECONDS - 60);
      expect(lifetime).toBeLessThanOrEqual(MAX_TOKEN_TTL_SECONDS);
      const longer = await service.api('POST', '/v1/tokens', { token: user.token, body: { expires_in: MAX_TOKEN_TTL_SECONDS + 1 } });
      expect(longer.status).toBe(400);
    });

    it('no live token anywhere lacks an expiry or outlives the longest lifetime (workspace owner, operator and users)', async () => {
      const restored = await service.api('POST', `/v1/admin/workspaces/${ws.workspaceId}/owners`, { token: TEST_ADMIN_TOKEN, body: { email: uniqueEmail('rescuer') } });
      expect(restored.status).toBe(201);
      await person();
      const rows = await get().db.selectFrom('tokens').select(['expires_at', 'created_at']).where('revoked_at', 'is', null).execute();
      expect(rows.length).toBeGreaterThan(5);
      for (const row of rows) {
        expect(row.expires_at).not.toBeNull();
        expect(new Date(row.expires_at!).getTime() - new Date(row.created_at).getTime()).toBeLessThanOrEqual(MAX_TOKEN_TTL_SECONDS * 1000 + 5_000);
      }
    });

    it('a token an older engine wrote without an expiry counts as expiring the longest lifetime after it was made', async () => {
      const user = await person();
      const hash = hashToken(user.script);
      await get().db.updateTable('tokens').set({ expires_at: null }).where('token_hash', '=', hash).execute();
      expect(await status(user.script)).toBe(200);
      await get().db.updateTable('tokens').set({ created_at: new Date(Date.now() - (MAX_TOKEN_TTL_SECONDS + 60) * 1000) }).where('token_hash', '=', hash).execute();
      expect(await status(user.script)).toBe(401);
    });
  });

  describe('a user and their own tokens', () => {
    it('GET /v1/tokens lists the live ones (never the token), marking the current one', async () => {
      const user = await person();
      const listed = await service.api('GET', '/v1/tokens', { token: user.script });
      expect(listed.status).toBe(200);
      expect(listed.headers.get('cache-control')).toBe('no-store');
      expect(listed.body.tokens).toHaveLength(2);
      expect(listed.body.tokens.map((t: { sign_in: boolean; current: boolean }) => [t.sign_in, t.current])).toEqual([
        [false, true],
        [true, false],
      ]);
      expect(listed.text).not.toContain(user.script);
      expect(listed.text).not.toContain(hashToken(user.script));
    });

    it('DELETE /v1/tokens/{id} revokes one of their own; another user\'s token id is 404 and keeps working', async () => {
      const user = await person();
      const other = await person();
      const mine = (await service.api('GET', '/v1/tokens', { token: user.script })).body.tokens as { id: string; sign_in: boolean }[];
      const signedIn = mine.find((t) => t.sign_in)!;
      expect((await service.api('DELETE', `/v1/tokens/${signedIn.id}`, { token: user.script })).status).toBe(204);
      expect(await status(user.token)).toBe(401);
      expect(await status(user.script)).toBe(200);
      const theirs = (await service.api('GET', '/v1/tokens', { token: other.script })).body.tokens as { id: string }[];
      for (const t of theirs) expect((await service.api('DELETE', `/v1/tokens/${t.id}`, { token: user.script })).status).toBe(404);
      expect(await status(other.token)).toBe(200);
      expect(await status(other.script)).toBe(200);
      // DELETE /v1/tokens/current still means the token of the request.
      expect((await service.api('DELETE', '/v1/tokens/current', { token: user.script })).status).toBe(204);
      expect(await status(user.script)).toBe(401);
    });
  });

  describe('revocation', () => {
    it("a password set through an invite (a reset) revokes every other token of the user's", async () => {
      const user = await person();
      const minted = await service.api('POST', '/v1/tokens', { token: user.token });
      const reset = await service.api('POST', `/v1/users/${user.id}/invite`, { token: ws.owner });
      const set = await service.api('POST', '/v1/auth/password', { body: { invite: inviteOf(reset.body.invite_url), password: 'a brand new passphrase' } });
      expect(set.status).toBe(200);
      expect([await status(user.token), await status(user.script), await status(minted.body.token)]).toEqual([401, 401, 401]);
      expect(await status(set.body.token)).toBe(200);
    });

    it("removing a user ends every token of theirs: signed in, scripts', the operator's", async () => {
      const user = await person('admin');
      const byOperator = await service.accounts.issueToken(await service.accounts.userByEmail(ws.workspaceId, user.email));
      const signedIn = await service.api('POST', '/v1/auth/login', { body: { email: user.email, password: PASSWORD } });
      expect(signedIn.status).toBe(200);
      const tokens = [user.token, user.script, byOperator.token, signedIn.body.token as string];
      for (const token of tokens) expect(await status(token)).toBe(200);
      expect((await service.api('DELETE', `/v1/users/${user.id}`, { token: ws.owner })).status).toBe(204);
      for (const token of tokens) expect(await status(token)).toBe(401);
    });

    it('a role change (the operator restores an owner) ends every token the user held as before', async () => {
      const user = await addUserWithToken(service, ws.owner, uniqueEmail('promoted'), 'agent');
      expect(await status(user.token)).toBe(200);
      const email = (await service.accounts.authenticate(user.token))!.email;
      const promoted = await service.api('POST', `/v1/admin/workspaces/${ws.workspaceId}/owners`, { token: TEST_ADMIN_TOKEN, body: { email } });
      expect(promoted.status).toBe(201);
      expect(promoted.body.owner.created).toBe(false);
      expect(await status(user.token)).toBe(401);
      expect((await service.api('GET', '/v1/users', { token: promoted.body.owner.token })).status).toBe(200);
    });
  });

  describe('answers that carry a secret', () => {
    it('are never cached (Cache-Control: no-store): new users, tokens, keys, the operator', async () => {
      const answers = [
        await service.api('POST', '/v1/users', { token: ws.owner, body: { email: uniqueEmail('nostore'), role: 'agent' } }),
        await service.api('POST', '/v1/tokens', { token: ws.owner }),
        await service.api('POST', '/v1/keys/sync', { token: ws.owner }),
        await service.api('GET', '/v1/keys/widget', { token: ws.owner }),
        await service.api('POST', '/v1/admin/workspaces', { token: TEST_ADMIN_TOKEN, body: { name: 'NoStore', owner_email: uniqueEmail('nostore-owner') } }),
        await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: 'https://127.0.0.1:9/botlink/channel' } }),
        await service.api('POST', '/v1/integration/key', { token: ws.owner, body: {} }),
      ];
      for (const answer of answers) {
        expect(answer.status).toBeLessThan(300);
        expect(answer.headers.get('cache-control')).toBe('no-store');
      }
    });
  });
});
