/** The attendant region of a session (migration 0019): who handles it, the hand-back deadline, the agents. */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { jsonb as json } from '../json.ts';
import type { HandledBy } from '../schema.ts';

/** The attendant columns a change of the attendant region writes (migration 0019). */
export interface AttendantWrite {
  id: string;
  state: string;
  status: 'active' | 'ended';
  snapshot: unknown;
  machineVersion: number;
  handledBy: HandledBy;
  agentUserId: string | null;
  waitingSince: string | null;
  handbackAt: string | null;
  attendantRevision: number;
}

/** Attendant changes, the hand-backs due, the workspace's hand-back delay and the users who may hold a conversation. */
export function sessionAttendantRepository(db: Db) {
  return {
    /**
     * A change of the attendant region (take-over, hand-back, close, the hand-back deadline): the snapshot and its
     * projection, written only over the revision it was made from (`expectedRevision`), and the lease given back. False
     * when another process changed who handles the session meanwhile: then nothing was written. One conditional
     * UPDATE, so two take-overs at once on two processes cannot both win.
     */
    async saveAttendant(write: AttendantWrite, expectedRevision: number, owner: string): Promise<boolean> {
      const result = await db
        .updateTable('sessions')
        .set({
          state: write.state,
          status: write.status,
          snapshot: json(write.snapshot),
          machine_version: write.machineVersion,
          handled_by: write.handledBy,
          agent_user_id: write.agentUserId,
          waiting_since: write.waitingSince,
          handback_at: write.handbackAt,
          attendant_revision: write.attendantRevision,
          updated_at: sql<Date>`now()`,
          lease_owner: sql`case when lease_owner = ${owner} then null else lease_owner end`,
          lease_until: sql`case when lease_owner = ${owner} then null else lease_until end`,
        })
        .where('id', '=', write.id)
        .where('attendant_revision', '=', expectedRevision)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** Waiting sessions whose hand-back deadline passed (the sweep hands them back to the bot). */
    async dueHandbacks(limit: number) {
      return db
        .selectFrom('sessions')
        .select(['id', 'workspace_id', 'channel', 'external_id'])
        .where('handled_by', '=', 'waiting')
        .where('handback_at', '<=', sql<Date>`now()`)
        .orderBy('handback_at')
        .limit(limit)
        .execute();
    },

    async handbackAfterMinutes(workspaceId: string): Promise<number | null> {
      const row = await db.selectFrom('workspaces').select('handback_after_minutes').where('id', '=', workspaceId).executeTakeFirst();
      return row?.handback_after_minutes ?? null;
    },

    async setHandbackAfterMinutes(workspaceId: string, minutes: number | null): Promise<void> {
      await db.updateTable('workspaces').set({ handback_after_minutes: minutes }).where('id', '=', workspaceId).execute();
    },

    /** A user's email and name (a holder shown by name, also after they were removed). */
    async userNamed(userId: string): Promise<{ email: string; name: string | null } | undefined> {
      return db.selectFrom('users').select(['email', 'name']).where('id', '=', userId).executeTakeFirst();
    },
  };
}
