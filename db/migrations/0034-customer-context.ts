import { sql, type Kysely } from 'kysely';

// The customer panel beside a conversation (docs/architecture.md, "Who handles a conversation"): the web chat keeps
// the visitor's browser time zone (an IANA name the widget may send when a chat starts), so the team sees the
// visitor's local time. Null: not sent; the panel then reads the zone from a phone number's country, when it can.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table webchat_conversations add column time_zone text`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table webchat_conversations drop column time_zone`.execute(db);
}
