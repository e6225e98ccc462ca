import type { Kysely } from 'kysely';

// The Overview's first-day list (docs/analytics.md, "The first day"): each step is ticked from the workspace's real
// state; the one step no other table remembers is whether somebody tried a question on the Knowledge screen.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workspaces').addColumn('question_tried_at', 'timestamptz').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workspaces').dropColumn('question_tried_at').execute();
}
