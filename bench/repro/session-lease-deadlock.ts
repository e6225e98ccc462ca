/**
 * Reproduces a deadlock the soak found on PostgreSQL (bench/soak.ts; "renewing the held session leases failed" in the
 * service's log, "deadlock detected" in PostgreSQL's): the renewal of the held phone leases (`renewLeases`, one UPDATE
 * over every held session, every 5 s) and the group-committed turn save (`saveTurns`, one UPDATE over a batch of up to
 * 128 sessions) update the same `sessions` rows in different orders. Exactly what one service process runs: one
 * renewer and one saver (the group commit's concurrency is 1).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/repro/session-lease-deadlock.ts
 *
 * Works in a schema of its own, dropped afterwards. Prints the statements made and the deadlocks (SQLSTATE 40P01);
 * exits 1 while there are any. The table holds 20,000 other sessions, as any database that has run a while does:
 * with a nearly empty table both statements scan it in the same (physical) order and the deadlock does not show.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { migrate, openDatabase } from '../../db/database.ts';
import { sessionsRepository, type SaveTurnInput } from '../../db/repositories/sessions.repository.ts';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('Set DATABASE_URL to a PostgreSQL database.');
const HELD = 1_000;
const OTHERS = 20_000;
const BATCH = 64;
const SECONDS = 20;

const schema = `repro_${randomBytes(4).toString('hex')}`;
const admin = await openDatabase({ url, poolSize: 1 });
await sql`create schema ${sql.id(schema)}`.execute(admin.db);
const { db, close } = await openDatabase({ url, schema, poolSize: 4 });
try {
  await migrate(db, schema);
  const sessions = sessionsRepository(db);
  const workspaceId = randomUUID();
  const owner = 'engine-1';
  await db.insertInto('workspaces').values({ id: workspaceId, name: 'repro', created_at: new Date() }).execute();
  // HELD open calls whose leases this process holds, and OTHERS conversations nobody holds.
  const held = (
    await sql<{ id: string }>`insert into sessions (id, workspace_id, channel, external_id, machine_version, lease_owner, lease_until, created_at, updated_at)
      select gen_random_uuid(), ${workspaceId}, 'phone', 'CA' || g, 1, ${owner}, now() + interval '15 seconds', now(), now()
      from generate_series(1, ${HELD}) g returning id`.execute(db)
  ).rows.map((r) => r.id);
  await sql`insert into sessions (id, workspace_id, channel, external_id, machine_version, created_at, updated_at)
    select gen_random_uuid(), ${workspaceId}, 'whatsapp', 'wa' || g, 1, now(), now() from generate_series(1, ${OTHERS}) g`.execute(db);
  await sql`analyze sessions`.execute(db);

  const turnEnd = (sessionId: string): SaveTurnInput => ({
    turn: { id: randomUUID(), session_id: sessionId, ordinal: 1, status: 'completed', language: 'en', customer_message: 'Where is my order?', reply: 'Tomorrow.', source: 'integrator', botlink: null, knowledge: null, tool_rounds: [], handoff: null, timings: {}, errors: [], started_at: new Date(), ended_at: new Date() },
    session: { id: sessionId, state: 'idle', status: 'active', language: 'en', customer: { phone: null, email: null, name: null }, handoff: null, turnCount: 1, snapshot: {}, machineVersion: 1, releaseLease: false },
  } as SaveTurnInput);
  const counts = { renewals: 0, saves: 0, deadlocks: 0 };
  const deadlock = (err: { code?: string }) => {
    if (err.code !== '40P01') throw err;
    counts.deadlocks++;
  };
  const until = Date.now() + SECONDS * 1_000;
  await Promise.all([
    (async () => {
      while (Date.now() < until) await sessions.renewLeases(held, owner, 15_000).then(() => void counts.renewals++, deadlock);
    })(),
    (async () => {
      while (Date.now() < until) {
        // The turns that ended while the previous batch was written: any calls, in the order they ended.
        const batch = [...held].sort(() => Math.random() - 0.5).slice(0, BATCH);
        await sessions.saveTurns(batch.map(turnEnd)).then(() => void counts.saves++, deadlock);
      }
    })(),
  ]);
  console.log(`${SECONDS} s, ${HELD} held sessions among ${HELD + OTHERS}: ${counts.renewals} renewals, ${counts.saves} turn-save batches of ${BATCH}, ${counts.deadlocks} deadlocks`);
  process.exitCode = counts.deadlocks > 0 ? 1 : 0;
} finally {
  await close();
  await sql`drop schema ${sql.id(schema)} cascade`.execute(admin.db);
  await admin.close();
}
