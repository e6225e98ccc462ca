/**
 * The team's private notes on a conversation (`session_notes`, migration 0031), and the colleagues they can mention.
 * Kept apart from `session_messages`, which every path to the customer reads, so that no such path can read a note.
 * A mention's notification names its note (migration 0037): one per note and colleague, so an edit tells only those
 * not told before, and deleting the note deletes them.
 */
import type { Selectable } from 'kysely';
import type { Db } from '../database.ts';
import type { SessionNotesTable } from '../schema.ts';

export type SessionNote = Selectable<SessionNotesTable>;

export interface NewNote {
  id: string;
  workspace_id: string;
  session_id: string;
  author_user_id: string;
  author_name: string;
  text: string;
  mentions: { user_id: string; name: string }[];
  at: Date;
}

/** A notification of a note's @mention, for one colleague. */
export interface MentionNotification {
  id: string;
  user_id: string;
  message: string;
}

/**
 * Notifications of a note's mentions, each colleague once per note: returns the colleagues newly told (one already
 * told of this note, by its first writing or an earlier edit, is not told again).
 */
async function notifyMentions(
  trx: Db,
  note: { id: string; workspace_id: string; session_id: string },
  at: Date,
  notifications: MentionNotification[],
): Promise<string[]> {
  if (notifications.length === 0) return [];
  const rows = await trx
    .insertInto('notifications')
    .values(notifications.map((n) => ({ ...n, workspace_id: note.workspace_id, session_id: note.session_id, note_id: note.id, kind: 'mention' as const, read_at: null, created_at: at })))
    .onConflict((oc) => oc.columns(['note_id', 'user_id']).where('note_id', 'is not', null).doNothing())
    .returning('user_id')
    .execute();
  return rows.map((r) => r.user_id).filter((id): id is string => id !== null);
}

export function sessionNotesRepository(db: Db) {
  return {
    /** Stores a note and, in the same transaction, a notification for each colleague it mentions. */
    async add(note: NewNote, notifications: MentionNotification[]): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('session_notes').values({ ...note, mentions: JSON.stringify(note.mentions) }).execute();
        await notifyMentions(trx, note, note.at, notifications);
      });
    },

    /** One note of a session of the workspace; undefined for another session's or workspace's. */
    async find(workspaceId: string, sessionId: string, noteId: string): Promise<SessionNote | undefined> {
      return db.selectFrom('session_notes').selectAll().where('id', '=', noteId).where('session_id', '=', sessionId).where('workspace_id', '=', workspaceId).executeTakeFirst();
    },

    /**
     * A note's new text and mentions, and in the same transaction a notification for each colleague it mentions who was
     * not told of this note before. Returns the note as it is now and who was told now; undefined when it is gone.
     */
    async edit(
      note: { id: string; workspace_id: string; session_id: string },
      change: { text: string; mentions: NewNote['mentions']; at: Date },
      notifications: MentionNotification[],
    ): Promise<{ note: SessionNote; notified: string[] } | undefined> {
      return db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable('session_notes')
          .set({ text: change.text, mentions: JSON.stringify(change.mentions), edited_at: change.at })
          .where('id', '=', note.id)
          .returningAll()
          .executeTakeFirst();
        if (!row) return undefined;
        return { note: row, notified: await notifyMentions(trx, note, change.at, notifications) };
      });
    },

    /** Deletes a note (its mentions' notifications go with it); false when it was gone already. */
    async remove(noteId: string): Promise<boolean> {
      const result = await db.deleteFrom('session_notes').where('id', '=', noteId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** A session's notes, oldest first. */
    async forSession(sessionId: string, limit: number): Promise<SessionNote[]> {
      return db.selectFrom('session_notes').selectAll().where('session_id', '=', sessionId).orderBy('at').orderBy('id').limit(limit).execute();
    },

    /** The workspace's users who can be mentioned: not revoked. */
    async colleagues(workspaceId: string): Promise<{ id: string; email: string; name: string | null }[]> {
      return db.selectFrom('users').select(['id', 'email', 'name']).where('workspace_id', '=', workspaceId).where('revoked_at', 'is', null).execute();
    },
  };
}

export type SessionNotesRepository = ReturnType<typeof sessionNotesRepository>;
