import { sql, type Kysely } from 'kysely';

// WhatsApp (src/channels/whatsapp, docs/whatsapp.md). The path of a customer message through these tables:
//   raw webhook body (stored before the 200) → inbound message (deduplicated by Meta's id) → outbound message (the
//   reply, with its send attempts and delivery status).
// Each stage is claimed by one process with FOR UPDATE SKIP LOCKED and a lease, so several processes share the work
// and a crashed one's rows are taken over when its lease runs out.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('whatsapp_accounts')
    .addColumn('workspace_id', 'uuid', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    // The workspace of an incoming webhook is the one with its metadata.phone_number_id (docs/interfaces.md).
    .addColumn('phone_number_id', 'text', (c) => c.notNull())
    // The Graph API access token, sealed with the master key and bound to `whatsapp-token:<workspace id>`.
    .addColumn('access_token_sealed', 'text', (c) => c.notNull())
    .addColumn('token_hint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('whatsapp_accounts_phone_number_id', ['phone_number_id'])
    .execute();

  await db.schema
    .createTable('whatsapp_webhook_events')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    // The body exactly as Meta sent it (UTF-8), signature already checked; never re-serialised.
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('processed_at', 'timestamptz')
    // processed | ignored | unknown_number | invalid | failed
    .addColumn('outcome', 'text')
    .addColumn('detail', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'timestamptz')
    .execute();
  await sql`create index whatsapp_webhook_events_pending on whatsapp_webhook_events (received_at) where processed_at is null`.execute(db);
  await sql`create index whatsapp_webhook_events_processed on whatsapp_webhook_events (processed_at) where processed_at is not null`.execute(db);

  await db.schema
    .createTable('whatsapp_conversations')
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('wa_id', 'text', (c) => c.notNull())
    // The session_id sent to the integrator (protocol §2.1): a new one after CONVERSATION_IDLE_MS of silence.
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('sequence', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_message_at', 'timestamptz', (c) => c.notNull())
    // contacts[0].profile.name as the customer set it in WhatsApp (shown in the dashboard; never sent to integrators).
    .addColumn('profile_name', 'text')
    // When the "I can only read text" notice was last sent (at most one per UNSUPPORTED_NOTICE_INTERVAL_MS).
    .addColumn('notice_at', 'timestamptz')
    .addPrimaryKeyConstraint('whatsapp_conversations_pk', ['workspace_id', 'wa_id'])
    .execute();

  await db.schema
    .createTable('whatsapp_inbound_messages')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    // Meta's wamid; Meta retries a webhook for days, so this is what makes a message count once.
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('event_id', 'uuid', (c) => c.references('whatsapp_webhook_events.id').onDelete('set null'))
    .addColumn('phone_number_id', 'text', (c) => c.notNull())
    .addColumn('wa_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('text', 'text')
    // contacts[].profile.name of the sender, carried to the conversation row when the message is answered.
    .addColumn('profile_name', 'text')
    .addColumn('sent_at', 'timestamptz', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('pending').check(sql`state in ('pending', 'done', 'failed')`))
    // reply | notice | notice_recent | silent | empty | cancelled | failed
    .addColumn('outcome', 'text')
    .addColumn('session_external_id', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('processed_at', 'timestamptz')
    .addUniqueConstraint('whatsapp_inbound_messages_message', ['workspace_id', 'message_id'])
    .execute();
  await sql`create index whatsapp_inbound_messages_pending on whatsapp_inbound_messages (sent_at) where state = 'pending'`.execute(db);

  await db.schema
    .createTable('whatsapp_outbound_messages')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('inbound_id', 'uuid', (c) => c.references('whatsapp_inbound_messages.id').onDelete('set null'))
    .addColumn('phone_number_id', 'text', (c) => c.notNull())
    .addColumn('wa_id', 'text', (c) => c.notNull())
    // reply (the session's answer) | notice (the text-only notice)
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    // messages[0].id of the send answer; status webhooks name it.
    .addColumn('message_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('queued').check(sql`status in ('queued', 'accepted', 'sent', 'failed', 'delivered', 'read')`))
    // The order statuses may only move in (read never goes back to delivered): see STATUS_RANK.
    .addColumn('status_rank', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'timestamptz')
    .addColumn('http_status', 'integer')
    .addColumn('error_code', 'integer')
    .addColumn('error_detail', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('accepted_at', 'timestamptz')
    .addColumn('sent_at', 'timestamptz')
    .addColumn('delivered_at', 'timestamptz')
    .addColumn('read_at', 'timestamptz')
    .addColumn('failed_at', 'timestamptz')
    .addUniqueConstraint('whatsapp_outbound_messages_message', ['workspace_id', 'message_id'])
    .execute();
  await sql`create index whatsapp_outbound_messages_queued on whatsapp_outbound_messages (next_attempt_at) where status = 'queued'`.execute(db);
  await db.schema.createIndex('whatsapp_outbound_messages_inbound').on('whatsapp_outbound_messages').column('inbound_id').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['whatsapp_outbound_messages', 'whatsapp_inbound_messages', 'whatsapp_conversations', 'whatsapp_webhook_events', 'whatsapp_accounts']) {
    await db.schema.dropTable(table).execute();
  }
}
