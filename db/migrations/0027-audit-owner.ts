import { sql, type Kysely } from 'kysely';

// The audit log cannot be rewritten by the engine (docs/privacy.md, "Audit log"). Until now the engine's role owned
// the table, and an owner can TRUNCATE it, disable its triggers or set the purge's transaction-local flag. From here:
// - the table belongs to a role nobody logs in as (AUDIT_OWNER); the engine's role may only add entries (the columns
//   it writes: the database numbers and dates each entry) and read them;
// - TRUNCATE is refused by a trigger, UPDATE always, DELETE unless the entry is older than the audit's retention
//   (730 days, AUDIT_RETENTION_DAYS in src/privacy/limits.ts; changing it takes a migration);
// - the retention purge is a SECURITY DEFINER function of the owner that deletes only those old entries: no setting
//   lets anyone else delete.
// Moving the table needs a migrating role that may create roles (or finds AUDIT_OWNER made) and may hand tables to
// it: a superuser, or a role with CREATEROLE that owns the schema. Otherwise the table stays with the migrating role,
// with a warning, and the operator runs the grant of docs/operations.md ("The audit log's owner"); the engine warns
// at start while its role can still change the log. A later migration that alters audit_log runs as AUDIT_OWNER's
// member or a superuser.

/** The role that owns the audit log; it cannot log in. */
const AUDIT_OWNER = 'botlink_audit_owner';
/** What the engine may write of an entry: not `id` nor `at`, which the database sets. */
const WRITTEN = ['workspace_id', 'user_id', 'user_email', 'ip', 'action', 'target'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]!.schema;
  const log = sql.id(schema, 'audit_log');
  const purge = sql.id(schema, 'audit_log_purge');

  await sql`
    create or replace function ${sql.id(schema, 'audit_log_append_only')}() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        if old.at < now() - interval '730 days' then
          return old;
        end if;
      end if;
      raise exception 'the audit log is append-only' using errcode = 'P0001';
    end
    $$`.execute(db);
  await sql`create trigger audit_log_no_truncate before truncate on ${log} for each statement execute function ${sql.id(schema, 'audit_log_append_only')}()`.execute(db);

  // The audit's own retention, at most `max_rows` a call, oldest first. The search path is pinned and every name
  // qualified, so a caller's objects cannot stand in for ours while it runs as the owner.
  await sql`
    create function ${purge}(max_rows integer) returns integer
    language sql security definer set search_path = pg_catalog, pg_temp as $$
      with gone as (
        delete from ${log} where id in (
          select id from ${log} where at < now() - interval '730 days' order by id limit greatest(max_rows, 0)
        )
        returning 1
      )
      select count(*)::integer from gone
    $$`.execute(db);
  await sql`revoke all on function ${purge}(integer) from public`.execute(db);

  // Who adds entries now: this migration's role (one role for migrations and the engine), and any role that was
  // granted INSERT on the table (the engine's role of a two-role deployment, through default privileges). A role
  // granted anything else keeps SELECT at most.
  const owner = sql.lit(AUDIT_OWNER);
  const schemaName = sql.lit(schema);
  const columns = sql.raw(WRITTEN.join(', '));
  await sql`
    do $$
    declare
      log regclass := ${sql.lit(`${quoteIdent(schema)}.audit_log`)}::regclass;
      sequence text := pg_get_serial_sequence(${sql.lit(`${quoteIdent(schema)}.audit_log`)}, 'id');
      is_superuser boolean := (select rolsuper from pg_roles where rolname = current_user);
      made_member boolean := false;
      made_creator boolean := false;
      writer name;
      writers name[];
      reader name;
      readers name[];
    begin
      select coalesce(array_agg(distinct r.rolname), '{}') into writers
        from pg_class c cross join lateral aclexplode(c.relacl) a join pg_roles r on r.oid = a.grantee
        where c.oid = log and a.privilege_type = 'INSERT' and a.grantee <> c.relowner;
      writers := array_append(writers, current_user);
      select coalesce(array_agg(distinct r.rolname), '{}') into readers
        from pg_class c cross join lateral aclexplode(c.relacl) a join pg_roles r on r.oid = a.grantee
        where c.oid = log and a.grantee <> c.relowner and not r.rolname = any(writers);
      begin
        if not exists (select from pg_roles where rolname = ${owner}) then
          begin
            create role ${sql.id(AUDIT_OWNER)} nologin;
          exception when duplicate_object or unique_violation then
            null; -- another database's migration made it meanwhile
          end;
        end if;
        -- A role that is not a superuser hands a table only to a role it is a member of, that may create in the schema.
        if not is_superuser and not pg_has_role(current_user, ${owner}, 'USAGE') then
          execute format('grant %I to %I', ${owner}, current_user);
          made_member := true;
        end if;
        if not has_schema_privilege(${owner}, ${schemaName}, 'USAGE') then
          execute format('grant usage on schema %I to %I', ${schemaName}, ${owner});
        end if;
        if not is_superuser and not has_schema_privilege(${owner}, ${schemaName}, 'CREATE') then
          execute format('grant create on schema %I to %I', ${schemaName}, ${owner});
          made_creator := true;
        end if;
        -- The table's sequence and indexes go with it.
        execute format('alter table %s owner to %I', log, ${owner});
        execute format('alter function %I.audit_log_purge(integer) owner to %I', ${schemaName}, ${owner});
        execute format('revoke all on %s from public', log);
        execute format('revoke all on sequence %s from public', sequence);
        foreach reader in array readers loop
          execute format('revoke update, delete, truncate, references, trigger on %s from %I', log, reader);
          execute format('revoke update on sequence %s from %I', sequence, reader);
        end loop;
        foreach writer in array writers loop
          execute format('revoke all on %s from %I', log, writer);
          execute format('revoke all on sequence %s from %I', sequence, writer);
          execute format('grant select, insert (${columns}) on %s to %I', log, writer);
          execute format('grant usage on sequence %s to %I', sequence, writer);
          execute format('grant execute on function %I.audit_log_purge(integer) to %I', ${schemaName}, writer);
        end loop;
        if made_creator then
          execute format('revoke create on schema %I from %I', ${schemaName}, ${owner});
        end if;
        if made_member then
          execute format('revoke %I from %I', ${owner}, current_user);
        end if;
      exception when insufficient_privilege then
        raise warning 'the audit log stays owned by %, who can change it: %. See docs/operations.md, "The audit log''s owner".', current_user, sqlerrm;
      end;
    end
    $$`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  // Run as a superuser or a member of the owner: the table comes back to the migrating role, with 0023's trigger.
  await sql`alter table audit_log owner to current_user`.execute(db);
  await sql`drop function audit_log_purge(integer)`.execute(db);
  await sql`drop trigger audit_log_no_truncate on audit_log`.execute(db);
  await sql`
    create or replace function audit_log_append_only() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' and coalesce(current_setting('botlink.audit_purge', true), '') = 'on' then
        return old;
      end if;
      raise exception 'the audit log is append-only' using errcode = 'P0001';
    end
    $$`.execute(db);
}

/** A schema's name as SQL writes it (tests' schemas are `t_` and hex; production's is public). */
function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
