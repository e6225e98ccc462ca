/** The sync API's keys in the dashboard (protocol §1.6, §5.7; docs/interfaces.md: Dashboard API). Owners and admins only. */
import type { ApiKeysService } from '../../auth/api-keys.ts';
import { notFound } from '../../errors.ts';
import { route, type RouteDefinition } from '../route.ts';

const createdAt = { type: 'string', format: 'date-time' };

export function keyRoutes(apiKeys: ApiKeysService): RouteDefinition[] {
  return [
    route({
      method: 'post',
      path: '/v1/keys/sync',
      tag: 'keys',
      summary: 'A new secret sync key for the plugins (send it as X-Sync-Key), shown in this answer only. The previous sync key stops working at once.',
      access: 'manager',
      responses: {
        201: {
          description: 'The new key, this once.',
          schema: { type: 'object', properties: { key: { type: 'string' }, key_hint: { type: 'string' }, created_at: createdAt } },
        },
      },
      async handler({ workspaceId }) {
        return { status: 201, body: await apiKeys.rotateSyncKey(workspaceId) };
      },
    }),

    route({
      method: 'get',
      path: '/v1/keys/sync',
      tag: 'keys',
      summary: 'Whether a sync key exists: its last characters and when it was made (never the key).',
      access: 'manager',
      responses: {
        200: { description: 'The live sync key.', schema: { type: 'object', properties: { key_hint: { type: 'string' }, created_at: createdAt } } },
        404: { description: 'No sync key yet.' },
      },
      async handler({ workspaceId }) {
        const info = await apiKeys.syncKeyInfo(workspaceId);
        if (!info) throw notFound('A sync key');
        return { status: 200, body: info };
      },
    }),

    route({
      method: 'get',
      path: '/v1/keys/widget',
      tag: 'keys',
      summary: 'The read-only widget key for the website (X-Widget-Key); made on first read. It is public by design: it is embedded in web pages and can only read.',
      access: 'manager',
      responses: { 200: { description: 'The widget key.', schema: { type: 'object', properties: { key: { type: 'string' }, created_at: createdAt } } } },
      async handler({ workspaceId }) {
        return { status: 200, body: await apiKeys.widgetKey(workspaceId) };
      },
    }),
  ];
}
