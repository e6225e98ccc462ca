/**
 * The roll-ups without a queue (docs/analytics.md, "How the figures are kept"): messages of one workspace written at
 * once on two connections do not wait for each other's commit, and folding the slots of past hours into one row
 * leaves every figure as it was, on both databases.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYTICS_SLOTS } from '../../db/analytics-rollup.ts';
import { analyticsRepository } from '../../db/repositories/analytics.repository.ts';
import { createCompaction } from '../../src/analytics/compaction.ts';
import { createLogger } from '../../src/log.ts';
import { databaseKinds, describeEachDatabase, openTestDatabase, type TestDatabase } from '../helpers/db.ts';

async function seedConversation(database: TestDatabase) {
  const workspaceId = randomUUID();
  const sessionId = randomUUID();
  await database.db.insertInto('workspaces').values({ id: workspaceId, name: 'Counted' }).execute();
  await database.db
    .insertInto('sessions')
    .values({ id: sessionId, workspace_id: workspaceId, channel: 'whatsapp', external_id: `wa-${sessionId}`, machine_version: 1, customer_phone: null })
    .execute();
  return { workspaceId, sessionId };
}

async function addHourRow(database: TestDatabase, workspaceId: string, hour: Date, slot: number, byAgent: number) {
  await sql`insert into analytics_hours (workspace_id, hour, channel, slot, by_agent) values (${workspaceId}, ${hour.toISOString()}::timestamptz, 'whatsapp', ${slot}, ${byAgent})
    on conflict (workspace_id, hour, channel, slot) do update set by_agent = analytics_hours.by_agent + excluded.by_agent`.execute(database.db);
}

const agentMessage = (sessionId: string, at: string) => sql`insert into session_messages (id, session_id, "from", text, at)
  values (${randomUUID()}, ${sessionId}, 'agent', 'On its way.', ${at}::timestamptz)`;

async function hourRows(database: TestDatabase, workspaceId: string) {
  const { rows } = await sql<{ hour: Date; slot: number; by_agent: number; customer_messages: number }>`
    select hour, slot, by_agent, customer_messages from analytics_hours where workspace_id = ${workspaceId} and by_agent > 0 order by hour, slot`.execute(database.db);
  return rows;
}

describeEachDatabase("the Overview's roll-ups", (get) => {
  it('a message counts into a slot of its connection, and the figures sum every slot', async () => {
    const database = get();
    const { workspaceId, sessionId } = await seedConversation(database);
    const analytics = analyticsRepository(database.db);
    const at = new Date(Date.now() - 5 * 3_600_000);
    const hour = new Date(Math.floor(at.getTime() / 3_600_000) * 3_600_000);
    await agentMessage(sessionId, at.toISOString()).execute(database.db);
    const rows = await hourRows(database, workspaceId);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.slot).toBeGreaterThanOrEqual(0);
    expect(rows[0]!.slot).toBeLessThan(ANALYTICS_SLOTS);
    // Other connections' slots of the same hour, as concurrent writers leave them.
    await addHourRow(database, workspaceId, hour, (rows[0]!.slot + 1) % ANALYTICS_SLOTS, 2);
    await addHourRow(database, workspaceId, hour, (rows[0]!.slot + 2) % ANALYTICS_SLOTS, 4);
    const totals = await analytics.totals({ workspaceId, from: new Date(hour.getTime() - 3_600_000), to: new Date(Date.now() + 3_600_000), channel: null });
    expect(totals.by_agent).toBe(7);
  });

  it('folding leaves one row per past hour with the same sums, and the recent hours as they are', async () => {
    const database = get();
    const { workspaceId } = await seedConversation(database);
    const analytics = analyticsRepository(database.db);
    const hourAgo = (n: number) => new Date((Math.floor(Date.now() / 3_600_000) - n) * 3_600_000);
    for (const [hours, slot, n] of [[5, 0, 1], [5, 5, 2], [5, 9, 4], [3, 7, 8], [0, 3, 16], [0, 11, 32]] as const) {
      await addHourRow(database, workspaceId, hourAgo(hours), slot, n);
    }
    const period = { workspaceId, from: hourAgo(24), to: hourAgo(-1), channel: null };
    const before = await analytics.totals(period);
    expect(before.by_agent).toBe(63);

    const compaction = createCompaction({ analytics, logger: createLogger('silent') });
    expect(await compaction.run()).toBeGreaterThanOrEqual(3);
    expect(await analytics.totals(period)).toEqual(before);
    const folded = [[hourAgo(5).getTime(), 0, 7], [hourAgo(3).getTime(), 0, 8], [hourAgo(0).getTime(), 3, 16], [hourAgo(0).getTime(), 11, 32]];
    expect((await hourRows(database, workspaceId)).map((r) => [r.hour.getTime(), r.slot, r.by_agent])).toEqual(folded);
    // A second fold finds nothing more of this workspace to move.
    await compaction.run();
    expect((await hourRows(database, workspaceId)).map((r) => [r.hour.getTime(), r.slot, r.by_agent])).toEqual(folded);
  });
});

if (databaseKinds.includes('postgres')) {
  describe("the Overview's roll-ups on PostgreSQL's own connections", () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase('postgres');
    });
    afterAll(async () => {
      await database?.close();
    });

    it('two connections counting into the same workspace, hour and channel do not wait for each other', async () => {
      // Two conversations of one workspace (one conversation's messages queue for its own rows anyway).
      const { workspaceId, sessionId } = await seedConversation(database);
      const other = randomUUID();
      await database.db
        .insertInto('sessions')
        .values({ id: other, workspace_id: workspaceId, channel: 'whatsapp', external_id: `wa-${other}`, machine_version: 1, customer_phone: null })
        .execute();
      // Two connections whose slots differ (a slot is the backend's pid modulo ANALYTICS_SLOTS).
      const clients: pg.Client[] = [];
      const slots = new Set<number>();
      while (clients.length < 2) {
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
        const slot = rows[0]!.pid % ANALYTICS_SLOTS;
        if (slots.has(slot)) await client.end();
        else {
          slots.add(slot);
          clients.push(client);
        }
      }
      const [a, b] = clients as [pg.Client, pg.Client];
      try {
        const insert = `insert into session_messages (id, session_id, "from", text, at) values ($1, $2, 'agent', 'On its way.', now())`;
        await a.query('begin');
        await a.query(insert, [randomUUID(), sessionId]);
        // A holds its roll-up row until it commits; B, counting into the same hour, must not wait for it (it did: one
        // row per hour made every message of a workspace queue behind the one before).
        await b.query('begin');
        await b.query("set local lock_timeout = '2s'");
        await b.query(insert, [randomUUID(), other]);
        await b.query('commit');
        await a.query('commit');
      } finally {
        await Promise.all(clients.map((c) => c.end()));
      }
    });
  });
}
