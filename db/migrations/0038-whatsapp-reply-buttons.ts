import type { Kysely } from 'kysely';

// WhatsApp's reply buttons (docs/whatsapp.md, "The satisfaction question"): the question a colleague's close puts goes
// out as an interactive message through the same queue as every reply, with its buttons on the row; the customer's tap
// comes back as an `interactive` message whose button id is kept with it.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // [{id, title}], at most 3: the reply buttons of an interactive message (kind `survey`); null for a text message.
  await db.schema.alterTable('whatsapp_outbound_messages').addColumn('buttons', 'jsonb').execute();
  // `interactive.button_reply.id` of a tap on a reply button (its title is the row's `text`); null for anything else.
  await db.schema.alterTable('whatsapp_inbound_messages').addColumn('reply_id', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('whatsapp_inbound_messages').dropColumn('reply_id').execute();
  await db.schema.alterTable('whatsapp_outbound_messages').dropColumn('buttons').execute();
}
