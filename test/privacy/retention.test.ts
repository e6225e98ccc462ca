/**
 * Retention per workspace (docs/privacy.md, "Retention"), on both databases: the owner sets the period; the purge
 * deletes conversation content older than it in every kind of record, leaves a conversation going on across the
 * boundary its session and recent turns, leaves workspaces that keep everything alone, and run by two engines at
 * once removes each row once (the claim lets one run; even forced, the deletes cannot count a row twice).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { createAudit } from '../../src/privacy/audit.ts';
import { createRetention } from '../../src/privacy/retention.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY);

describeEachDatabase('retention', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;

  beforeAll(async () => {
    service = await startTestService(get(), {}, { retention: { intervalMs: 0 } });
    ws = await seedWorkspace(service, `Keep${Date.now()}`);
  });
  afterAll(async () => {
    await service?.stop();
  });

  /** A conversation with one turn and one message at each of `turnsAt`; `lease` holds it for an engine. */
  async function conversation(workspaceId: string, input: { status: 'active' | 'ended'; updated: Date; turnsAt: Date[]; lease?: boolean }) {
    const db = get().db;
    const id = randomUUID();
    await db
      .insertInto('sessions')
      .values({
        id,
        workspace_id: workspaceId,
        channel: 'webchat',
        external_id: randomUUID(),
        status: input.status,
        customer_phone: '+31611112222',
        machine_version: 1,
        created_at: input.turnsAt[0] ?? input.updated,
        updated_at: input.updated,
        lease_owner: input.lease ? 'engine-x' : null,
        lease_until: input.lease ? new Date(Date.now() + 60_000) : null,
      })
      .execute();
    let ordinal = 0;
    for (const at of input.turnsAt) {
      ordinal++;
      await db
        .insertInto('session_turns')
        .values({ id: randomUUID(), session_id: id, ordinal, status: 'completed', language: 'en', customer_message: `turn ${ordinal}`, tool_rounds: '[]', timings: '{}', errors: '[]', started_at: at, ended_at: at })
        .execute();
      await db.insertInto('session_messages').values({ id: randomUUID(), session_id: id, from: 'customer', text: `turn ${ordinal}`, turn_id: String(ordinal), at }).execute();
    }
    return id;
  }

  async function otherRecords(workspaceId: string, at: Date) {
    const db = get().db;
    const eventId = `msg_${randomUUID()}`;
    await db.insertInto('webhook_events').values({ id: eventId, workspace_id: workspaceId, event: 'new_lead', payload: JSON.stringify({ email: 'sam@example.org' }), created_at: at }).execute();
    await db.insertInto('notifications').values({ id: randomUUID(), workspace_id: workspaceId, kind: 'forward', message: 'Sam asked', created_at: at }).execute();
    await db.insertInto('webchat_conversations').values({ id: randomUUID(), workspace_id: workspaceId, page_url: 'https://shop.example', visitor_email: 'sam@example.org', created_at: at }).execute();
    const wa = { workspace_id: workspaceId, phone_number_id: '1065', wa_id: `316${Math.floor(Math.random() * 1e8)}` };
    await db.insertInto('whatsapp_inbound_messages').values({ ...wa, id: randomUUID(), message_id: `wamid.${randomUUID()}`, type: 'text', text: 'hi', sent_at: at, state: 'done', created_at: at }).execute();
    await db.insertInto('whatsapp_outbound_messages').values({ ...wa, id: randomUUID(), kind: 'reply', body: 'hello', status: 'delivered', next_attempt_at: at, created_at: at, updated_at: at }).execute();
    await db.insertInto('whatsapp_conversations').values({ workspace_id: workspaceId, wa_id: wa.wa_id, external_id: randomUUID(), started_at: at, last_message_at: at }).execute();
  }

  const count = async (table: 'sessions' | 'session_turns' | 'session_messages' | 'webhook_events' | 'notifications' | 'webchat_conversations' | 'whatsapp_inbound_messages' | 'whatsapp_outbound_messages' | 'whatsapp_conversations') =>
    Number((await get().db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);

  describe('GET and PUT /v1/workspace/retention', () => {
    it('a new workspace keeps 365 days; the owner sets a period or forever; out of range is refused', async () => {
      const api = (method: string, body?: unknown, token = ws.owner) => service.api(method, '/v1/workspace/retention', { token, ...(body === undefined ? {} : { body }) });
      expect((await api('GET')).body).toEqual({ days: 365 });
      expect((await api('PUT', { days: 30 })).body).toEqual({ days: 30 });
      expect((await api('GET')).body).toEqual({ days: 30 });
      expect((await api('PUT', { days: 0 })).status).toBe(400);
      expect((await api('PUT', { days: 3651 })).status).toBe(400);
      expect((await api('PUT', { days: 30 }, ws.admin)).status).toBe(403);
      expect((await api('GET', undefined, ws.admin)).status).toBe(403);
      expect((await api('PUT', { days: null })).body).toEqual({ days: null });
      expect((await api('GET')).body).toEqual({ days: null });
    });

    it('leaves workspaces made before retention existed keeping everything (the column has no value for them)', async () => {
      const { rows } = await import('kysely').then(({ sql }) => sql<{ d: string | null; nullable: string }>`
        select column_default as d, is_nullable as nullable from information_schema.columns
        where table_schema = current_schema() and table_name = 'workspaces' and column_name = 'retention_days'`.execute(get().db));
      expect(rows[0]).toEqual({ d: '365', nullable: 'YES' });
    });
  });

  describe('the purge', () => {
    it('deletes what is older than the period, keeps the recent turns of a conversation going on across it, once across two engines', async () => {
      const db = get().db;
      const other = await seedWorkspace(service, `Forever${Date.now()}`);
      await db.updateTable('workspaces').set({ retention_days: 30 }).where('id', '=', ws.workspaceId).execute();
      await db.updateTable('workspaces').set({ retention_days: null }).where('id', '=', other.workspaceId).execute();

      const oldEnded = await conversation(ws.workspaceId, { status: 'ended', updated: ago(40), turnsAt: [ago(41), ago(40)] });
      const recentEnded = await conversation(ws.workspaceId, { status: 'ended', updated: ago(2), turnsAt: [ago(3)] });
      const across = await conversation(ws.workspaceId, { status: 'active', updated: ago(0), turnsAt: [ago(45), ago(31), ago(1), ago(0)], lease: true });
      const forever = await conversation(other.workspaceId, { status: 'ended', updated: ago(400), turnsAt: [ago(400)] });
      for (let i = 0; i < 3; i++) await otherRecords(ws.workspaceId, ago(60));
      await otherRecords(ws.workspaceId, ago(5));
      await otherRecords(other.workspaceId, ago(400));

      const before = {
        sessions: await count('sessions'),
        turns: await count('session_turns'),
        messages: await count('session_messages'),
        events: await count('webhook_events'),
        notifications: await count('notifications'),
        chats: await count('webchat_conversations'),
        received: await count('whatsapp_inbound_messages'),
        sent: await count('whatsapp_outbound_messages'),
        waConversations: await count('whatsapp_conversations'),
      };

      const logger = createLogger('silent');
      const audit = createAudit({ db, logger });
      // Two engines, a batch of 2 so each step takes several statements, both forced to run at once.
      const engines = ['engine-a', 'engine-b'].map((engine) => createRetention({ db, audit, logger, engine, batch: 2 }));
      const [a, b] = await Promise.all(engines.map((e) => e.purge({ force: true })));
      const sum = (kind: string) => (a!.purged[kind] ?? 0) + (b!.purged[kind] ?? 0);

      expect(sum('conversations')).toBe(1);
      // The old conversation's 2 turns went with it (cascade); the one across the boundary lost its 2 old turns.
      expect(sum('turns')).toBe(2);
      expect(sum('messages')).toBe(2);
      expect(sum('webhook_events')).toBe(3);
      expect(sum('notifications')).toBe(3);
      expect(sum('web_chats')).toBe(3);
      expect(sum('whatsapp_received')).toBe(3);
      expect(sum('whatsapp_sent')).toBe(3);
      expect(sum('whatsapp_conversations')).toBe(3);

      expect(await count('sessions')).toBe(before.sessions - 1);
      expect(await count('session_turns')).toBe(before.turns - 4);
      expect(await count('session_messages')).toBe(before.messages - 4);
      expect(await count('webhook_events')).toBe(before.events - 3);
      expect(await count('notifications')).toBe(before.notifications - 3);
      expect(await count('webchat_conversations')).toBe(before.chats - 3);
      expect(await count('whatsapp_inbound_messages')).toBe(before.received - 3);
      expect(await count('whatsapp_outbound_messages')).toBe(before.sent - 3);
      expect(await count('whatsapp_conversations')).toBe(before.waConversations - 3);

      const sessions = await db.selectFrom('sessions').select('id').where('id', 'in', [oldEnded, recentEnded, across, forever]).execute();
      expect(sessions.map((s) => s.id).sort()).toEqual([recentEnded, across, forever].sort());
      const kept = await db.selectFrom('session_turns').select('customer_message').where('session_id', '=', across).orderBy('ordinal').execute();
      expect(kept.map((t) => t.customer_message)).toEqual(['turn 3', 'turn 4']);
    });

    it('runs on one engine at a time: the second finds it claimed until the next run is due', async () => {
      const db = get().db;
      const logger = createLogger('silent');
      const audit = createAudit({ db, logger });
      const engines = ['engine-c', 'engine-d'].map((engine) => createRetention({ db, audit, logger, engine }));
      const runs = await Promise.all(engines.map((e) => e.purge()));
      expect(runs.map((r) => r.ran).sort()).toEqual([false, true]);
      expect((await engines[0]!.purge()).ran).toBe(false);
      // When the next run is due, one engine claims it again.
      const later = new Date(Date.now() + 11 * 60_000);
      expect((await engines[1]!.purge({ now: later })).ran).toBe(true);
    });

    it('counts what it deleted in botlink_retention_purged_rows_total', async () => {
      await get().db.updateTable('workspaces').set({ retention_days: 30 }).where('id', '=', ws.workspaceId).execute();
      await otherRecords(ws.workspaceId, ago(90));
      await service.privacy.retention.purge({ force: true });
      const metrics = await service.api('GET', '/metrics');
      expect(metrics.text).toMatch(/botlink_retention_purged_rows_total\{kind="notifications"\} [1-9]/);
      expect(metrics.text).toMatch(/botlink_retention_purge_runs_total\{outcome="done"\} [1-9]/);
    });
  });
});

describe('the retention migration', () => {
  it('leaves workspaces made before it keeping everything, and new ones keep 365 days', async () => {
    const { Migrator } = await import('kysely/migration');
    const { migrations } = await import('../../db/migrations/index.ts');
    const { openDatabase } = await import('../../db/database.ts');
    const opened = await openDatabase({});
    try {
      const migrator = new Migrator({ db: opened.db, provider: { getMigrations: async () => migrations } });
      expect((await migrator.migrateTo('0020-accounts-under-attack')).error).toBeUndefined();
      const before = randomUUID();
      await opened.db.insertInto('workspaces').values({ id: before, name: 'Older' }).execute();
      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      const after = randomUUID();
      await opened.db.insertInto('workspaces').values({ id: after, name: 'Newer' }).execute();
      const rows = await opened.db.selectFrom('workspaces').select(['id', 'retention_days']).execute();
      expect(rows.find((r) => r.id === before)!.retention_days).toBeNull();
      expect(rows.find((r) => r.id === after)!.retention_days).toBe(365);
    } finally {
      await opened.close();
    }
  });
});
