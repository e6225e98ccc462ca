import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Sign-in with a password (POST /v1/auth/login): `scrypt$N$r$p$salt$hash` (src/auth/passwords.ts); null: no password
  // set yet, the user signs in with a token or through an invite.
  await db.schema.alterTable('users').addColumn('password_hash', 'text').execute();

  // One-time invite links (POST /v1/auth/password): only the SHA-256 of the link's token is stored, like bearer tokens.
  await db.schema
    .createTable('invites')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    // A newer invite for the same user replaces the older unused ones.
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index invites_open_user on invites (user_id) where used_at is null and revoked_at is null`.execute(db);
  // Tokens made by signing in: at the limit of live tokens, signing in revokes the oldest of these first, so a token a
  // script uses goes only when the user holds no token made by signing in.
  await db.schema.alterTable('tokens').addColumn('sign_in', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  // Login looks a user up by email across workspaces.
  await sql`create index users_email_password on users (lower(email)) where revoked_at is null and password_hash is not null`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index users_email_password`.execute(db);
  await db.schema.dropTable('invites').execute();
  await db.schema.alterTable('tokens').dropColumn('sign_in').execute();
  await db.schema.alterTable('users').dropColumn('password_hash').execute();
}
