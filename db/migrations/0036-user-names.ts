import { sql, type Kysely } from 'kysely';

// Users have a display name (docs/interfaces.md, "Going live"): what customers and colleagues see ("Sam, from the
// team", mentions, presence). Null: none given, and the name is taken from the email (src/accounts/display-name.ts).
// The engine trims it and keeps 1 to MAX_USER_NAME_CHARS (120) characters; the check holds any other writer to that.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table users add column name text
    constraint users_name_trimmed check (name is null or (char_length(name) between 1 and 120 and name = btrim(name)))`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table users drop column name`.execute(db);
}
