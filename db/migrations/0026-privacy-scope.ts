import { sql, type Kysely } from 'kysely';

// One customer's export and erasure, exact and within one workspace (docs/privacy.md, "Export and erasure").
// - Meta's raw webhook bodies learn their workspace when they are read (before, they had none, and an erasure in one
//   workspace deleted another's bodies), and can be marked to be erased as soon as they are processed: a body still
//   waiting is never deleted under the worker.
// - A web chat keeps the leads it replaced, so an earlier email or number still finds the chat.
// - `privacy_jsonb` reads a text as JSON, or null when it is not JSON (a signed body that is not Meta's shape), so a
//   query over raw bodies matches JSON fields instead of substrings and never fails on one odd body.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function privacy_jsonb(value text) returns jsonb language plpgsql immutable strict as $$
    begin
      return value::jsonb;
    exception when others then
      return null;
    end
    $$`.execute(db);

  await db.schema
    .alterTable('whatsapp_webhook_events')
    .addColumn('workspace_id', 'uuid', (c) => c.references('workspaces.id').onDelete('cascade'))
    .addColumn('erase_after_processing', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  // The workspace's bodies by age (its retention) and for an erasure.
  await sql`create index whatsapp_webhook_events_workspace on whatsapp_webhook_events (workspace_id, processed_at) where workspace_id is not null`.execute(db);
  // Bodies read before: the workspace of the messages they held, else the one that has their number now.
  await sql`
    update whatsapp_webhook_events e set workspace_id = m.workspace_id
    from (select distinct on (event_id) event_id, workspace_id from whatsapp_inbound_messages where event_id is not null) m
    where m.event_id = e.id`.execute(db);
  await sql`
    update whatsapp_webhook_events e set workspace_id = a.workspace_id
    from whatsapp_accounts a
    where e.workspace_id is null and e.processed_at is not null
      and a.phone_number_id = privacy_jsonb(e.body) #>> '{entry,0,changes,0,value,metadata,phone_number_id}'`.execute(db);

  await db.schema
    .createTable('webchat_earlier_leads')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('conversation_id', 'uuid', (c) => c.notNull().references('webchat_conversations.id').onDelete('cascade'))
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('visitor_name', 'text')
    .addColumn('visitor_email', 'text')
    .addColumn('visitor_phone', 'text')
    .addColumn('lead_at', 'timestamptz')
    .addColumn('replaced_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index webchat_earlier_leads_conversation on webchat_earlier_leads (conversation_id)`.execute(db);
  await sql`create index webchat_earlier_leads_email on webchat_earlier_leads (workspace_id, lower(visitor_email))`.execute(db);
  // Leads replaced before: their new_lead payloads still in the outbox that differ from the chat's lead now.
  await sql`
    insert into webchat_earlier_leads (conversation_id, workspace_id, visitor_name, visitor_email, visitor_phone, lead_at, replaced_at)
    select c.id, c.workspace_id, e.payload->>'name', e.payload->>'email', e.payload->>'phone', e.created_at, now()
    from webhook_events e
    join webchat_conversations c on c.workspace_id = e.workspace_id and c.id::text = e.payload->>'conversation_id'
    where e.event = 'new_lead'
      and (c.visitor_name, c.visitor_email, c.visitor_phone) is distinct from (e.payload->>'name', e.payload->>'email', e.payload->>'phone')`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webchat_earlier_leads').execute();
  await sql`drop index whatsapp_webhook_events_workspace`.execute(db);
  await db.schema.alterTable('whatsapp_webhook_events').dropColumn('erase_after_processing').dropColumn('workspace_id').execute();
  await sql`drop function privacy_jsonb(text)`.execute(db);
}
