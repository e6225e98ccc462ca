/**
 * Privacy through a transaction pooler (docs/privacy.md): two engines whose DATABASE_URL is pgbouncer in transaction
 * mode. The audit log is written and read, its own retention deletes through the owner's function (one statement,
 * nothing held across transactions) while a plain DELETE is still refused; the
 * retention purge runs on one engine at a time (a claimed row, no session advisory lock); an erasure works. Needs
 * the real PostgreSQL (TEST_DATABASE_URL) and pgbouncer.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnDatabase, type OwnDatabase } from '../helpers/db.ts';
import { startPgbouncer, type Pgbouncer } from '../../harness/pgbouncer.ts';
import { seedWorkspace, startTestServiceOn, type TestService } from '../helpers/service.ts';

const admin = process.env.TEST_DATABASE_URL;

describe('privacy through pgbouncer in transaction mode', () => {
  let bouncer: Pgbouncer;
  let database: OwnDatabase | undefined;
  let a: TestService;
  let b: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;

  beforeAll(async () => {
    if (!admin) return;
    const upstream = new URL(admin);
    bouncer = await startPgbouncer({ host: upstream.hostname, port: Number(upstream.port || 5432), user: decodeURIComponent(upstream.username || 'postgres') });
    database = await createOwnDatabase(admin, 'privacy');
    const env = { DATABASE_URL: bouncer.url(database.name), DATABASE_POOLER: 'transaction', MASTER_KEY: randomBytes(32).toString('hex') };
    a = await startTestServiceOn(env, { sessions: { instanceId: 'privacy-a' }, retention: { intervalMs: 0 } });
    b = await startTestServiceOn(env, { sessions: { instanceId: 'privacy-b' }, retention: { intervalMs: 0 } });
    ws = await seedWorkspace(a, 'Pooled');
  }, 60_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await bouncer?.stop();
    await database?.drop();
  });

  it('writes and reads the audit log; only its own retention deletes from it', async () => {
    if (!admin) return expect(admin).toBeUndefined();
    expect((await b.api('PUT', '/v1/workspace/retention', { token: ws.owner, body: { days: 30 } })).status).toBe(200);
    const entries = (await a.api('GET', '/v1/audit', { token: ws.admin })).body.entries as { action: string }[];
    expect(entries[0]!.action).toBe('retention_changed');
    const db = a.database.db;
    await expect(db.deleteFrom('audit_log').execute()).rejects.toThrow(/append-only/);
    await db.insertInto('audit_log').values({ workspace_id: ws.workspaceId, action: 'sign_in', at: new Date(Date.now() - 800 * 86_400_000) }).execute();
    expect(await b.privacy.audit.purge(100)).toBe(1);
    // Nothing of the purge stays with a pooled connection: the next statement on any of them is refused again.
    for (let i = 0; i < 5; i++) await expect(db.deleteFrom('audit_log').execute()).rejects.toThrow(/append-only/);
  });

  it('runs the retention purge on one engine at a time', async () => {
    if (!admin) return expect(admin).toBeUndefined();
    const runs = await Promise.all([a.privacy.retention.purge(), b.privacy.retention.purge()]);
    expect(runs.map((r) => r.ran).sort()).toEqual([false, true]);
  });

  it('exports and erases a customer', async () => {
    if (!admin) return expect(admin).toBeUndefined();
    const erased = await b.api('POST', '/v1/privacy/erase', { token: ws.owner, body: { phone: '+31 6 1234 5678' } });
    expect(erased.status).toBe(200);
    expect(erased.body.erased.sessions).toBe(0);
  });
});
