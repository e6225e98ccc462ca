/**
 * The "at most one" and revocation rules of accounts under concurrency and over time:
 * a workspace always keeps an owner, one email is one user, a revoked or expired token ends its open live streams on
 * every process within seconds, and one token holds bounded resources.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TOKENS_PER_USER } from '../../src/limits.ts';
import { hashToken } from '../../src/auth/tokens.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { addUserWithToken, seedWorkspace, startTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/service.ts';

const RECHECK_MS = 150;

/** Opens a live stream and collects its text until it ends. */
async function openStream(service: TestService, sessionId: string, token: string) {
  const res = await fetch(`${service.url}/v1/sessions/${sessionId}/events`, { headers: { authorization: `Bearer ${token}` } });
  let text = '';
  const ended = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    for await (const chunk of res.body) text += decoder.decode(chunk as Uint8Array, { stream: true });
  })().catch(() => {});
  return { status: res.status, text: () => text, ended };
}

function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  return Promise.race([promise, new Promise<'timeout'>((resolve) => setTimeout(resolve, ms, 'timeout'))]);
}

describeEachDatabase('account guarantees', (get) => {
  let service: TestService;
  let second: TestService;

  beforeAll(async () => {
    const streams = { recheckMs: RECHECK_MS, maxPerUser: 2, maxPerWorkspace: 5 };
    service = await startTestService(get(), {}, { streams });
    // A second process on the same database (PGlite: same database object), as behind a load balancer.
    second = await startTestService(get(), {}, { streams });
  });
  afterAll(async () => {
    await second.stop();
    await service.stop();
  });

  describe('the last owner', () => {
    it('two owners removing each other at the same moment leave exactly one owner, five times in a row', async () => {
      for (let round = 0; round < 5; round++) {
        const ws = await seedWorkspace(service, `Duel${round}`);
        const other = await addUserWithToken(service, ws.owner, `second@duel${round}.example`, 'owner');
        const users = (await service.api('GET', '/v1/users', { token: ws.owner })).body.users as { id: string; email: string }[];
        const firstId = users.find((u) => u.email.startsWith('owner@'))!.id;
        const [a, b] = await Promise.all([
          service.api('DELETE', `/v1/users/${other.id}`, { token: ws.owner }),
          second.api('DELETE', `/v1/users/${firstId}`, { token: other.token }),
        ]);
        expect([a.status, b.status].filter((s) => s === 204)).toHaveLength(1);
        for (const s of [a.status, b.status]) expect([204, 401, 409]).toContain(s);
        const owners = await get().db.selectFrom('users').select('id').where('workspace_id', '=', ws.workspaceId).where('role', '=', 'owner').where('revoked_at', 'is', null).execute();
        expect(owners).toHaveLength(1);
      }
    });

    it('an operator restores an owner of a workspace that has none; the token works as an owner', async () => {
      const ws = await seedWorkspace(service, 'Orphan');
      await get().db.updateTable('users').set({ revoked_at: new Date() }).where('workspace_id', '=', ws.workspaceId).where('role', '=', 'owner').execute();
      expect((await service.api('GET', '/v1/users', { token: ws.owner })).status).toBe(401);

      const path = `/v1/admin/workspaces/${ws.workspaceId}/owners`;
      expect((await service.api('POST', path, { token: ws.admin, body: { email: 'new@orphan.example' } })).status).toBe(401);
      const restored = await service.api('POST', path, { token: TEST_ADMIN_TOKEN, body: { email: 'new@orphan.example' } });
      expect(restored.status).toBe(201);
      expect(restored.body.owner).toMatchObject({ email: 'new@orphan.example', created: true });
      const asOwner = await service.api('POST', '/v1/users', { token: restored.body.owner.token, body: { email: 'third@orphan.example', role: 'owner' } });
      expect(asOwner.status).toBe(201);

      // An existing user (the admin) is promoted rather than duplicated.
      const promoted = await service.api('POST', path, { token: TEST_ADMIN_TOKEN, body: { email: 'admin@orphan.example' } });
      expect(promoted.body.owner.created).toBe(false);
      const roles = (await service.api('GET', '/v1/users', { token: restored.body.owner.token })).body.users.map((u: { email: string; role: string }) => `${u.email}:${u.role}`);
      expect(roles).toContain('admin@orphan.example:owner');
      expect((await service.api('POST', '/v1/admin/workspaces/00000000-0000-4000-8000-000000000000/owners', { token: TEST_ADMIN_TOKEN, body: { email: 'x@y.example' } })).status).toBe(404);
    });
  });

  describe('one email, one user', () => {
    it('two POST /v1/users with the same email at once: one 201, one 409, never a 500', async () => {
      const ws = await seedWorkspace(service, 'Twins');
      for (let round = 0; round < 5; round++) {
        const body = { email: `twin${round}@twins.example`, role: 'agent' };
        const results = await Promise.all([service.api('POST', '/v1/users', { token: ws.owner, body }), second.api('POST', '/v1/users', { token: ws.owner, body })]);
        expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
        expect(results.find((r) => r.status === 409)!.body.error.code).toBe('conflict');
      }
    });
  });

  describe('tokens', () => {
    it(`a user holds at most ${MAX_TOKENS_PER_USER} live tokens; revoking one makes room`, async () => {
      const ws = await seedWorkspace(service, 'Hoarder');
      const tokens: string[] = [];
      // The agent holds one token already.
      for (let i = 1; i < MAX_TOKENS_PER_USER; i++) {
        const res = await service.api('POST', '/v1/tokens', { token: ws.agent });
        expect(res.status).toBe(201);
        tokens.push(res.body.token);
      }
      const over = await service.api('POST', '/v1/tokens', { token: ws.agent });
      expect(over.status).toBe(409);
      expect(over.body.error.message).toContain(String(MAX_TOKENS_PER_USER));
      expect((await service.api('DELETE', '/v1/tokens/current', { token: tokens[0] })).status).toBe(204);
      expect((await service.api('POST', '/v1/tokens', { token: ws.agent })).status).toBe(201);
    });

    it('a token may be given an expiry; once past it, the token is refused', async () => {
      const ws = await seedWorkspace(service, 'Expiry');
      const res = await service.api('POST', '/v1/tokens', { token: ws.agent, body: { expires_in: 3600 } });
      expect(res.status).toBe(201);
      expect(Date.parse(res.body.expires_at) - Date.now()).toBeGreaterThan(3_500_000);
      expect((await service.api('GET', '/v1/sessions', { token: res.body.token })).status).toBe(200);
      await get().db.updateTable('tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('token_hash', '=', hashToken(res.body.token)).execute();
      expect((await service.api('GET', '/v1/sessions', { token: res.body.token })).status).toBe(401);
      expect((await service.api('POST', '/v1/tokens', { token: ws.agent, body: { expires_in: 1 } })).status).toBe(400);
    });
  });

  describe('live streams', () => {
    it('end within seconds when their token is revoked, their user removed, on this and on another process', async () => {
      const ws = await seedWorkspace(service, 'Streams');
      const { sessionId } = await service.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'webchat', externalId: '6a3c1d8e-3b7e-4d8f-9a51-0b2f7c4d5e61', text: 'hello', language: 'en' });

      // DELETE /v1/tokens/current on the other process ends the stream on this one.
      const token = (await service.api('POST', '/v1/tokens', { token: ws.agent })).body.token as string;
      const viaToken = await openStream(service, sessionId, token);
      expect(viaToken.status).toBe(200);
      expect((await second.api('DELETE', '/v1/tokens/current', { token })).status).toBe(204);
      expect(await within(viaToken.ended, 10 * RECHECK_MS + 2_000)).not.toBe('timeout');
      expect(viaToken.text()).toContain('event: end\ndata: {"reason":"token_revoked"}');

      // DELETE /v1/users/{id} ends every stream of that user.
      const added = await addUserWithToken(service, ws.owner, 'watcher@streams.example', 'agent');
      const a = await openStream(second, sessionId, added.token);
      const b = await openStream(service, sessionId, added.token);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect((await service.api('DELETE', `/v1/users/${added.id}`, { token: ws.owner })).status).toBe(204);
      expect(await within(Promise.all([a.ended, b.ended]), 10 * RECHECK_MS + 2_000)).not.toBe('timeout');

      // A stream of a live token goes on.
      const live = await openStream(service, sessionId, ws.admin);
      expect(await within(live.ended, 4 * RECHECK_MS)).toBe('timeout');
      expect(live.text()).toContain('event: state');
    });

    it('a user holds at most their limit of open streams, whatever tokens they use (429 beyond); closing one makes room', async () => {
      const ws = await seedWorkspace(service, 'Greedy');
      const { sessionId } = await service.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'webchat', externalId: '7b4d2e9f-4c8f-4e90-8b62-1c3f8d5e6f72', text: 'hello', language: 'en' });
      const token = (await service.api('POST', '/v1/tokens', { token: ws.agent })).body.token as string;
      const first = await openStream(service, sessionId, token);
      expect((await openStream(service, sessionId, ws.agent)).status).toBe(200);
      // A fresh token does not give the agent more: the limit is the user's.
      const more = (await service.api('POST', '/v1/tokens', { token: ws.agent })).body.token as string;
      expect((await openStream(service, sessionId, more)).status).toBe(429);
      // The owner still gets theirs.
      expect((await openStream(service, sessionId, ws.owner)).status).toBe(200);
      await service.api('DELETE', '/v1/tokens/current', { token });
      await within(first.ended, 10 * RECHECK_MS + 2_000);
      expect((await openStream(service, sessionId, more)).status).toBe(200);
    });
  });
});
