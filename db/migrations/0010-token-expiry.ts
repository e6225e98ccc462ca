import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Optional token expiry (POST /v1/tokens {expires_in}); null: the token lives until it is revoked.
  await db.schema.alterTable('tokens').addColumn('expires_at', 'timestamptz').execute();
  // Live tokens per user are counted when one is issued (limits: MAX_TOKENS_PER_USER).
  await sql`create index tokens_live_user on tokens (user_id) where revoked_at is null`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index tokens_live_user`.execute(db);
  await db.schema.alterTable('tokens').dropColumn('expires_at').execute();
}
