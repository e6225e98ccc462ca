/** The sessions' turn leases: which process runs a session's turn now (docs/reliability.md "Leases"). */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { prepared } from '../prepared.ts';

/** Taking, renewing and giving back leases; ending the phone sessions no process continues. */
export function sessionLeasesRepository(db: Db) {
  return {
    /**
     * Takes the session's turn lease for `owner` when it is free, expired or already ours, and returns the session's
     * saved turn count with it (in the same statement), so the caller sees whether another process advanced the
     * session since its copy was loaded. Returns null when another process holds it: that process is running a turn
     * of this session now.
     */
    async acquireLease(sessionId: string, owner: string, leaseMs: number): Promise<{ turnCount: number; attendantRevision: number } | null> {
      const row = await db
        .updateTable('sessions')
        .set({ lease_owner: owner, lease_until: sql<Date>`now() + ${`${leaseMs} milliseconds`}::interval` })
        .where('id', '=', sessionId)
        .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_owner', '=', owner), eb('lease_until', '<', sql<Date>`now()`)]))
        .returning(['turn_count', 'attendant_revision'])
        .modifyEnd(prepared('session_lease'))
        .executeTakeFirst();
      return row ? { turnCount: row.turn_count, attendantRevision: row.attendant_revision } : null;
    },

    /**
     * Extends the leases `owner` holds on these sessions by `leaseMs` from now; returns the ids still held (a lease
     * that expired and was taken by another process meanwhile is not among them).
     */
    async renewLeases(sessionIds: readonly string[], owner: string, leaseMs: number): Promise<Set<string>> {
      if (sessionIds.length === 0) return new Set();
      // Rows locked in id order, as the turn save locks them (LOCK_IN_ID_ORDER).
      const { rows } = await sql<{ id: string }>`${prepared('session_lease_renew')}
        with locked as (
          select id from sessions where id = any(${sql.val(sessionIds)}::uuid[]) and lease_owner = ${owner} order by id for update
        )
        update sessions s set lease_until = now() + ${`${leaseMs} milliseconds`}::interval
        from locked where s.id = locked.id
        returning s.id`.execute(db);
      return new Set(rows.map((r) => r.id));
    },

    /** A stopping process gives back every lease it holds. */
    async releaseLeasesOf(owner: string): Promise<void> {
      await db.updateTable('sessions').set({ lease_owner: null, lease_until: null }).where('lease_owner', '=', owner).execute();
    },

    /**
     * Ends the phone sessions nobody continues: still `active`, quiet (no write) for `quietMs`, and with no lease in
     * force. A live call's process renews its held lease every few seconds, so such a session has no process behind
     * it: it was handed back on SIGTERM and no instance took the call again, or its process died. Returns how many.
     */
    async endAbandonedCalls(quietMs: number): Promise<number> {
      const result = await db
        .updateTable('sessions')
        .set({ status: 'ended', state: 'ended', lease_owner: null, lease_until: null, updated_at: sql<Date>`now()` })
        .where('channel', '=', 'phone')
        .where('status', '=', 'active')
        .where('updated_at', '<', sql<Date>`now() - ${`${quietMs} milliseconds`}::interval`)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', sql<Date>`now()`)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async releaseLease(sessionId: string, owner: string): Promise<void> {
      await db.updateTable('sessions').set({ lease_owner: null, lease_until: null }).where('id', '=', sessionId).where('lease_owner', '=', owner).execute();
    },
  };
}
