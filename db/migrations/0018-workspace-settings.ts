import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The workspace's own settings an owner changes on the dashboard (docs/webchat.md, "Settings on the dashboard"):
  // its time zone (null: not chosen yet) and how long a web chat may stay quiet before it ends.
  await db.schema.alterTable('workspaces').addColumn('time_zone', 'text').execute();
  await db.schema
    .alterTable('workspaces')
    .addColumn('webchat_idle_minutes', 'integer', (c) => c.notNull().defaultTo(30))
    .execute();
  // The widget's switch: off answers visitors that chat is closed, whatever the allowed origins say.
  await db.schema
    .alterTable('webchat_settings')
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .execute();
  // The idle sweep looks for active web chats by their last change.
  await sql`create index sessions_active_webchat on sessions (updated_at) where channel = 'webchat' and status = 'active'`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('sessions_active_webchat').execute();
  await db.schema.alterTable('webchat_settings').dropColumn('enabled').execute();
  await db.schema.alterTable('workspaces').dropColumn('webchat_idle_minutes').execute();
  await db.schema.alterTable('workspaces').dropColumn('time_zone').execute();
}
