/**
 * Writes src/dashboard/api-types.d.ts: the dashboard's types of the API's answers and bodies, from the OpenAPI
 * document the service serves at /openapi.json (src/http/openapi.ts). The document is built in-process from the route
 * declarations (every `*Routes` factory of src/http/routes/), with inert dependencies: declaring a route reads none
 * of them, only its handler does, and no handler runs here. So nothing starts, and the types cannot drift from what
 * the routes validate and describe (test/dashboard/api-types.test.ts fails when the file is not current).
 *
 * Run: `npm run dashboard-types` (`npx node scripts/dashboard-types.ts`).
 *
 * Each operation of /v1 a signed-in user or anyone may call (bearer or no security: not the sync, widget or operator
 * keys) gives one type per JSON answer of 2xx, named after its operationId (`getSessionsId` → `GetSessionsId`, a second 2xx
 * answer with its status: `PostScenariosIdRuns202`), and one for its JSON body (`PutMePresenceBody`). The schemas of
 * `components` keep their names (`Error` as `ErrorBody`, since `Error` is the browser's).
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PRESENCE_IDLE_MINUTES } from '../src/config.ts';
import { buildOpenApi } from '../src/http/openapi.ts';
import type { RouteDefinition } from '../src/http/route.ts';
import { docComment, typeOf, type JsonSchema } from './json-schema-types.ts';

export const TYPES_FILE = new URL('../src/dashboard/api-types.d.ts', import.meta.url);
const ROUTES_DIR = new URL('../src/http/routes/', import.meta.url);

/** What appears in place of a dependency a declaration reads as text: the generator refuses a type that contains it. */
const INERT = 'INERT_DEPENDENCY';

/**
 * The settings some declarations put into a route's text (the presence's idle minutes in its summary, the public
 * address the phone's webhooks are built on), as the service's defaults.
 */
const SETTINGS: Record<string, unknown> = { publicUrl: 'https://botlink.example', idleMinutes: DEFAULT_PRESENCE_IDLE_MINUTES };

/** A dependency that is never used while routes are declared: any member of it is another, calling it gives another. */
const inert: unknown = new Proxy(function inert() {}, {
  get: (_target, key) => (key === Symbol.toPrimitive ? () => INERT : key === 'then' ? undefined : inert),
  apply: () => inert,
  construct: () => inert as object,
});

/** A route factory's dependencies: the settings above as themselves (a spread `{...deps}` keeps them), the rest inert. */
const dependencies = new Proxy({} as Record<string | symbol, unknown>, {
  get: (_target, key) => (typeof key === 'string' && key in SETTINGS ? SETTINGS[key] : key === 'then' ? undefined : inert),
  has: (_target, key) => typeof key === 'string' && key in SETTINGS,
  ownKeys: () => Object.keys(SETTINGS),
  getOwnPropertyDescriptor: (_target, key) =>
    typeof key === 'string' && key in SETTINGS ? { value: SETTINGS[key], enumerable: true, configurable: true, writable: false } : undefined,
});

/** The route table as the service declares it, in file order: every exported `…Routes` factory of src/http/routes/. */
export async function declaredRoutes(): Promise<RouteDefinition[]> {
  const routes: RouteDefinition[] = [];
  for (const file of readdirSync(ROUTES_DIR).filter((name) => name.endsWith('.ts')).sort()) {
    const module = (await import(new URL(file, ROUTES_DIR).href)) as Record<string, unknown>;
    for (const [name, factory] of Object.entries(module)) {
      if (!name.endsWith('Routes') || typeof factory !== 'function') continue;
      const declared = (factory as (...deps: unknown[]) => RouteDefinition[])(dependencies, dependencies, dependencies);
      routes.push(...declared);
    }
  }
  return routes;
}

interface Operation {
  operationId: string;
  security: Array<Record<string, string[]>>;
  requestBody?: { content: Record<string, { schema?: JsonSchema }> };
  responses: Record<string, { description: string; content?: Record<string, { schema?: JsonSchema }> }>;
}

/** The dashboard's calls: /v1 with a user's bearer token, or with none (sign-in, invitations). */
function dashboardCalls(path: string, operation: Operation): boolean {
  return path.startsWith('/v1/') && (operation.security.length === 0 || operation.security.some((scheme) => 'bearer' in scheme));
}

/** `getSessionsId` → `GetSessionsId`; a character a name cannot hold starts a new word. */
function typeName(operationId: string): string {
  return operationId.split(/[^A-Za-z0-9]+/).filter(Boolean).map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
}

const COMPONENT_NAMES: Record<string, string> = { Error: 'ErrorBody' };
const componentName = (name: string) => COMPONENT_NAMES[name] ?? name;

/** The text of src/dashboard/api-types.d.ts. */
export async function dashboardTypes(): Promise<string> {
  const doc = buildOpenApi(await declaredRoutes(), { version: 'generated', serverUrl: 'https://botlink.example' });
  const refName = (ref: string) => {
    const match = /^#\/components\/schemas\/(.+)$/.exec(ref);
    if (!match) throw new Error(`${ref}: only $refs into #/components/schemas are known`);
    return componentName(match[1]!);
  };
  const out = [
    '// Generated by scripts/dashboard-types.ts from the OpenAPI document (GET /openapi.json): do not edit.',
    '// Run `npm run dashboard-types` after changing a route\'s schemas; test/dashboard/api-types.test.ts checks it is current.',
    '',
  ];
  /** Each shape once: an answer (or a body) the same as one declared before is named as that one (`GetPhone = PutPhone`). */
  const declared = new Map<string, string>();
  const declare = (name: string, about: string, schema: JsonSchema | undefined, at: string, kind: 'answer' | 'body') => {
    const type = typeOf(schema, { refName }, at);
    const key = `${kind} ${type}`;
    const same = type.startsWith('{') ? declared.get(key) : undefined;
    if (!same && type.startsWith('{')) declared.set(key, name);
    out.push(docComment(about), `export type ${name} = ${same ?? type};`, '');
  };
  for (const [name, schema] of Object.entries(doc.components.schemas)) declare(componentName(name), `The schema ${name} of the document's components.`, schema, name, 'answer');
  const seen = new Set<string>();
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, described] of Object.entries(methods)) {
      const operation = described as Operation;
      if (!dashboardCalls(path, operation)) continue;
      const base = typeName(operation.operationId);
      const where = `${method.toUpperCase()} ${path}`;
      const body = operation.requestBody?.content['application/json']?.schema;
      if (body) declare(unique(`${base}Body`, seen), `The body of ${where}.`, body, `${where} body`, 'body');
      let first = true;
      for (const [status, response] of Object.entries(operation.responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (!/^2\d\d$/.test(status) || !schema) continue;
        declare(unique(first ? base : `${base}${status}`, seen), `${where}, ${status}: ${response.description}`, schema, `${where} ${status}`, 'answer');
        first = false;
      }
    }
  }
  const text = `${out.join('\n').trimEnd()}\n`;
  if (text.includes(INERT)) throw new Error(`a route's schema reads a dependency the generator does not give (${INERT} in the types): add it to SETTINGS`);
  return text;
}

function unique(name: string, seen: Set<string>): string {
  if (seen.has(name)) throw new Error(`two operations are both named ${name}`);
  seen.add(name);
  return name;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(TYPES_FILE, await dashboardTypes());
  console.log(`wrote ${fileURLToPath(TYPES_FILE)}`);
}
