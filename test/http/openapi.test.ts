/**
 * /openapi.json as a whole: the document the running service serves is valid OpenAPI 3.1 by a maintained
 * validator (@readme/openapi-parser: the official 3.1 schema, the rules the schema cannot state, its $refs resolved),
 * every operation it lists is answered by the app, and every route the app mounts is listed in it.
 *
 * "What the app mounts" is read from the running app itself, the Express application that is the server's request
 * listener: its router stack, nested routers included. The route table (`service.routes`) is not enough, since it is
 * the very list the document is built from; a route mounted beside it (a page router, an `app.get`, an `app.use` at a
 * path) is what could go undocumented. What is deliberately not in the document is listed below with its reason.
 */
import { randomUUID } from 'node:crypto';
import { validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

// ajv-formats is CommonJS: under ESM its plugin is the `default` property of the module object.
const addFormats = addFormatsModule.default;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * Routes the app mounts that the document leaves out on purpose, as `METHOD path` in the document's form. They are
 * pages and files for people's browsers (HTML, scripts, stylesheets: src/http/app.ts `AppDeps.pages`), not API
 * operations: nothing calls them with JSON, and their contract is the page itself (test/http/widget-pages.test.ts,
 * test/e2e/dashboard.test.ts). Anything else the app mounts must be in the document.
 *
 * Not listed because not in the router at all: the phone WebSocket, GET /v1/phone/ws, is taken on the HTTP server's
 * `upgrade` event (src/channels/phone/phone-channel.ts), never reaches Express, and is no HTTP operation OpenAPI can
 * describe; docs/phone.md is its contract. Twilio's and Meta's webhooks need no exclusion: they are declared routes
 * and the document lists them (form and raw-bytes bodies, `describedBody` in src/http/route.ts).
 */
const UNDOCUMENTED: Record<string, string> = {
  'GET /': 'redirects a browser to the dashboard',
  'GET /dashboard': "the dashboard's single page (src/http/pages/dashboard.ts)",
  'GET /dashboard/*path': "the dashboard's client-side routes, all answered with the same page",
  'GET /dashboard/assets/{file}': "the dashboard's script and stylesheet",
  'GET /widget.js': "the website chat widget's script, loaded by the customer's pages (src/http/pages/widget.ts)",
  'GET /widget/demo': "the widget's demo page",
  'GET /widget/demo.css': "the demo page's stylesheet",
};

/**
 * Handlers the app mounts at a path with `app.use`, ahead of the routes: each reads a body or checks a key and passes
 * the request on to the declared route, so none is an operation of its own. A new one must be added here with its
 * reason (or, if it answers requests, be declared as a route so that the document lists it).
 */
const PATH_MIDDLEWARE: Record<string, string> = {
  '/v1/webchat middleware': 'the widget gate (src/channels/webchat/widget-gate.ts): CORS, widget key, origin, rate limit; it answers only CORS preflights (OPTIONS), which are not operations',
  '/v1/whatsapp/webhook rawParser': "reads Meta's signed raw bytes for POST /v1/whatsapp/webhook",
  '/v1/phone/twilio urlencodedParser': "reads Twilio's signed forms for POST /v1/phone/twilio/voice and /action",
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** `METHOD path` of every operation of the document. */
function documentedOperations(doc: Json): string[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => METHODS.includes(key))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
}

interface Mounted {
  /** `METHOD path`, the path in the document's form (`:id` as `{id}`). */
  routes: string[];
  /** `path name` of every handler mounted with `app.use` at a path other than `/`. */
  middleware: string[];
}

/** Express 5's router layer, as far as the walk reads it (router 2.x, lib/layer.js and lib/route.js). */
interface Layer {
  rawPath?: string | string[] | RegExp;
  name: string;
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

/** Every route and path-mounted handler of an Express router, nested routers included. */
function mountedBy(stack: readonly Layer[], prefix = ''): Mounted {
  const found: Mounted = { routes: [], middleware: [] };
  for (const layer of stack) {
    const paths = [layer.route?.path ?? layer.rawPath ?? '/'].flat().map((p) => (p instanceof RegExp ? `regexp:${p.source}` : p));
    if (layer.route) {
      for (const method of Object.keys(layer.route.methods)) {
        for (const path of paths) found.routes.push(`${method === '_all' ? 'ALL' : method.toUpperCase()} ${documentForm(prefix + path)}`);
      }
    } else if (layer.handle.stack) {
      for (const path of paths) {
        const inner = mountedBy(layer.handle.stack, prefix + (path === '/' ? '' : path));
        found.routes.push(...inner.routes);
        found.middleware.push(...inner.middleware);
      }
    } else {
      for (const path of paths) if (path !== '/') found.middleware.push(`${prefix + path} ${layer.name}`);
    }
  }
  return found;
}

function documentForm(expressPath: string): string {
  return expressPath.replace(/:(\w+)/g, '{$1}');
}

/** The validator's verdict on a copy of `doc`: validate() dereferences what it is given, and the cases read the document as served. */
function validateCopy(doc: Json) {
  return validate(structuredClone(doc) as Parameters<typeof validate>[0]);
}

/** Ajv for the OpenAPI 3.1 dialect: JSON Schema 2020-12 with OpenAPI's vocabulary, every other keyword refused. */
function strictDialect(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, logger: false });
  addFormats(ajv);
  // Ajv takes OpenAPI 3.0's `nullable` by default; 3.1 has no such keyword (a null is `type: [..., 'null']`).
  ajv.removeKeyword('nullable');
  ajv.addVocabulary(['discriminator', 'xml', 'externalDocs', 'example']);
  return ajv;
}

/**
 * Every Schema Object below `node` (parameters', media types' `schema`), with where it is. Schemas are not descended
 * into: a property named `schema` in one is data, not a Schema Object.
 */
function schemaObjects(node: unknown, where: string): Array<readonly [string, Json]> {
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node as Json).flatMap(([key, value]) =>
    key === 'schema' && value && typeof value === 'object' ? [[`${where}.schema`, value as Json] as const] : schemaObjects(value, `${where}.${key}`),
  );
}

/** The schema with each `$ref` into `#/components/schemas/` turned into the id that component is added to Ajv under. */
function refsAsIds(schema: unknown, componentId: (name: string) => string): Json {
  if (Array.isArray(schema)) return schema.map((s) => refsAsIds(s, componentId)) as unknown as Json;
  if (!schema || typeof schema !== 'object') return schema as Json;
  return Object.fromEntries(
    Object.entries(schema as Json).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' ? value.replace(/^#\/components\/schemas\/(.+)$/, (_, name: string) => componentId(name)) : refsAsIds(value, componentId),
    ]),
  );
}

/** The app's own answer to a request no route takes (src/http/app.ts): 405 on a known path, 404 `No route …` otherwise. */
function isNoSuchRoute(status: number, body: Json | undefined): boolean {
  return status === 405 || (status === 404 && typeof body?.error?.message === 'string' && body.error.message.startsWith('No route '));
}

describeEachDatabase('the OpenAPI document', (get) => {
  let service: TestService;
  let doc: Json;
  let widgetKey: string;

  beforeAll(async () => {
    service = await startTestService(get());
    const served = await service.api('GET', '/openapi.json');
    expect(served.status).toBe(200);
    doc = served.body as Json;
    const ws = await seedWorkspace(service);
    widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
  });
  afterAll(() => service.stop());

  /** The Express application the server hands every request to. */
  function runningApp(): Express {
    const listeners = service.server.listeners('request');
    expect(listeners).toHaveLength(1);
    const app = listeners[0] as unknown as Express;
    expect(app.router?.stack, 'the request listener is an Express app').toBeDefined();
    return app;
  }

  describe('is valid OpenAPI 3.1 by a maintained validator', () => {
    it('says openapi 3.1.x', () => {
      expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    });

    it('@readme/openapi-parser finds no error and no warning in the document served', async () => {
      const result = await validateCopy(doc);
      expect(result.specification).toBe('OpenAPI');
      expect(result.valid ? [] : result.errors.map((e) => e.message)).toEqual([]);
      expect(result.warnings.map((w) => w.message)).toEqual([]);
    });
  });

  describe('every schema in it is valid JSON Schema 2020-12, the dialect of OpenAPI 3.1', () => {
    // The official OpenAPI 3.1 schema, which the validator applies, takes any object as a Schema Object (the dialect is
    // left to `jsonSchemaDialect`), so a keyword that is not JSON Schema (3.0's `nullable`), a keyword of the wrong
    // type or a pattern that is no regular expression passes it. Ajv 2020 in strict mode refuses each of them.
    it('each Schema Object compiles with Ajv 2020 in strict mode, its $refs into components resolved', () => {
      const ajv = strictDialect();
      const componentId = (name: string) => `urn:botlink:openapi:components:schemas:${name}`;
      const components = Object.entries((doc.components?.schemas ?? {}) as Record<string, Json>);
      for (const [name, schema] of components) ajv.addSchema(refsAsIds(schema, componentId), componentId(name));

      const refused: string[] = [];
      for (const [where, schema] of [...components.map(([name, s]) => [`components.schemas.${name}`, s] as const), ...schemaObjects(doc.paths, 'paths')]) {
        try {
          ajv.compile(refsAsIds(schema, componentId));
        } catch (err) {
          refused.push(`${where}: ${(err as Error).message}`);
        }
      }
      expect(refused).toEqual([]);
    });

    it('the strict check refuses what the OpenAPI schema lets through (it is not vacuous)', async () => {
      const ajv = strictDialect();
      const broken = structuredClone(doc);
      const healthz = broken.paths['/healthz'].get.responses['200'].content['application/json'];
      healthz.schema = { type: 'object', nullable: true };
      expect((await validateCopy(broken)).valid).toBe(true);
      expect(() => ajv.compile(healthz.schema)).toThrow(/unknown keyword: "nullable"/);
    });
  });

  describe('every operation it lists is answered by the app', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);

    /** A path parameter's value that its documented schema admits: an id is a UUID, an event one of its enum. */
    function parameterValue(schema: Json): string {
      const candidates = [...(schema.enum ?? []), randomUUID(), 'page-1', 'x'];
      const admits = ajv.compile(schema);
      const value = candidates.find((c) => admits(c));
      if (value === undefined) throw new Error(`no test value for the path parameter schema ${JSON.stringify(schema)}`);
      return String(value);
    }

    it("the app's own answer for no such route is recognised (the check below is not vacuous)", async () => {
      const unknown = await service.api('GET', '/v1/no-such-route');
      expect(isNoSuchRoute(unknown.status, unknown.body)).toBe(true);
      const wrongMethod = await service.api('PATCH', '/healthz');
      expect(isNoSuchRoute(wrongMethod.status, wrongMethod.body)).toBe(true);
    });

    it('a request with the operation\'s method and a valid path reaches a route, never "no such route" (404 or 405)', async () => {
      const unanswered: string[] = [];
      for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
        for (const method of Object.keys(item).filter((key) => METHODS.includes(key))) {
          const operation = item[method] as Json;
          const parameters = ((operation.parameters ?? []) as Json[]).filter((p) => p.in === 'path');
          const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(parameterValue(parameters.find((p) => p.name === name)?.schema ?? {})));
          // No credentials: a declared route checks them itself (401 from the route, not the fallback), and nothing
          // changes. The widget's routes sit behind the widget gate, which answers before routing: they get the key.
          const widgetOnly = JSON.stringify(operation.security) === JSON.stringify([{ widgetKey: [] }]);
          const controller = new AbortController();
          const res = await fetch(service.url + url, { method: method.toUpperCase(), headers: widgetOnly ? { 'x-widget-key': widgetKey } : {}, signal: controller.signal });
          const body = res.headers.get('content-type')?.startsWith('application/json') ? ((await res.json()) as Json) : undefined;
          controller.abort();
          if (isNoSuchRoute(res.status, body)) unanswered.push(`${method.toUpperCase()} ${path} (sent ${url}): ${res.status} ${body?.error?.message ?? ''}`);
        }
      }
      expect(unanswered).toEqual([]);
    });

    it('every operation of the document is a route in the running app\'s router', () => {
      const mounted = new Set(mountedBy(runningApp().router.stack as unknown as Layer[]).routes);
      expect(documentedOperations(doc).filter((op) => !mounted.has(op))).toEqual([]);
    });
  });

  describe('every route the app mounts is listed in it', () => {
    it('each route of the router stack is an operation of the document, or a page excluded above with its reason', () => {
      const documented = new Set(documentedOperations(doc));
      const { routes } = mountedBy(runningApp().router.stack as unknown as Layer[]);
      expect(routes.length).toBeGreaterThan(documented.size);
      expect(routes.filter((route) => !documented.has(route) && !(route in UNDOCUMENTED))).toEqual([]);
      // An exclusion for a route that is gone (or now documented) is stale.
      expect(Object.keys(UNDOCUMENTED).filter((route) => !routes.includes(route) || documented.has(route))).toEqual([]);
    });

    it('each handler mounted at a path ahead of the routes is a known one that answers no operation of its own', () => {
      const { middleware } = mountedBy(runningApp().router.stack as unknown as Layer[]);
      expect([...middleware].sort()).toEqual(Object.keys(PATH_MIDDLEWARE).sort());
    });

    it('the operations include the ones outside /v1: /healthz, /readyz, /metrics and /openapi.json', () => {
      expect(documentedOperations(doc)).toEqual(expect.arrayContaining(['GET /healthz', 'GET /readyz', 'GET /metrics', 'GET /openapi.json']));
    });
  });
});
