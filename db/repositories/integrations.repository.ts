/** The bot-link integration of a workspace: endpoint URL and the sealed shared key (one row per workspace). */
import type { Db } from '../database.ts';
import type { Integration } from '../schema.ts';
import { upsertPerWorkspace } from './upsert.ts';

export function integrationsRepository(db: Db) {
  return {
    async find(workspaceId: string): Promise<Integration | undefined> {
      return db.selectFrom('integrations').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
    },

    async upsert(row: { workspace_id: string; endpoint_url: string; key_sealed: string; key_hint: string; updated_at: Date }): Promise<Integration> {
      return upsertPerWorkspace(db, 'integrations', row);
    },

    async updateUrl(workspaceId: string, endpointUrl: string, at: Date): Promise<Integration | undefined> {
      return db
        .updateTable('integrations')
        .set({ endpoint_url: endpointUrl, updated_at: at })
        .where('workspace_id', '=', workspaceId)
        .returningAll()
        .executeTakeFirst();
    },

    async updateKey(workspaceId: string, keySealed: string, keyHint: string, at: Date): Promise<Integration | undefined> {
      return db
        .updateTable('integrations')
        .set({ key_sealed: keySealed, key_hint: keyHint, updated_at: at })
        .where('workspace_id', '=', workspaceId)
        .returningAll()
        .executeTakeFirst();
    },

    async remove(workspaceId: string): Promise<boolean> {
      const result = await db.deleteFrom('integrations').where('workspace_id', '=', workspaceId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

export type IntegrationsRepository = ReturnType<typeof integrationsRepository>;
