import { sql, type Kysely } from 'kysely';

// The team's side (docs/architecture.md, "Who handles a conversation"): who handles a conversation, the messages of
// the chat channels in one ordered list (the inbox, the web chat's long poll), agent replies on WhatsApp, the web
// chat's visitor token and the workspace's hand-back setting.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A projection of the session statechart's `handler` region, written with the snapshot, for the inbox's queries.
  await db.schema
    .alterTable('sessions')
    .addColumn('handled_by', 'text', (c) => c.notNull().defaultTo('bot').check(sql`handled_by in ('bot', 'waiting', 'agent')`))
    .addColumn('agent_user_id', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('waiting_since', 'timestamptz')
    // The waiting conversation goes back to the bot at this time (handback_after_minutes); null: never.
    .addColumn('handback_at', 'timestamptz')
    // Bumped by every change of the handler region; a take-over writes only over the revision it read.
    .addColumn('handler_revision', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`create index sessions_waiting on sessions (workspace_id, waiting_since) where handled_by = 'waiting'`.execute(db);
  await sql`create index sessions_handback_due on sessions (handback_at) where handled_by = 'waiting' and handback_at is not null`.execute(db);

  await db.schema
    .createTable('session_messages')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    // The order of a conversation's messages (the web chat's `after` cursor reads it).
    .addColumn('seq', 'bigserial', (c) => c.notNull().unique())
    .addColumn('session_id', 'uuid', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('from', 'text', (c) => c.notNull().check(sql`"from" in ('customer', 'bot', 'agent')`))
    .addColumn('text', 'text', (c) => c.notNull())
    // A bot reply's source (integrator, ai, knowledge_base, fallback) or null.
    .addColumn('source', 'text')
    .addColumn('agent_user_id', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    // The turn a customer message or bot reply belongs to (null: held while a person handles the conversation).
    .addColumn('turn_id', 'text')
    // WhatsApp: the outgoing row that carries it (delivery status lives there).
    .addColumn('outbound_id', 'uuid')
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('session_messages_session').on('session_messages').columns(['session_id', 'seq']).execute();
  // A turn's message is written once, however often its turn is retried (a WhatsApp message after a crash).
  await sql`create unique index session_messages_turn on session_messages (session_id, turn_id, "from") where turn_id is not null`.execute(db);
  await sql`create index session_messages_outbound on session_messages (outbound_id) where outbound_id is not null`.execute(db);

  await db.schema.alterTable('workspaces').addColumn('handback_after_minutes', 'integer').execute();
  // SHA-256 of the visitor token (POST /v1/webchat/conversations answers it once).
  await db.schema.alterTable('webchat_conversations').addColumn('visitor_token_hash', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webchat_conversations').dropColumn('visitor_token_hash').execute();
  await db.schema.alterTable('workspaces').dropColumn('handback_after_minutes').execute();
  await db.schema.dropTable('session_messages').execute();
  for (const column of ['handler_revision', 'handback_at', 'waiting_since', 'agent_user_id', 'handled_by']) {
    await db.schema.alterTable('sessions').dropColumn(column).execute();
  }
}
