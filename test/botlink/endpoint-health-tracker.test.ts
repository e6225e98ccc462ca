/** The process side of endpoint health: what it could not write is kept and written by the next flush. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpointHealthTracker } from '../../src/botlink/endpoint-health-tracker.ts';
import { createLogger } from '../../src/log.ts';
import { sql } from 'kysely';
import { databaseKinds, openTestDatabase, type TestDatabase } from '../helpers/db.ts';

const URL = 'https://shop.example/botlink/channel';
const WORKSPACE = '00000000-0000-4000-8000-0000000000b2';

describe('the endpoint health tracker', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase('pglite');
  });
  afterAll(async () => {
    await database.close();
  });

  it('keeps outcomes whose write failed and writes them with the next flush', async () => {
    let clock = 1_700_000_000_000;
    const health = createEndpointHealthTracker({ db: database.db, logger: createLogger('silent'), now: () => clock, flushMs: 60_000 });
    for (let i = 0; i < 3; i++) {
      clock += 5_000;
      health.record(WORKSPACE, URL, 'timeout', 3_500, 'no answer within 3500 ms');
    }
    // The workspace row does not exist yet: the write fails (foreign key), nothing is stored, nothing is lost.
    await health.flush();
    expect(await database.db.selectFrom('endpoint_health').selectAll().execute()).toEqual([]);
    expect((await health.current(WORKSPACE, URL)).state).toBe('down');

    await database.db.insertInto('workspaces').values({ id: WORKSPACE, name: 'Later', created_at: new Date() }).execute();
    await health.flush();
    const row = await database.db.selectFrom('endpoint_health').selectAll().where('workspace_id', '=', WORKSPACE).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ state: 'down', consecutive_failures: 3, last_problem: 'no answer within 3500 ms' });
    expect(row.recent).toHaveLength(3);
    await health.stop();
  });
});

// A read of the shared row that overlaps this process's own write must not bring back the state before it: the
// message after the third failure must see `down`. Needs two connections (one holds the row's lock), so it runs on the
// real PostgreSQL (CI sets TEST_DATABASE_URL); PGlite has one connection and serialises the two by itself.
for (const kind of databaseKinds.filter((k) => k === 'postgres')) {
  describe(`the endpoint health tracker while its own write waits [${kind}]`, () => {
    let database: TestDatabase;
    const workspace = '00000000-0000-4000-8000-0000000000b3';
    beforeAll(async () => {
      database = await openTestDatabase(kind);
      await database.db.insertInto('workspaces').values({ id: workspace, name: 'Racing', created_at: new Date() }).execute();
    });
    afterAll(async () => {
      await database.close();
    });

    it('keeps the `down` it just saw while a read of the row from before that write comes back', async () => {
      let clock = 1_700_000_000_000;
      const health = createEndpointHealthTracker({ db: database.db, logger: createLogger('silent'), now: () => clock, flushMs: 60_000 });
      for (let i = 0; i < 2; i++) {
        clock += 5_000;
        health.record(workspace, URL, 'timeout', 3_500);
      }
      await health.flush();
      expect((await health.current(workspace, URL)).state).toBe('degraded');

      // Another process holds the row's lock: this process's write of the third failure waits for it.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const lockTaken = new Promise<void>((resolve) => (locked = resolve));
      const other = database.db.transaction().execute(async (trx) => {
        await sql`select 1 from endpoint_health where workspace_id = ${workspace} for update`.execute(trx);
        locked();
        await held;
      });
      await lockTaken;
      clock += 5_000;
      health.record(workspace, URL, 'timeout', 3_500); // the transition: written at once, and waiting for the lock
      expect((await health.current(workspace, URL)).state).toBe('down');
      // Long unread: read again before use. The row still says degraded (the write is not committed).
      clock += 10_000;
      expect((await health.current(workspace, URL)).state).toBe('down');
      clock += 10_000;
      expect((await health.current(workspace, URL)).state).toBe('down');

      release();
      await other;
      await health.flush();
      const row = await database.db.selectFrom('endpoint_health').selectAll().where('workspace_id', '=', workspace).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ state: 'down', consecutive_failures: 3 });
      clock += 10_000;
      expect((await health.current(workspace, URL)).state).toBe('down');
      await health.stop();
    });
  });
}
