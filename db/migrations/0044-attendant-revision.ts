import { sql, type Kysely } from 'kysely';

// "Handler" means an HTTP route's handler only (issue 41): who handles a conversation is the session statechart's
// `attendant` region (docs/architecture.md, "Who handles a conversation"), so the revision its changes bump and
// compare is `attendant_revision`. A rename only: no data moves, no index names it. The snapshots the rows hold are
// upgraded when a session is restored (machine v3 → v4, src/sessions/snapshot-upgrade.ts), not here.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sessions rename column handler_revision to attendant_revision`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sessions rename column attendant_revision to handler_revision`.execute(db);
}
