/**
 * The one lease helper (src/leases/lease-keeper.ts, docs/reliability.md "Leases") on both databases: it claims, renews
 * every third of the lease while the work runs (one statement for all it holds), lets an ended lease run out, and
 * reports a lease another engine took over, whose final write is then fenced.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { sessionsRepository, type SaveTurnInput } from '../../db/repositories/sessions.repository.ts';
import { whatsappRepository } from '../../db/repositories/whatsapp.repository.ts';
import { createLeaseKeeper, type LeaseStore } from '../../src/leases/lease-keeper.ts';
import { createLogger } from '../../src/log.ts';
import { describeEachDatabase } from '../helpers/db.ts';

const logger = createLogger('silent');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeEachDatabase('the lease keeper', (get) => {
  async function sessionsOf(count: number): Promise<string[]> {
    const db = get().db;
    const workspaceId = randomUUID();
    await db.insertInto('workspaces').values({ id: workspaceId, name: 'leases' }).execute();
    const rows = await sql<{ id: string }>`insert into sessions (id, workspace_id, channel, external_id, machine_version)
      select gen_random_uuid(), ${workspaceId}, 'whatsapp', 'wa-' || g, 1 from generate_series(1, ${count}::int) g returning id`.execute(db);
    return rows.rows.map((r) => r.id);
  }

  /** The sessions' lease columns as the keeper's store, counting its statements. */
  function sessionStore(): LeaseStore & { calls: number } {
    const repo = sessionsRepository(get().db);
    const store = {
      calls: 0,
      renew: (ids: readonly string[], owner: string, ms: number) => {
        store.calls++;
        return repo.renewLeases(ids, owner, ms);
      },
    };
    return store;
  }

  it('keeps a lease in force while the work runs, far past its length, with one statement per beat for all it holds', async () => {
    const repo = sessionsRepository(get().db);
    const ids = await sessionsOf(20);
    for (const id of ids) expect(await repo.acquireLease(id, 'engine-a', 1_500)).not.toBeNull();
    const store = sessionStore();
    const keeper = createLeaseKeeper({ kind: 'session', owner: 'engine-a', store, logger, leaseMs: 1_500 });
    const leases = ids.map((id) => keeper.hold(id));
    try {
      // Four lease lengths: without the heartbeat another engine would have taken every one of them. (A lease of
      // 1.5 s, not less: on a loaded machine a beat every 0.5 s must still land before the lease runs out.)
      await sleep(6_000);
      // Read now: the beats go on while engine B tries below.
      const calls = store.calls;
      for (const id of ids) expect(await repo.acquireLease(id, 'engine-b', 1_500)).toBeNull();
      expect(leases.every((l) => !l.lost)).toBe(true);
      // Every 0.5 s one statement renews all twenty (a slow beat on a busy machine only lowers the count).
      expect(calls).toBeGreaterThanOrEqual(4);
      expect(calls).toBeLessThanOrEqual(14);
    } finally {
      keeper.stop();
    }
  });

  it('an ended lease is no longer renewed: it runs out and another engine takes the work', async () => {
    const repo = sessionsRepository(get().db);
    const [id] = await sessionsOf(1);
    await repo.acquireLease(id!, 'engine-a', 300);
    const keeper = createLeaseKeeper({ kind: 'session', owner: 'engine-a', store: sessionStore(), logger, leaseMs: 300 });
    try {
      keeper.hold(id!).end();
      expect(keeper.size()).toBe(0);
      await sleep(450);
      expect(await repo.acquireLease(id!, 'engine-b', 300)).not.toBeNull();
    } finally {
      keeper.stop();
    }
  });

  it('a lease taken over meanwhile is reported lost (its signal aborts) and the turn it ran is not written', async () => {
    const db = get().db;
    const repo = sessionsRepository(db);
    const [id] = await sessionsOf(1);
    await repo.acquireLease(id!, 'engine-a', 60_000);
    const keeper = createLeaseKeeper({ kind: 'session', owner: 'engine-a', store: sessionStore(), logger, leaseMs: 60_000 });
    try {
      const lease = keeper.hold(id!);
      // Engine A stalled past its lease; engine B took the session and runs its turn now.
      await db.updateTable('sessions').set({ lease_owner: 'engine-b', lease_until: sql<Date>`now() + interval '1 minute'` }).where('id', '=', id!).execute();
      await keeper.renewNow();
      expect(lease.lost).toBe(true);
      expect(lease.signal.aborted).toBe(true);
      expect(keeper.size()).toBe(0);

      const turnEnd = (owner: string): SaveTurnInput => ({
        turn: { id: randomUUID(), session_id: id!, ordinal: 1, status: 'completed', language: 'en', customer_message: `from ${owner}`, reply: 'Tomorrow.', source: 'integrator', botlink: null, knowledge: null, tool_rounds: [], handoff: null, timings: {}, errors: [], started_at: new Date(), ended_at: new Date() },
        session: { id: id!, state: 'idle', status: 'active', language: 'en', customer: { phone: null, email: null, name: null }, handoff: null, turnCount: 1, snapshot: {}, machineVersion: 1, releaseLease: true, owner },
      });
      // A's late turn end is fenced; B's is written and gives the lease back.
      await repo.saveTurns([turnEnd('engine-a')]);
      expect((await repo.turns(id!)).map((t) => t.customer_message)).toEqual([]);
      expect((await db.selectFrom('sessions').select('lease_owner').where('id', '=', id!).executeTakeFirstOrThrow()).lease_owner).toBe('engine-b');
      await repo.saveTurns([turnEnd('engine-b')]);
      expect((await repo.turns(id!)).map((t) => t.customer_message)).toEqual(['from engine-b']);
    } finally {
      keeper.stop();
    }
  });

  it('claims through the keeper; a WhatsApp answer of an attempt that was claimed again is not written', async () => {
    const db = get().db;
    const whatsapp = whatsappRepository(db);
    const workspaceId = randomUUID();
    await db.insertInto('workspaces').values({ id: workspaceId, name: 'leases' }).execute();
    const id = randomUUID();
    await db
      .insertInto('whatsapp_inbound_messages')
      .values({ id, workspace_id: workspaceId, message_id: 'wamid.LEASE1', event_id: null, phone_number_id: '1065', wa_id: '31600000001', type: 'text', text: 'Hello', profile_name: null, sent_at: new Date(), created_at: new Date() })
      .execute();
    // A 1 s lease renewed every third of it: a database round trip slowed by a loaded machine stays well inside it.
    const keeper = createLeaseKeeper({ kind: 'whatsapp_inbound', owner: 'engine-a', store: { renew: (ids, o, ms) => whatsapp.renewInbound(ids, o, ms) }, logger, leaseMs: 1_000 });
    try {
      const [claimed] = await keeper.claim((owner, ms) => whatsapp.claimInbound(owner, ms, 10));
      expect(claimed!.row.id).toBe(id);
      expect(await whatsapp.startInbound(id, 'engine-a', 'conv-1')).toBe(true);
      await sleep(2_300);
      // Still A's after more than two lease lengths.
      expect(await whatsapp.claimInbound('engine-b', 1_000, 10)).toEqual([]);
      // A stalls; its lease runs out and A itself claims the message again (a second attempt): the first is fenced.
      claimed!.lease.end();
      await sleep(1_400);
      const [again] = await keeper.claim((owner, ms) => whatsapp.claimInbound(owner, ms, 10));
      expect(again!.row.id).toBe(id);
      expect(await whatsapp.startInbound(id, 'engine-a', 'conv-1')).toBe(true);
      const stale = await whatsapp.finishInbound({ id, owner: 'engine-a', attempts: 1, state: 'done', outcome: 'reply', sendLeaseMs: 300 });
      expect(stale.finished).toBe(false);
      const current = await whatsapp.finishInbound({ id, owner: 'engine-a', attempts: 2, state: 'done', outcome: 'reply', sendLeaseMs: 300 });
      expect(current.finished).toBe(true);
      // Done: the next heartbeat finds nothing to renew and lets go.
      await keeper.renewNow();
      expect(again!.lease.lost).toBe(true);
      expect(keeper.size()).toBe(0);
    } finally {
      keeper.stop();
    }
  });
});
