/**
 * Whether the engine's own database role could change the audit log (docs/privacy.md, "Audit log"). The log is
 * append-only for a role that may only insert and select (migration 0027); a superuser, the table's owner, a member of
 * the owner, or a role that may make itself one, can still empty or rewrite it. The engine says so once at start, so
 * the operator can give it a role of its own (docs/operations.md, "The audit log's owner").
 */
import { sql } from 'kysely';
import type { OpenedDatabase } from '../../db/database.ts';
import type { Logger } from '../log.ts';

/** Why the engine's role can change the audit log. */
export type AuditLogHold = 'superuser' | 'owner' | 'can_become_owner';

const SAYS: Record<AuditLogHold, string> = {
  superuser: 'is a superuser',
  owner: 'owns the table (or is a member of its owner): it can TRUNCATE it and disable its triggers',
  can_become_owner: "may make itself a member of the table's owner (it has ADMIN on that role, or CREATEROLE before PostgreSQL 16)",
};

/** The engine's role and its hold on the audit log; `hold` null: it can only add and read entries. */
export async function auditLogHold(database: Pick<OpenedDatabase, 'db'>): Promise<{ role: string; hold: AuditLogHold | null }> {
  const { rows } = await sql<{ role: string; superuser: boolean; owner: boolean; can_become_owner: boolean }>`
    select r.rolname as role, r.rolsuper as superuser,
      pg_has_role(r.oid, c.relowner, 'USAGE') as owner,
      pg_has_role(r.oid, c.relowner, 'MEMBER WITH ADMIN OPTION')
        or (r.rolcreaterole and current_setting('server_version_num')::integer < 160000) as can_become_owner
    from pg_roles r, pg_class c
    where r.rolname = current_user and c.oid = 'audit_log'::regclass`.execute(database.db);
  const row = rows[0];
  if (!row) throw new Error('the audit log table was not found: the migrations have not run');
  const hold: AuditLogHold | null = row.superuser ? 'superuser' : row.owner ? 'owner' : row.can_become_owner ? 'can_become_owner' : null;
  return { role: row.role, hold };
}

/** One warn line at start when the engine's role can change the audit log; nothing when it cannot. */
export async function warnIfEngineCanChangeAuditLog(database: Pick<OpenedDatabase, 'db' | 'kind'>, logger: Logger): Promise<void> {
  // The embedded database is files of this one process, run as its superuser: there is no other role to give the
  // engine, and a warning on every `npm start` would only teach an owner to skip warnings (docs/privacy.md).
  if (database.kind === 'pglite') return;
  const { role, hold } = await auditLogHold(database);
  if (!hold) return;
  const why = `the engine's database role ${role} ${SAYS[hold]}`;
  logger.warn(
    { role, hold },
    `the audit log can be changed by the engine: ${why}; for an audit log nobody can rewrite, run on PostgreSQL with a role that may only add entries (docs/operations.md, "The audit log's owner")`,
  );
}
