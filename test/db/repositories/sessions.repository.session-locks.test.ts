/**
 * No deadlock between the held-lease renewal and the turn save (found by the soak on PostgreSQL: both update many
 * `sessions` rows in one statement, and they used to lock them in different orders). The same load as one process:
 * one renewer over 1,000 held sessions and one saver of 64-session batches in random order, among 20,000 other
 * sessions (with a nearly empty table both happen to lock in the same physical order). Before the fix: about one
 * deadlock a second (bench/repro/session-lease-deadlock.ts).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { sessionsRepository, type SaveTurnInput } from '../../../db/repositories/sessions.repository.ts';
import { describeEachDatabase } from '../../helpers/db.ts';

describeEachDatabase('session row locks', (get) => {
  it('renewing held leases and saving turns at once for 3 s: no deadlock, every renewal and save done', async () => {
    const db = get().db;
    const sessions = sessionsRepository(db);
    const workspaceId = randomUUID();
    const owner = 'engine-1';
    await db.insertInto('workspaces').values({ id: workspaceId, name: 'locks' }).execute();
    const held = (
      await sql<{ id: string }>`insert into sessions (id, workspace_id, channel, external_id, machine_version, lease_owner, lease_until)
        select gen_random_uuid(), ${workspaceId}, 'phone', 'CA' || g, 1, ${owner}, now() + interval '15 seconds'
        from generate_series(1, 1000) g returning id`.execute(db)
    ).rows.map((r) => r.id);
    await sql`insert into sessions (id, workspace_id, channel, external_id, machine_version)
      select gen_random_uuid(), ${workspaceId}, 'whatsapp', 'wa' || g, 1 from generate_series(1, 20000) g`.execute(db);
    await sql`analyze sessions`.execute(db);

    const turnEnd = (sessionId: string): SaveTurnInput => ({
      turn: { id: randomUUID(), session_id: sessionId, ordinal: 1, status: 'completed', language: 'en', customer_message: 'Where is my order?', reply: 'Tomorrow.', source: 'integrator', botlink: null, knowledge: null, tool_rounds: [], handoff: null, timings: {}, errors: [], started_at: new Date(), ended_at: new Date() },
      session: { id: sessionId, state: 'idle', status: 'active', language: 'en', customer: { phone: null, email: null, name: null }, handoff: null, turnCount: 1, snapshot: {}, machineVersion: 1, releaseLease: false, owner },
    }) as SaveTurnInput;
    const failures: string[] = [];
    let renewals = 0;
    let saves = 0;
    const until = Date.now() + 3_000;
    // Both go on for 3 s and until each has run 6 times, so they overlap however slow a loaded machine makes them.
    const going = () => Date.now() < until || renewals < 6 || saves < 6;
    await Promise.all([
      (async () => {
        while (going()) {
          const still = await sessions.renewLeases(held, owner, 15_000).catch((err: { code?: string }) => void failures.push(err.code ?? String(err)));
          if (still) expect(still.size).toBe(held.length);
          renewals++;
        }
      })(),
      (async () => {
        while (going()) {
          const batch = [...held].sort(() => Math.random() - 0.5).slice(0, 64);
          await sessions.saveTurns(batch.map(turnEnd)).catch((err: { code?: string }) => void failures.push(err.code ?? String(err)));
          saves++;
        }
      })(),
    ]);
    expect(failures).toEqual([]);
    expect(renewals).toBeGreaterThan(5);
    expect(saves).toBeGreaterThan(5);
  }, 60_000);
});
