/** The OpenAPI 3.1 description served at GET /openapi.json, built from the same route declarations that run. */
import { errorStatus } from '../errors.ts';
import { errorSchema, type JsonSchema, type RouteDefinition } from './route.ts';

const ERROR_REF = { $ref: '#/components/schemas/Error' };

export function buildOpenApi(routes: readonly RouteDefinition[], info: { version: string; serverUrl: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const parameters = [
      ...[...r.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: r.params?.[name!] ?? pathParamSchema(name!) })),
      ...Object.entries(r.query ?? {}).map(([name, schema]) => ({ name, in: 'query', required: false, schema })),
    ];
    const responses: Record<string, unknown> = {};
    for (const [status, res] of Object.entries(r.responses)) {
      // An error without a schema of its own still has the one error body.
      const schema = res.schema ?? (Number(status) >= 400 ? ERROR_REF : undefined);
      const contentTypes = [res.contentType ?? 'application/json', ...(res.alsoAs ?? [])];
      const content = Object.fromEntries(contentTypes.map((type) => [type, schema ? { schema } : {}]));
      responses[status] = { description: res.description, ...(schema || res.contentType ? { content } : {}) };
    }
    for (const status of implicitErrors(r)) {
      responses[status] ??= { description: describeStatus(status), content: { 'application/json': { schema: ERROR_REF } } };
    }
    const body = requestBody(r);
    (paths[r.path] ??= {})[r.method] = {
      summary: r.summary,
      tags: [r.tag],
      operationId: operationId(r),
      ...(parameters.length ? { parameters } : {}),
      security: securityOf(r),
      ...(r.access === 'manager' ? { description: 'Owners and admins only.' } : r.access === 'owner' ? { description: 'Owners only.' } : r.access === 'admin' ? { description: 'The platform operator (ADMIN_TOKEN) only.' } : {}),
      ...(body ? { requestBody: { required: body.required, content: { [body.contentType]: { schema: body.schema } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Botlink API', version: info.version, description: 'Conversation engine: dashboard, channels, sync and operations API. Every answer carries `Cache-Control: no-store`: several carry a secret shown once, the others a workspace\'s data.' },
    servers: [{ url: info.serverUrl }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: "A user's token (owner, admin or agent)." },
        operatorToken: { type: 'http', scheme: 'bearer', description: "The platform operator's ADMIN_TOKEN." },
        syncKey: { type: 'apiKey', in: 'header', name: 'X-Sync-Key', description: 'The secret sync key (reads and writes the sync API).' },
        widgetKey: { type: 'apiKey', in: 'header', name: 'X-Widget-Key', description: 'The read-only widget key (public, embedded in web pages).' },
      },
      schemas: { Error: errorSchema },
    },
    paths,
  };
}

/** Every `{id}` is a UUID (an `{id}` that is not one is answered 404, docs/interfaces.md); other names say their own. */
function pathParamSchema(name: string): JsonSchema {
  return name === 'id' ? { type: 'string', format: 'uuid' } : { type: 'string' };
}

/** The JSON body validated on mount is required when its schema requires a field; without one an absent body is `{}` (src/http/app.ts). */
function requestBody(r: RouteDefinition): { contentType: string; schema: JsonSchema; required: boolean } | undefined {
  if (r.describedBody) return { contentType: r.describedBody.contentType, schema: r.describedBody.schema, required: r.describedBody.required ?? false };
  if (r.body) return { contentType: 'application/json', schema: r.body, required: Array.isArray(r.body.required) };
  return undefined;
}

function securityOf(r: RouteDefinition): Array<Record<string, string[]>> {
  if (r.access === 'public') return [];
  if (r.access === 'sync-write') return [{ syncKey: [] }];
  if (r.access === 'sync-read') return [{ syncKey: [] }, { widgetKey: [] }];
  // Website chat: the widget key only.
  if (r.access === 'widget') return [{ widgetKey: [] }];
  if (r.access === 'admin') return [{ operatorToken: [] }];
  return [{ bearer: [] }];
}

/**
 * The errors every route of its kind may answer before its handler runs (src/http/app.ts): a POST or PUT may carry a
 * body, which must be JSON (or the route's form) and within the size limit; query parameters are checked; keys and
 * tokens are checked.
 */
function implicitErrors(r: RouteDefinition): number[] {
  const statuses: number[] = [];
  if (r.method === 'post' || r.method === 'put' || r.method === 'patch') statuses.push(errorStatus.validation_failed, errorStatus.payload_too_large, errorStatus.unsupported_media_type);
  else if (r.query) statuses.push(errorStatus.validation_failed);
  if (r.access !== 'public') statuses.push(errorStatus.unauthorized);
  if (r.access === 'manager' || r.access === 'owner' || r.access === 'sync-write') statuses.push(errorStatus.forbidden);
  return statuses;
}

function describeStatus(status: number): string {
  return ({ 400: 'The request is not valid; every problem names its field.', 401: 'Missing or unknown bearer token or key.', 403: 'Your role may not do this.', 413: 'The body is too large.', 415: 'The body is not JSON.' } as Record<number, string>)[status] ?? 'Error';
}

function operationId(r: RouteDefinition): string {
  const words = r.path.replace(/^\/v1\//, '').split(/[/{}-]+/).filter(Boolean);
  return r.method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}
