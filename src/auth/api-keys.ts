/**
 * The two keys of the sync API (protocol §1.6, §5.7), made in the dashboard:
 * - the sync key (`bls_…`) can write; it is a secret, shown once when it is made and stored only as its SHA-256 hash.
 *   Making a new one revokes the previous one.
 * - the widget key (`blw_…`) can only read; it is embedded in the customer's public web pages, so it is not a secret
 *   and the dashboard may show it again. It is made on first read.
 * Both carry 256 random bits, so a fast hash suffices, and a lookup by hash reveals nothing about the key through
 * timing. Requests present them as `X-Sync-Key` and `X-Widget-Key`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { ApiKeysRepository, NewApiKey } from '../../db/repositories/api-keys.repository.ts';
import type { ApiKeyKind } from '../../db/schema.ts';
import { workspaceDisabled } from '../errors.ts';
import { hashToken } from './tokens.ts';

export const SYNC_KEY_HEADER = 'X-Sync-Key';
export const WIDGET_KEY_HEADER = 'X-Widget-Key';

const PREFIX: Record<ApiKeyKind, string> = { sync: 'bls_', widget: 'blw_' };
/** 32 random bytes in base64url are 43 characters. Also checked by the widget's demo page (src/http/pages/widget.ts). */
export const KEY_SHAPE: Record<ApiKeyKind, RegExp> = { sync: /^bls_[A-Za-z0-9_-]{43}$/, widget: /^blw_[A-Za-z0-9_-]{43}$/ };
const HINT_CHARS = 4;

export interface SyncKeyInfo {
  key_hint: string;
  created_at: string;
}

function newKey(kind: ApiKeyKind): { key: string; row: NewApiKey } {
  const key = PREFIX[kind] + randomBytes(32).toString('base64url');
  return { key, row: { id: randomUUID(), keyHash: hashToken(key), keyPlain: kind === 'widget' ? key : null, keyHint: key.slice(-HINT_CHARS) } };
}

export function createApiKeysService(deps: { apiKeys: ApiKeysRepository; now?: () => Date }) {
  const { apiKeys } = deps;
  const now = deps.now ?? (() => new Date());

  async function workspaceFor(kind: ApiKeyKind, key: string): Promise<string | undefined> {
    // A value that cannot be a key is not looked up (and not hashed into a query).
    if (!KEY_SHAPE[kind].test(key)) return undefined;
    const found = await apiKeys.findWorkspaceByHash(kind, hashToken(key));
    if (found?.disabled) throw workspaceDisabled();
    return found?.workspaceId;
  }

  return {
    /** POST /v1/keys/sync: a new sync key, shown this once; the previous one stops working now. */
    async rotateSyncKey(workspaceId: string): Promise<SyncKeyInfo & { key: string }> {
      const { key, row } = newKey('sync');
      const saved = await apiKeys.replace(workspaceId, 'sync', row, now());
      return { key, key_hint: saved.key_hint, created_at: new Date(saved.created_at).toISOString() };
    },

    /** What the dashboard may show about the live sync key: its last characters and age, never the key. */
    async syncKeyInfo(workspaceId: string): Promise<SyncKeyInfo | undefined> {
      const live = await apiKeys.findLive(workspaceId, 'sync');
      return live ? { key_hint: live.key_hint, created_at: new Date(live.created_at).toISOString() } : undefined;
    },

    /** GET /v1/keys/widget: the workspace's widget key, made on first read. */
    async widgetKey(workspaceId: string): Promise<{ key: string; created_at: string }> {
      const live = (await apiKeys.findLive(workspaceId, 'widget')) ?? (await apiKeys.insertIfNone(workspaceId, 'widget', newKey('widget').row));
      return { key: live.key_plain as string, created_at: new Date(live.created_at).toISOString() };
    },

    /** The workspace whose live sync key this is, or undefined; 403 workspace_disabled while the workspace is disabled. */
    workspaceForSyncKey(key: string): Promise<string | undefined> {
      return workspaceFor('sync', key);
    },

    /** The workspace whose live widget key this is, or undefined; 403 workspace_disabled while the workspace is disabled. */
    workspaceForWidgetKey(key: string): Promise<string | undefined> {
      return workspaceFor('widget', key);
    },
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
