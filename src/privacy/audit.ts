/**
 * The audit log (docs/privacy.md, "Audit log"): who did what to a workspace's settings, people and data, when and from
 * which address. Entries are only ever added: the table belongs to a role nobody logs in as, the engine's role may only
 * insert and select, triggers refuse UPDATE, TRUNCATE and the DELETE of an entry younger than the audit's retention, and
 * that retention is purged by the owner's own function (migrations 0023 and 0027). A target names what was acted on
 * (a user's email, a webhook event, an endpoint URL), never a key, secret, password or a customer's identifier.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Logger } from '../log.ts';

/** Every action the log records; one entry per action done. */
export const AUDIT_ACTIONS = [
  'sign_in',
  'sign_in_failed',
  'password_set',
  'workspace_created',
  'owner_restored',
  'workspace_changed',
  'account_email_changed',
  'user_invited',
  'user_renamed',
  'invite_link_made',
  'user_removed',
  'token_created',
  'token_revoked',
  'integration_changed',
  'integration_key_replaced',
  'integration_removed',
  'sync_key_replaced',
  'webhook_endpoint_set',
  'webhook_secret_rotated',
  'webhook_endpoint_removed',
  'phone_settings_changed',
  'whatsapp_settings_changed',
  'whatsapp_removed',
  'webchat_settings_changed',
  'team_availability_changed',
  'inbox_settings_changed',
  'conversation_taken_over',
  'conversations_exported',
  'retention_changed',
  'customer_exported',
  'customer_erased',
  'customer_messages_replayed',
  'knowledge_entry_added_from_conversation',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditRecord {
  workspaceId: string;
  action: AuditAction;
  /** What was acted on, in words; never a secret's value nor a customer's identifier. */
  target?: string | null;
  /** Who acted: a user, or null for the operator or nobody signed in. */
  actor?: { userId: string; email: string } | null;
  ip?: string | null;
}

export interface AuditEntry {
  id: string;
  at: string;
  user_email: string | null;
  ip: string | null;
  action: string;
  target: string | null;
}

export type Audit = ReturnType<typeof createAudit>;

export function createAudit(deps: { db: Db; logger: Logger }) {
  const { db, logger } = deps;
  return {
    async record(entry: AuditRecord): Promise<void> {
      await db
        .insertInto('audit_log')
        .values({
          workspace_id: entry.workspaceId,
          action: entry.action,
          target: entry.target ? entry.target.slice(0, 500) : null,
          user_id: entry.actor?.userId ?? null,
          user_email: entry.actor?.email ?? null,
          ip: entry.ip ?? null,
        })
        .execute();
    },

    /** Like `record`, but a failure to write is logged, not thrown: the action it records has already happened. */
    async recordQuietly(entry: AuditRecord): Promise<void> {
      try {
        await this.record(entry);
      } catch (err) {
        logger.error({ err, action: entry.action, workspaceId: entry.workspaceId }, 'an audit entry could not be written');
      }
    },

    /** The workspaces where `email` names a live user: a failed sign-in is recorded in each. */
    async workspacesOfEmail(email: string): Promise<string[]> {
      const rows = await db
        .selectFrom('users')
        .select('workspace_id')
        .where(sql`lower(email)`, '=', email.trim().toLowerCase())
        .where('revoked_at', 'is', null)
        .execute();
      return rows.map((r) => r.workspace_id);
    },

    /** A page of a workspace's entries, newest first; `before` is the `next_before` of the previous page. */
    async list(workspaceId: string, page: { before?: string; limit: number }): Promise<{ entries: AuditEntry[]; next_before: string | null }> {
      let query = db
        .selectFrom('audit_log')
        .select(['id', 'at', 'user_email', 'ip', 'action', 'target'])
        .where('workspace_id', '=', workspaceId)
        .orderBy('id', 'desc')
        .limit(page.limit + 1);
      if (page.before) query = query.where('id', '<', page.before);
      const rows = await query.execute();
      const more = rows.length > page.limit;
      const entries = rows.slice(0, page.limit).map((r) => ({
        id: String(r.id),
        at: new Date(r.at).toISOString(),
        user_email: r.user_email,
        ip: r.ip,
        action: r.action,
        target: r.target,
      }));
      return { entries, next_before: more ? entries[entries.length - 1]!.id : null };
    },

    /**
     * The audit's own retention: entries older than AUDIT_RETENTION_DAYS (by the database's clock) go, at most `limit`
     * per call, through the owner's function (migration 0027): the engine's role cannot delete from the table itself.
     */
    async purge(limit: number): Promise<number> {
      const { rows } = await sql<{ n: number }>`select audit_log_purge(${limit}) as n`.execute(db);
      return Number(rows[0]?.n ?? 0);
    },
  };
}
