/** The team's saved replies (`saved_replies`, migration 0031): one per shortcut and workspace, whatever its capitals. */
import type { Selectable } from 'kysely';
import type { Db } from '../database.ts';
import type { SavedRepliesTable } from '../schema.ts';
import { isUniqueViolation } from '../unique-violation.ts';

export type SavedReply = Selectable<SavedRepliesTable>;

export function savedRepliesRepository(db: Db) {
  return {
    /** The workspace's saved replies, by shortcut. */
    async list(workspaceId: string, limit: number): Promise<SavedReply[]> {
      return db.selectFrom('saved_replies').selectAll().where('workspace_id', '=', workspaceId).orderBy('shortcut').limit(limit).execute();
    },

    async count(workspaceId: string): Promise<number> {
      const row = await db.selectFrom('saved_replies').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async find(workspaceId: string, id: string): Promise<SavedReply | undefined> {
      return db.selectFrom('saved_replies').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },

    /** Adds a saved reply; 'taken' when the workspace has that shortcut already. */
    async add(row: { id: string; workspace_id: string; shortcut: string; text: string; created_by: string | null }): Promise<SavedReply | 'taken'> {
      try {
        return await db.insertInto('saved_replies').values(row).returningAll().executeTakeFirstOrThrow();
      } catch (err) {
        if (isUniqueViolation(err, 'saved_replies_shortcut')) return 'taken';
        throw err;
      }
    },

    /** Changes a saved reply; undefined when the workspace has none with that id, 'taken' when the shortcut is another's. */
    async update(workspaceId: string, id: string, change: { shortcut: string; text: string }, at: Date): Promise<SavedReply | 'taken' | undefined> {
      try {
        return await db
          .updateTable('saved_replies')
          .set({ shortcut: change.shortcut, text: change.text, updated_at: at })
          .where('workspace_id', '=', workspaceId)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirst();
      } catch (err) {
        if (isUniqueViolation(err, 'saved_replies_shortcut')) return 'taken';
        throw err;
      }
    },

    async remove(workspaceId: string, id: string): Promise<boolean> {
      const result = await db.deleteFrom('saved_replies').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

export type SavedRepliesRepository = ReturnType<typeof savedRepliesRepository>;
