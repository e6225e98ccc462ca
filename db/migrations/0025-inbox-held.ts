import { sql, type Kysely } from 'kysely';

// The Inbox's Mine view (GET /v1/inbox?view=mine) read every conversation of the workspace, newest first, to find the
// few one agent holds: with 10,000 open conversations, 10,000 rows per look. This index finds them directly.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index sessions_held on sessions (workspace_id, agent_user_id, updated_at) where handled_by = 'agent'`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index sessions_held`.execute(db);
}
