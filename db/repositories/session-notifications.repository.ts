/** The team's notifications and whether the team is available. */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { NotificationKind } from '../schema.ts';

/** Notifications added, listed and marked read; the workspace's team availability. */
export function sessionNotificationsRepository(db: Db) {
  return {
    async addNotification(row: { id: string; workspace_id: string; session_id: string | null; kind: NotificationKind; message: string }): Promise<void> {
      await db.insertInto('notifications').values({ ...row, read_at: null }).execute();
    },

    /** Marks a notification done (read); false when the workspace has no such notification. Done twice stays done. */
    async markNotificationRead(workspaceId: string, id: string, at: Date): Promise<boolean> {
      const result = await db
        .updateTable('notifications')
        .set({ read_at: sql<Date>`coalesce(read_at, ${at})` })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** The team's notifications, and with `userId` that user's own (a note's @mention of them); a colleague's own are not listed. */
    async notifications(workspaceId: string, limit: number, userId?: string) {
      return db
        .selectFrom('notifications')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where((eb) => (userId === undefined ? eb('user_id', 'is', null) : eb.or([eb('user_id', 'is', null), eb('user_id', '=', userId)])))
        .orderBy('created_at', 'desc')
        .limit(limit)
        .execute();
    },

    async teamAvailable(workspaceId: string): Promise<boolean> {
      const row = await db.selectFrom('workspaces').select('team_available').where('id', '=', workspaceId).executeTakeFirst();
      return row?.team_available ?? false;
    },

    async setTeamAvailable(workspaceId: string, available: boolean): Promise<void> {
      await db.updateTable('workspaces').set({ team_available: available }).where('id', '=', workspaceId).execute();
    },
  };
}
