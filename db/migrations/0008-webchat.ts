import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Website chat (protocol §1.3, §6; docs/webchat.md). One row per conversation; its id is the `conversation_id` of the
  // webhooks and the session's external_id, so the dashboard finds the turns under sessions.
  await db.schema
    .createTable('webchat_conversations')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('page_url', 'text', (c) => c.notNull())
    .addColumn('language', 'text')
    // protocol §6 new_lead: the contact details the visitor left (the latest ones).
    .addColumn('visitor_name', 'text')
    .addColumn('visitor_email', 'text')
    .addColumn('visitor_phone', 'text')
    .addColumn('lead_at', 'timestamptz')
    // protocol §6 escalation: each type is emitted at most once per conversation; these mark that it was.
    .addColumn('escalation_requested_at', 'timestamptz')
    .addColumn('escalation_detected_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('webchat_conversations_workspace').on('webchat_conversations').columns(['workspace_id', 'created_at']).execute();

  // The widget's settings per workspace: the web origins allowed to call the website-chat API from a browser.
  await db.schema
    .createTable('webchat_settings')
    .addColumn('workspace_id', 'uuid', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    .addColumn('allowed_origins', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webchat_settings').execute();
  await db.schema.dropTable('webchat_conversations').execute();
}
