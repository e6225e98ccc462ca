import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // A claim only writes the lease (lease_owner, lease_until), which no index covers: with room left on the row's page
  // PostgreSQL updates it in place (a HOT update) instead of adding an entry to each of the table's four indexes.
  // Pages are filled to 70 % so that room is there (bench/notes/webhooks.md: the database's CPU per delivery).
  await sql`alter table webhook_deliveries set (fillfactor = 70)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table webhook_deliveries reset (fillfactor)`.execute(db);
}
