import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { TEST_ADMIN_TOKEN, addUserWithToken, seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

describeEachDatabase('accounts and roles', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    service = await startTestService(get());
    ws = await seedWorkspace(service);
  });
  afterAll(() => service.stop());

  describe('creating workspaces (operator)', () => {
    it('answers 201 with the owner token once, and the token works', async () => {
      const res = await service.api('POST', '/v1/admin/workspaces', { token: TEST_ADMIN_TOKEN, body: { name: 'Beta', owner_email: 'o@beta.example' } });
      expect(res.status).toBe(201);
      expect(res.body.workspace.name).toBe('Beta');
      expect(res.body.owner.token).toMatch(/^blt_[A-Za-z0-9_-]{43}$/);
      const users = await service.api('GET', '/v1/users', { token: res.body.owner.token });
      expect(users.status).toBe(200);
      expect(users.body.users).toEqual([expect.objectContaining({ email: 'o@beta.example', role: 'owner' })]);
    });

    it('refuses a wrong operator token with 401 and a Bearer challenge', async () => {
      const res = await service.api('POST', '/v1/admin/workspaces', { token: 'nope', body: { name: 'X', owner_email: 'x@x.example' } });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(res.body.error.code).toBe('unauthorized');
    });

    it('refuses a workspace token on the operator route', async () => {
      const res = await service.api('POST', '/v1/admin/workspaces', { token: ws.owner, body: { name: 'X', owner_email: 'x@x.example' } });
      expect(res.status).toBe(401);
    });

    it('names the field that is wrong', async () => {
      const res = await service.api('POST', '/v1/admin/workspaces', { token: TEST_ADMIN_TOKEN, body: { name: 'X', owner_email: 'not-an-email' } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'owner_email' })]);
    });
  });

  describe('users', () => {
    it('an agent may not add users (403)', async () => {
      const res = await service.api('POST', '/v1/users', { token: ws.agent, body: { email: 'x@acme.example', role: 'agent' } });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    });

    it('an admin may add an agent, but neither an admin nor an owner (their invite link sets their password)', async () => {
      const agent = await service.api('POST', '/v1/users', { token: ws.admin, body: { email: 'agent2@acme.example', role: 'agent' } });
      expect(agent.status).toBe(201);
      const admin = await service.api('POST', '/v1/users', { token: ws.admin, body: { email: 'admin2@acme.example', role: 'admin' } });
      expect([admin.status, admin.body.error.code]).toEqual([403, 'forbidden']);
      const owner = await service.api('POST', '/v1/users', { token: ws.admin, body: { email: 'owner2@acme.example', role: 'owner' } });
      expect(owner.status).toBe(403);
      const byOwner = await service.api('POST', '/v1/users', { token: ws.owner, body: { email: 'admin3@acme.example', role: 'admin' } });
      expect(byOwner.status).toBe(201);
    });

    it('refuses a second live user with the same email (409), case-insensitively', async () => {
      const res = await service.api('POST', '/v1/users', { token: ws.owner, body: { email: 'AGENT@acme.example', role: 'agent' } });
      expect(res.status).toBe(409);
    });

    it('refuses an unknown role, naming the allowed ones', async () => {
      const res = await service.api('POST', '/v1/users', { token: ws.owner, body: { email: 'r@acme.example', role: 'root' } });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('"owner", "admin", "agent"');
    });

    it('removing a user revokes every token of theirs at once', async () => {
      const made = await addUserWithToken(service, ws.owner, 'temp@acme.example', 'agent');
      const minted = await service.api('POST', '/v1/tokens', { token: made.token });
      expect(minted.status).toBe(201);
      expect((await service.api('DELETE', `/v1/users/${made.id}`, { token: ws.owner })).status).toBe(204);
      expect((await service.api('POST', '/v1/tokens', { token: made.token })).status).toBe(401);
      expect((await service.api('GET', '/v1/sessions', { token: minted.body.token })).status).toBe(401);
    });

    it('never removes the last owner', async () => {
      const users = await service.api('GET', '/v1/users', { token: ws.owner });
      const ownerId = users.body.users.find((u: { role: string }) => u.role === 'owner').id;
      const res = await service.api('DELETE', `/v1/users/${ownerId}`, { token: ws.owner });
      expect(res.status).toBe(409);
    });

    it('cannot reach users of another workspace (404)', async () => {
      const other = await seedWorkspace(service, 'Other');
      const res = await service.api('DELETE', `/v1/users/${other.agentId}`, { token: ws.owner });
      expect(res.status).toBe(404);
    });
  });

  describe('tokens', () => {
    it('a fresh token works, and revoking the current one ends only that one', async () => {
      const fresh = await service.api('POST', '/v1/tokens', { token: ws.agent });
      expect(fresh.status).toBe(201);
      expect((await service.api('DELETE', '/v1/tokens/current', { token: fresh.body.token })).status).toBe(204);
      expect((await service.api('POST', '/v1/tokens', { token: fresh.body.token })).status).toBe(401);
      expect((await service.api('GET', '/v1/integration', { token: ws.agent })).status).toBe(403); // still known, just not a manager
    });

    it('stores tokens only as hashes', async () => {
      const rows = await get().db.selectFrom('tokens').select('token_hash').execute();
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
        expect(row.token_hash).not.toContain(ws.owner);
      }
    });
  });

  describe('bad input', () => {
    it('unknown routes get a JSON 404', async () => {
      const res = await service.api('GET', '/v1/nothing-here');
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    });

    it('invalid JSON gets 400 invalid_json', async () => {
      const res = await service.api('POST', '/v1/users', { token: ws.owner, raw: '{"email":', headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_json');
    });

    it('a body that is not JSON gets 415', async () => {
      const res = await service.api('POST', '/v1/users', { token: ws.owner, raw: 'email=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(res.status).toBe(415);
    });

    it('an oversize body gets 413', async () => {
      const res = await service.api('POST', '/v1/users', { token: ws.owner, raw: JSON.stringify({ email: 'x'.repeat(1_100_000) }), headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('payload_too_large');
    });

    it('every answer carries a request id', async () => {
      const res = await service.api('GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } });
      expect(res.headers.get('x-request-id')).toBe('abc-123');
    });
  });
});
