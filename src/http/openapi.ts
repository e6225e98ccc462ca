/** The OpenAPI 3.1 description served at GET /openapi.json, built from the same route declarations that run. */
import { errorStatus } from '../errors.ts';
import { errorSchema, type RouteDefinition } from './route.ts';

export function buildOpenApi(routes: readonly RouteDefinition[], info: { version: string; serverUrl: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const params = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const responses: Record<string, unknown> = {};
    for (const [status, res] of Object.entries(r.responses)) {
      responses[status] = { description: res.description, ...(res.schema ? { content: { 'application/json': { schema: res.schema } } } : {}) };
    }
    for (const status of implicitErrors(r)) {
      responses[status] ??= { description: describeStatus(status), content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    (paths[r.path] ??= {})[r.method] = {
      summary: r.summary,
      tags: [r.tag],
      operationId: operationId(r),
      ...(params.length ? { parameters: params } : {}),
      security: securityOf(r),
      ...(r.access === 'manager' ? { description: 'Owners and admins only.' } : r.access === 'admin' ? { description: 'The platform operator (ADMIN_TOKEN) only.' } : {}),
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: r.body } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Botlink API', version: info.version, description: 'Conversation engine: dashboard, channels, sync and operations API.' },
    servers: [{ url: info.serverUrl }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        syncKey: { type: 'apiKey', in: 'header', name: 'X-Sync-Key', description: 'The secret sync key (reads and writes the sync API).' },
        widgetKey: { type: 'apiKey', in: 'header', name: 'X-Widget-Key', description: 'The read-only widget key (public, embedded in web pages).' },
      },
      schemas: { Error: errorSchema },
    },
    paths,
  };
}

function securityOf(r: RouteDefinition): Array<Record<string, string[]>> {
  if (r.access === 'public') return [];
  if (r.access === 'sync-write') return [{ syncKey: [] }];
  if (r.access === 'sync-read') return [{ syncKey: [] }, { widgetKey: [] }];
  // Website chat: the widget key only.
  if (r.access === 'widget') return [{ widgetKey: [] }];
  return [{ bearer: [] }];
}

function implicitErrors(r: RouteDefinition): number[] {
  const statuses: number[] = [];
  if (r.body) statuses.push(errorStatus.validation_failed, errorStatus.payload_too_large, errorStatus.unsupported_media_type);
  if (r.access !== 'public') statuses.push(errorStatus.unauthorized);
  if (r.access === 'manager' || r.access === 'sync-write') statuses.push(errorStatus.forbidden);
  return statuses;
}

function describeStatus(status: number): string {
  return ({ 400: 'The body is not valid; every problem names its field.', 401: 'Missing or unknown bearer token or key.', 403: 'Your role may not do this.', 413: 'The body is too large.', 415: 'The body is not JSON.' } as Record<number, string>)[status] ?? 'Error';
}

function operationId(r: RouteDefinition): string {
  const words = r.path.replace(/^\/v1\//, '').split(/[/{}-]+/).filter(Boolean);
  return r.method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}
