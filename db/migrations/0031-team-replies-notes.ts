import { sql, type Kysely } from 'kysely';

// Saved replies and private notes (docs/interfaces.md, "The team's tools"; docs/architecture.md, "Who handles a
// conversation"). Notes live in a table of their own, never among session_messages: every path to the customer (the
// widget's long poll, WhatsApp's sends, exports, the integrator) reads session_messages, so a note cannot reach one.
// A note's @mentions notify the colleague named: notifications gain the user they are for (null: the whole team).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('saved_replies')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('shortcut', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    // Who wrote it; null after the user was removed (then only owners and admins change it).
    .addColumn('created_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // A shortcut is one per workspace, whatever its capitals: typing "/Thanks" and "/thanks" finds the same reply.
  await sql`create unique index saved_replies_shortcut on saved_replies (workspace_id, lower(shortcut))`.execute(db);

  await db.schema
    .createTable('session_notes')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('session_id', 'uuid', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('author_user_id', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    // The author's name as it was, kept when the user is removed.
    .addColumn('author_name', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    // [{user_id, name}]: the colleagues its @mentions named.
    .addColumn('mentions', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('session_notes_session').on('session_notes').columns(['session_id', 'at']).execute();

  await db.schema.alterTable('notifications').addColumn('user_id', 'uuid', (c) => c.references('users.id').onDelete('cascade')).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('notifications').dropColumn('user_id').execute();
  await db.schema.dropTable('session_notes').execute();
  await db.schema.dropTable('saved_replies').execute();
}
