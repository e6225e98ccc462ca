import { sql, type Kysely } from 'kysely';

// Presence per person and assignment (docs/architecture.md, "Presence and assignment"): each user is available, away or
// offline, kept in the database so every engine reads the same; `last_seen_at` is moved by whichever engine holds the
// person's open dashboard, so "available" lapses to "away" when no dashboard is open (PRESENCE_IDLE_MINUTES). A
// waiting conversation names the colleague it is assigned to, for the wait it is in (`assigned_waiting_since`).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('team_presence')
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('offline').check(sql`status in ('available', 'away', 'offline')`))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // The last time an engine saw this person's dashboard open (or the person set their presence).
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // The last time a conversation was assigned to this person: ties of the least busy go to who waited longest.
    .addColumn('last_assigned_at', 'timestamptz')
    .execute();
  await sql`create index team_presence_available on team_presence (workspace_id) where status = 'available'`.execute(db);

  await db.schema
    .alterTable('sessions')
    .addColumn('assigned_user_id', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    // The waiting_since of the wait the assignment was made for: a conversation that waits again is assigned again.
    .addColumn('assigned_waiting_since', 'timestamptz')
    .execute();
  await sql`create index sessions_assigned on sessions (workspace_id, assigned_user_id) where handled_by = 'waiting'`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index sessions_assigned`.execute(db);
  await db.schema.alterTable('sessions').dropColumn('assigned_waiting_since').execute();
  await db.schema.alterTable('sessions').dropColumn('assigned_user_id').execute();
  await db.schema.dropTable('team_presence').execute();
}
