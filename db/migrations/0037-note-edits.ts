import { sql, type Kysely } from 'kysely';

// A private note can be edited and deleted (docs/interfaces.md, "The team's tools"): `edited_at` says it was changed.
// A mention notification names the note it came from, so an edit notifies only colleagues not told of that note before
// (one row per note and colleague), and deleting a note takes its mentions' notifications with it. Notifications from
// before this migration are matched to their note by what the note wrote with them (its session, its time, a colleague
// it mentions), where exactly one note matches.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('session_notes').addColumn('edited_at', 'timestamptz').execute();
  await db.schema.alterTable('notifications').addColumn('note_id', 'uuid', (c) => c.references('session_notes.id').onDelete('cascade')).execute();
  await sql`
    update notifications n set note_id = (
      select sn.id from session_notes sn
      where sn.session_id = n.session_id and sn.at = n.created_at
        and exists (select 1 from jsonb_array_elements(sn.mentions) m where m ->> 'user_id' = n.user_id::text))
    where n.kind = 'mention' and n.user_id is not null and (
      select count(*) from session_notes sn
      where sn.session_id = n.session_id and sn.at = n.created_at
        and exists (select 1 from jsonb_array_elements(sn.mentions) m where m ->> 'user_id' = n.user_id::text)) = 1`.execute(db);
  await sql`create unique index notifications_note_user on notifications (note_id, user_id) where note_id is not null`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index notifications_note_user`.execute(db);
  await db.schema.alterTable('notifications').dropColumn('note_id').execute();
  await db.schema.alterTable('session_notes').dropColumn('edited_at').execute();
}
