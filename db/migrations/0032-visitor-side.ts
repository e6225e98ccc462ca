import { sql, type Kysely } from 'kysely';

// The visitor's side (docs/webchat.md, "Typing, satisfaction and email"): when a web chat visitor was last seen and
// who is typing (one small row per conversation, written at most every few seconds), the satisfaction question asked
// after an agent closed a conversation and its answer, and the outbox of emails (a reply to a visitor who left), kept
// until SMTP took them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webchat_visitor_state')
    .addColumn('conversation_id', 'uuid', (c) => c.primaryKey().references('webchat_conversations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    // The widget's last long poll or write: the visitor is gone after VISITOR_GONE_MINUTES without one.
    .addColumn('seen_at', 'timestamptz')
    .addColumn('visitor_typing_at', 'timestamptz')
    .addColumn('agent_typing_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('session_satisfaction')
    .addColumn('session_id', 'uuid', (c) => c.primaryKey().references('sessions.id').onDelete('cascade'))
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('channel', 'text', (c) => c.notNull())
    // When the question was put (an agent closed the conversation); asked again after a later close while unanswered.
    .addColumn('asked_at', 'timestamptz', (c) => c.notNull())
    .addColumn('score', 'integer', (c) => c.check(sql`score between 1 and 5`))
    .addColumn('comment', 'text')
    .addColumn('answered_at', 'timestamptz')
    .execute();
  await sql`create index session_satisfaction_answered on session_satisfaction (workspace_id, answered_at) where answered_at is not null`.execute(db);

  await db.schema
    .createTable('email_outbox')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.references('workspaces.id').onDelete('cascade'))
    // What it is for: 'visitor_reply' now; invites and password resets later.
    .addColumn('kind', 'text', (c) => c.notNull())
    // The conversation it belongs to (erased with it); null for mail about an account.
    .addColumn('session_id', 'uuid', (c) => c.references('sessions.id').onDelete('cascade'))
    .addColumn('to_address', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('text_body', 'text', (c) => c.notNull())
    .addColumn('html_body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sent_at', 'timestamptz')
    // Given up after MAX_EMAIL_ATTEMPTS (or refused for good by the server).
    .addColumn('failed_at', 'timestamptz')
    .addColumn('last_error', 'text')
    .execute();
  await sql`create index email_outbox_due on email_outbox (next_attempt_at) where sent_at is null and failed_at is null`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('email_outbox').execute();
  await db.schema.dropTable('session_satisfaction').execute();
  await db.schema.dropTable('webchat_visitor_state').execute();
}
