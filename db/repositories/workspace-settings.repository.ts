/**
 * The settings an owner changes about the workspace itself (GET|PATCH /v1/workspace) and a user's own email
 * (PATCH /v1/account). Migration 0017 added the time zone and the web chat idle period.
 */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { isUniqueViolation } from '../unique-violation.ts';

export interface WorkspaceSettingsRow {
  id: string;
  name: string;
  time_zone: string | null;
  webchat_idle_minutes: number;
}

export function workspaceSettingsRepository(db: Db) {
  return {
    async find(workspaceId: string): Promise<WorkspaceSettingsRow | undefined> {
      return db.selectFrom('workspaces').select(['id', 'name', 'time_zone', 'webchat_idle_minutes']).where('id', '=', workspaceId).executeTakeFirst();
    },

    /**
     * Whether the integration, a sync key and the WhatsApp number exist, so the dashboard knows before it asks:
     * GET /v1/integration, GET /v1/keys/sync and GET /v1/whatsapp answer 404 when absent, which a browser logs as an error.
     */
    async configured(workspaceId: string): Promise<{ integration: boolean; sync_key: boolean; whatsapp: boolean }> {
      const row = await db
        .selectNoFrom((eb) => [
          eb.exists(eb.selectFrom('integrations').select('workspace_id').where('workspace_id', '=', workspaceId)).as('integration'),
          eb.exists(eb.selectFrom('api_keys').select('id').where('workspace_id', '=', workspaceId).where('kind', '=', 'sync').where('revoked_at', 'is', null)).as('sync_key'),
          eb.exists(eb.selectFrom('whatsapp_accounts').select('workspace_id').where('workspace_id', '=', workspaceId)).as('whatsapp'),
        ])
        .executeTakeFirstOrThrow();
      return { integration: Boolean(row.integration), sync_key: Boolean(row.sync_key), whatsapp: Boolean(row.whatsapp) };
    },

    async update(
      workspaceId: string,
      change: { name?: string; time_zone?: string | null; webchat_idle_minutes?: number },
    ): Promise<WorkspaceSettingsRow | undefined> {
      if (Object.keys(change).length === 0) return this.find(workspaceId);
      return db
        .updateTable('workspaces')
        .set(change)
        .where('id', '=', workspaceId)
        .returning(['id', 'name', 'time_zone', 'webchat_idle_minutes'])
        .executeTakeFirst();
    },

    /** The user's email, changed; 'taken' when another live user of the workspace has it (case-insensitive). */
    async setUserEmail(workspaceId: string, userId: string, email: string): Promise<'changed' | 'taken' | 'missing'> {
      try {
        return await db.transaction().execute(async (trx) => {
          const other = await trx
            .selectFrom('users')
            .select('id')
            .where('workspace_id', '=', workspaceId)
            .where('revoked_at', 'is', null)
            .where('id', '!=', userId)
            .where(sql<boolean>`lower(email) = ${email.toLowerCase()}`)
            .executeTakeFirst();
          if (other) return 'taken';
          const result = await trx.updateTable('users').set({ email }).where('workspace_id', '=', workspaceId).where('id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
          return result.numUpdatedRows > 0n ? 'changed' : 'missing';
        });
      } catch (err) {
        // Two users taking one email at once: the unique index decides.
        if (isUniqueViolation(err)) return 'taken';
        throw err;
      }
    },

    /**
     * Ends the active web chats nobody wrote in for their workspace's idle period (docs/webchat.md, "When a chat
     * ends"). One conditional UPDATE: several engines may run it at once, each row ends once, and a session whose
     * turn lease is held (a turn is running), or that waits for or is held by a person, is left. Returns the ended
     * sessions.
     */
    async endIdleWebchats(): Promise<{ id: string; workspace_id: string }[]> {
      return db
        .updateTable('sessions')
        .set({ status: 'ended', state: 'ended', lease_owner: null, lease_until: null, updated_at: sql<Date>`now()` })
        .from('workspaces')
        .whereRef('workspaces.id', '=', 'sessions.workspace_id')
        .where('sessions.channel', '=', 'webchat')
        .where('sessions.status', '=', 'active')
        // A chat waiting for a person, or held by one, is the team's: it ends when they hand it back or close it.
        .where('sessions.handled_by', '=', 'bot')
        .where(sql<boolean>`sessions.updated_at < now() - make_interval(mins => workspaces.webchat_idle_minutes)`)
        .where((eb) => eb.or([eb('sessions.lease_until', 'is', null), eb('sessions.lease_until', '<', sql<Date>`now()`)]))
        .returning(['sessions.id', 'sessions.workspace_id'])
        .execute();
    },
  };
}

export type WorkspaceSettingsRepository = ReturnType<typeof workspaceSettingsRepository>;
