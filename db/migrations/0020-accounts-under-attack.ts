import { sql, type Kysely } from 'kysely';

// Accounts that hold under attack (docs/reliability.md, "Sign-in under attack"; README, Sign in).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Failed sign-ins, shared by every engine: one row per counted key (`address:<ip>`, `user:<id>`, `email:<email>`).
  // An attempt is counted here before its password is hashed and refunded when the hash proves it right, under the
  // row's lock, so parallel attempts and several engines cannot exceed the allowance (src/auth/login-throttle.ts).
  await db.schema
    .createTable('sign_in_failures')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // Attempts are refused until then; null: none refused.
    .addColumn('blocked_until', 'timestamptz')
    .execute();
  await sql`create index sign_in_failures_last_at on sign_in_failures (last_at)`.execute(db);

  // Addresses a user signed in from (the lock-out rule: a user's own recent addresses are not slowed down by
  // failures from elsewhere). One row per user and address, its last success.
  await db.schema
    .createTable('sign_in_addresses')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('succeeded_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('sign_in_addresses_pkey', ['user_id', 'address'])
    .execute();

  // Who made an invite link: a user of the workspace, or null for the operator (the first start, the CLI, restore-owner).
  await db.schema.alterTable('invites').addColumn('created_by', 'uuid', (c) => c.references('users.id')).execute();

  // Every token expires: tokens made before this migration without an expiry get the longest lifetime from their
  // creation (src/limits.ts, MAX_TOKEN_TTL_SECONDS).
  await sql`update tokens set expires_at = created_at + interval '365 days' where expires_at is null`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('invites').dropColumn('created_by').execute();
  await db.schema.dropTable('sign_in_addresses').execute();
  await db.schema.dropTable('sign_in_failures').execute();
}
