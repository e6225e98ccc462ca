/** Keys of the sync API (sync: secret, write; widget: public, read), found by their SHA-256 hash. */
import type { Db } from '../database.ts';
import type { ApiKey, ApiKeyKind } from '../schema.ts';

export interface NewApiKey {
  id: string;
  keyHash: string;
  /** Widget keys only; null for sync keys (only the hash of a secret is kept). */
  keyPlain: string | null;
  keyHint: string;
}

export function apiKeysRepository(db: Db) {
  const findLive = (workspaceId: string, kind: ApiKeyKind): Promise<ApiKey | undefined> =>
    db
      .selectFrom('api_keys')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('kind', '=', kind)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();

  return {
    /** The workspace of a live key of that kind with that hash (and whether the operator disabled it), or undefined. */
    async findWorkspaceByHash(kind: ApiKeyKind, keyHash: string): Promise<{ workspaceId: string; disabled: boolean } | undefined> {
      const row = await db
        .selectFrom('api_keys')
        .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
        .select(['api_keys.workspace_id', 'workspaces.disabled_at'])
        .where('api_keys.key_hash', '=', keyHash)
        .where('api_keys.kind', '=', kind)
        .where('api_keys.revoked_at', 'is', null)
        .executeTakeFirst();
      return row && { workspaceId: row.workspace_id, disabled: row.disabled_at !== null };
    },

    findLive,

    /** Revokes the live key of that kind (if any) and inserts the new one, in one transaction. */
    async replace(workspaceId: string, kind: ApiKeyKind, key: NewApiKey, at: Date): Promise<ApiKey> {
      return db.transaction().execute(async (trx) => {
        // Two replacements at once queue here instead of racing into the one-live-key index.
        await trx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).forNoKeyUpdate().execute();
        await trx
          .updateTable('api_keys')
          .set({ revoked_at: at })
          .where('workspace_id', '=', workspaceId)
          .where('kind', '=', kind)
          .where('revoked_at', 'is', null)
          .execute();
        return trx
          .insertInto('api_keys')
          .values({ id: key.id, workspace_id: workspaceId, kind, key_hash: key.keyHash, key_plain: key.keyPlain, key_hint: key.keyHint, revoked_at: null })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
    },

    /** Inserts the key unless a live one of that kind exists; answers the live key either way. */
    async insertIfNone(workspaceId: string, kind: ApiKeyKind, key: NewApiKey): Promise<ApiKey> {
      await db
        .insertInto('api_keys')
        .values({ id: key.id, workspace_id: workspaceId, kind, key_hash: key.keyHash, key_plain: key.keyPlain, key_hint: key.keyHint, revoked_at: null })
        .onConflict((oc) => oc.columns(['workspace_id', 'kind']).where('revoked_at', 'is', null).doNothing())
        .execute();
      const live = await findLive(workspaceId, kind);
      if (!live) throw new Error(`No live ${kind} key after insert for workspace ${workspaceId}`);
      return live;
    },
  };
}

export type ApiKeysRepository = ReturnType<typeof apiKeysRepository>;
