import { sql, type Kysely } from 'kysely';

// One spelling for a lease (docs/reliability.md, "Leases"): the engine that holds a row's work and until when are
// `lease_owner` and `lease_until` on every table, as sessions and webhook deliveries always had them. The WhatsApp
// queues, knowledge sources and scenario runs said `claimed_by`/`claimed_until`, and job_claims `holder`. A rename
// only: no data moves, and the indexes follow their columns.
const TABLES = ['whatsapp_webhook_events', 'whatsapp_inbound_messages', 'whatsapp_outbound_messages', 'knowledge_sources', 'scenario_runs'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await sql`alter table ${sql.table(table)} rename column claimed_by to lease_owner`.execute(db);
    await sql`alter table ${sql.table(table)} rename column claimed_until to lease_until`.execute(db);
  }
  await sql`alter table job_claims rename column holder to lease_owner`.execute(db);
  await sql`alter table job_claims rename column claimed_until to lease_until`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table job_claims rename column lease_until to claimed_until`.execute(db);
  await sql`alter table job_claims rename column lease_owner to holder`.execute(db);
  for (const table of TABLES) {
    await sql`alter table ${sql.table(table)} rename column lease_until to claimed_until`.execute(db);
    await sql`alter table ${sql.table(table)} rename column lease_owner to claimed_by`.execute(db);
  }
}
