import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The operator's switch (`npm run cli -- workspace disable`, docs/operations.md): while disabled_at is set the
  // workspace's tokens, keys, sign-in and channels are refused; the reason is the operator's note, never shown to users.
  await db.schema.alterTable('workspaces').addColumn('disabled_at', 'timestamptz').addColumn('disabled_reason', 'text').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workspaces').dropColumn('disabled_reason').dropColumn('disabled_at').execute();
}
