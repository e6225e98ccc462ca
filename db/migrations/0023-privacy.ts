import { sql, type Kysely } from 'kysely';

// Customers' data under control (docs/privacy.md): the audit log, each workspace's retention period, and the claim
// that lets one engine at a time run a purge.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // Who did what, when and from where; written by src/privacy/audit.ts. No value of a secret, no customer identifier.
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // The user who acted (null: the operator, or nobody signed in, as in a failed sign-in); their email as it was then.
    .addColumn('user_id', 'uuid')
    .addColumn('user_email', 'text')
    .addColumn('ip', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target', 'text')
    .execute();
  await sql`create index audit_log_workspace_at on audit_log (workspace_id, id desc)`.execute(db);
  await sql`create index audit_log_at on audit_log (at)`.execute(db);

  // Nobody changes the audit log: UPDATE is refused, and DELETE too except inside a transaction that declared itself
  // the audit's own retention purge (a transaction-local setting, so it holds through a transaction pooler too).
  await sql`
    create function audit_log_append_only() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' and coalesce(current_setting('botlink.audit_purge', true), '') = 'on' then
        return old;
      end if;
      raise exception 'the audit log is append-only' using errcode = 'P0001';
    end
    $$`.execute(db);
  await sql`create trigger audit_log_append_only before update or delete on audit_log for each row execute function audit_log_append_only()`.execute(db);

  // Retention of conversation content, in days (1..3650); null: kept until erased. Workspaces made before this
  // migration keep everything, as before; new ones keep 365 days.
  await db.schema.alterTable('workspaces').addColumn('retention_days', 'integer', (c) => c.check(sql`retention_days between 1 and 3650`)).execute();
  await sql`alter table workspaces alter column retention_days set default 365`.execute(db);

  // Jobs that one engine at a time runs (the retention purge): a row per job, claimed until a time.
  await db.schema
    .createTable('job_claims')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text')
    .addColumn('claimed_until', 'timestamptz', (c) => c.notNull().defaultTo(sql`'epoch'::timestamptz`))
    .addColumn('last_run_at', 'timestamptz')
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('job_claims').execute();
  await db.schema.alterTable('workspaces').dropColumn('retention_days').execute();
  await db.schema.dropTable('audit_log').execute();
  await sql`drop function audit_log_append_only()`.execute(db);
}
