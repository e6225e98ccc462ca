/** Table types of the team's tools (migration 0031): saved replies, and private notes on a conversation. */
import type { ColumnType } from 'kysely';
import type { Timestamp } from './columns.ts';

export interface SavedRepliesTable {
  id: string;
  workspace_id: string;
  /** Typed after `/` in the reply box: letters, digits, `-` and `_`; one per workspace whatever its capitals. */
  shortcut: string;
  /** The reply, with placeholders such as `{{customer.name}}` filled when it is inserted. */
  text: string;
  /** Who wrote it; null after that user was removed. */
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SessionNotesTable {
  id: string;
  workspace_id: string;
  session_id: string;
  /** Null after the author was removed; author_name keeps who it was. */
  author_user_id: string | null;
  author_name: string;
  text: string;
  /** `[{user_id, name}]`: the colleagues the note's @mentions named. */
  mentions: ColumnType<unknown, string | undefined, string>;
  at: Timestamp;
  /** When its author last changed its text (migration 0037); null: never. */
  edited_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}


