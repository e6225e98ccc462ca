import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The sweep for phone calls nobody will continue (a call handed back on SIGTERM that no instance took again, a
  // process that died mid-call) looks only at open phone sessions, by how long they have been quiet.
  await sql`create index sessions_open_calls on sessions (updated_at) where channel = 'phone' and status = 'active'`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index sessions_open_calls`.execute(db);
}
