/** The process side of endpoint health: what it could not write is kept and written by the next flush. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpointHealthTracker } from '../../src/botlink/endpoint-health-tracker.ts';
import { createLogger } from '../../src/log.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';

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
