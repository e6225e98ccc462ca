import { sql, type Kysely } from 'kysely';

// Fewer index writes per delivery (docs/performance.md, webhook-delivery: the database's CPU per delivery).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A claim only writes the lease (lease_owner, lease_until), which no index covers: with room left on the row's page
  // PostgreSQL updates it in place (a HOT update) instead of adding an entry to each of the table's four indexes.
  // Pages are filled to 70 % so that room is there.
  await sql`alter table webhook_deliveries set (fillfactor = 70)`.execute(db);
  // An attempt is named by its delivery and number (the log shows no other id): that pair becomes the primary key, and
  // the random uuid key (one more index entry per attempt, on a random page) goes.
  await sql`alter table webhook_attempts drop constraint webhook_attempts_pkey`.execute(db);
  await sql`alter table webhook_attempts drop column id`.execute(db);
  await sql`alter table webhook_attempts drop constraint webhook_attempts_delivery_attempt`.execute(db);
  await sql`alter table webhook_attempts add constraint webhook_attempts_pkey primary key (delivery_id, attempt)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table webhook_attempts drop constraint webhook_attempts_pkey`.execute(db);
  await sql`alter table webhook_attempts add constraint webhook_attempts_delivery_attempt unique (delivery_id, attempt)`.execute(db);
  await sql`alter table webhook_attempts add column id uuid not null default gen_random_uuid() primary key`.execute(db);
  await sql`alter table webhook_deliveries reset (fillfactor)`.execute(db);
}
