/**
 * The API as /openapi.json describes it: for every operation of the document served by a running service,
 * requests are generated from the document itself (bodies, query strings and path parameters, valid and invalid,
 * with the strings, numbers and shapes that break servers), sent with the right credentials, and every answer must
 * hold to the document:
 *
 * - never a 5xx;
 * - its status is one the operation documents, its content type the documented one, its body valid against the
 *   documented schema, and every 4xx the error body `{"error":{"code","message"}}`;
 * - what the document calls valid is not refused as invalid (no 400, 413 or 415: the document is not looser than the
 *   server), and what it calls invalid is refused with a 4xx (an `{id}` that is not one with 404);
 * - U+0000 and lone surrogates, wherever the document admits a string, are taken like any other text;
 * - a method the document does not give a path is 405 with `Allow` (docs/interfaces.md).
 *
 * Beside it, the patterns the document states for what the server checks in code (E.164, origins, page URLs, titles)
 * are checked against that code with fast-check, and the paths of the document must not be ambiguous.
 *
 * The generator is our own, over the JSON Schemas of the document, with fast-check arbitraries. Runs are sampled with
 * a fixed seed (FUZZ_SEED, FUZZ_RUNS to explore more) and every problem of an operation is reported at once, with the
 * request that showed it. What the suite cannot check from the document alone is listed below with its reason, and
 * each such entry is asserted, not skipped.
 */
import { randomUUID } from 'node:crypto';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { E164_INPUT_PATTERN, normaliseE164 } from '../../src/channels/phone/phone-number.ts';
import { ORIGIN_PATTERN, PAGE_URL_PATTERN } from '../../src/channels/webchat/limits.ts';
import { canonicalOrigin } from '../../src/channels/webchat/origins.ts';
import { signWebhookBody } from '../../src/channels/whatsapp/signature.ts';
import { cleanLine, VISIBLE_TEXT_PATTERN } from '../../src/knowledge/text.ts';
import { MAX_API_BODY_BYTES } from '../../src/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/service.ts';

// ajv-formats is CommonJS: under ESM its plugin is the `default` property of the module object.
const addFormats = addFormatsModule.default;

const RUNS = Number(process.env.FUZZ_RUNS ?? 20);
/**
 * On PostgreSQL (the second database of a run), fewer samples per operation: the HTTP layer, the document and the
 * generator are the same on both, and what differs (the storage) is reached by every operation's first samples. The
 * same seed makes them the first 5 of the 20 PGlite gets, so PostgreSQL answers a subset of the very same requests; it
 * gave the suite's slowest file (162 s) about half its time for what PGlite had already shown; with 5, the PostgreSQL
 * pass took 17 s beside PGlite's 47 s in one run. FUZZ_RUNS sets both.
 */
const RUNS_ON_POSTGRES = Number(process.env.FUZZ_RUNS ?? 5);
const SEED = Number(process.env.FUZZ_SEED ?? 1111);

const PUBLIC_URL = 'https://botlink.example';
const SHOP = 'https://shop.example';
const WHATSAPP_APP_SECRET = 'whatsapp-app-secret-for-the-fuzzer';
const WHATSAPP_VERIFY_TOKEN = 'whatsapp-verify-token-for-the-fuzzer';
/** Loopback on the discard port: accepted as an endpoint (OUTBOUND_ALLOW in tests), refused at once when called. */
const DEAD_ENDPOINT = 'https://127.0.0.1:9';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Schema = Record<string, any>;

/**
 * Operations whose bodies are not ours to refuse: what the document calls an invalid body is accepted by design, so
 * for them an invalid body must only not break the server (no 5xx, a documented answer).
 */
const LENIENT_BODIES: Record<string, string> = {
  'POST /v1/whatsapp/webhook': "Meta's payload is stored as signed and read tolerantly afterwards (docs/whatsapp.md); a body we cannot read is still acknowledged",
  'POST /v1/phone/twilio/voice': "Twilio's form parameters are all strings and read as they come; a missing one means an unknown caller, answered with TwiML",
  'POST /v1/phone/twilio/action': "Twilio's form parameters are all strings and read as they come; a missing one means an unknown caller, answered with TwiML",
  'POST /v1/knowledge/files': 'a multipart form carries text only, so a field cannot have the wrong JSON type on the wire; the file itself is checked (its type, its size, whether it reads) and refused with a documented 4xx',
};

/** A multipart body (RFC 7578) from an object of fields; a field the document calls binary is sent as a file. */
const MULTIPART_BOUNDARY = 'botlink-fuzz-boundary';
function multipartText(body: unknown, binaryFields: readonly string[]): string {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return JSON.stringify(body);
  const parts = Object.entries(body as Record<string, unknown>).map(([name, value]) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    const disposition = binaryFields.includes(name) ? `form-data; name="${name}"; filename="fuzz.txt"\r\nContent-Type: text/plain` : `form-data; name="${name}"`;
    return `--${MULTIPART_BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n\r\n${text}\r\n`;
  });
  return `${parts.join('')}--${MULTIPART_BOUNDARY}--\r\n`;
}

/**
 * What JSON Schema cannot say: a request the document calls valid that the server may still refuse with 400, and
 * only for these fields. Each 400 of such an operation must name only fields the entry covers.
 */
const SEMANTIC_CHECKS: Record<string, { fields: RegExp; reason: string }> = {
  'PUT /v1/phone': {
    fields: /^(team_hours\.(time_zone|week\.\w+\.\d+(\.0)?)|numbers\.\d+|transfer_number)$/,
    reason: 'the time zone must be one Intl knows, a range must start before 24:00 and end after it starts, and a number is read as people write it (docs/phone.md, "Numbers"), with a sentence of our own when it cannot be',
  },
  'PATCH /v1/workspace': { fields: /^(name|time_zone|webchat_idle_minutes)$/, reason: 'a name not only spaces, a time zone Intl knows, an idle period within bounds: each said in a sentence for the owner' },
  'PATCH /v1/account': { fields: /^email$/, reason: 'an email address, said in a sentence for the person who typed it' },
  'POST /v1/sync/batch': { fields: /^((upserts|deletes)\[\d+\]\.external_id|)$/, reason: 'each page or product once per batch, and at most 100 items in upserts and deletes together' },
  'GET /v1/sync/pages': { fields: /^cursor$/, reason: 'the cursor is opaque: only one the server gave out is valid' },
  'GET /v1/sync/products': { fields: /^cursor$/, reason: 'the cursor is opaque: only one the server gave out is valid' },
  'GET /v1/knowledge/entries': { fields: /^cursor$/, reason: 'the cursor is opaque: only one the server gave out is valid' },
  ...Object.fromEntries(
    ['GET /v1/analytics/overview', 'GET /v1/analytics/timeseries', 'GET /v1/analytics/unanswered', 'GET /v1/exports/conversations'].map((key) => [
      key,
      { fields: /^(from|to|bucket)$/, reason: 'from before to (to defaults to now), at most 400 days and one whole hour at least, hour buckets for 31 days at most (docs/analytics.md)' },
    ]),
  ),
  'POST /v1/auth/password': { fields: /^password$/, reason: 'a password may not be only whitespace; said in a sentence of our own, which a schema pattern could not give' },
  ...Object.fromEntries(
    ['POST /v1/privacy/export', 'POST /v1/privacy/erase'].map((key) => [
      key,
      { fields: /^(phone|email|whatsapp_id)$/, reason: 'a whole number read as people write it (7 to 15 digits in E.164), a WhatsApp id as Meta writes it, or a whole email; never a part of one (docs/privacy.md)' },
    ]),
  ),
};

/**
 * Operations that change the credentials or settings the others use, and what the suite does about it.
 */
const STATEFUL: Record<string, string> = {
  'DELETE /v1/tokens/current': 'revokes the token it is called with: every request gets a token of its own',
  'POST /v1/keys/sync': 'replaces the sync key: the sync operations go on with the key of its last answer',
  'PUT /v1/webchat': "replaces the allowed origins: the shop's origin is put back afterwards for the widget's operations",
};

/** Strings that are valid JSON strings and break careless servers. */
const NASTY_STRINGS = [
  '\u0000',
  'before\u0000after',
  '\ud800',
  'x\udfffy',
  '\udc00\ud800',
  '\u202e\u2066bidi',
  '😀👍🏽👨‍👩‍👧',
  ' ',
  '\t\r\n',
  '\ufeff',
  '\u00a0',
  '%00%zz',
  "'; drop table workspaces; --",
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  '../../etc/passwd',
  'Ω≈ç√∫',
];

function nest(depth: number, make: (inner: unknown) => unknown): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = make(value);
  return value;
}

/** Values of every JSON type, with the extreme ones: what a field of another type gets. */
const ANY_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53 + 2,
  5e-324,
  '',
  'text',
  '\u0000',
  '\ud800',
  [],
  [1, 'a', null],
  {},
  { a: { b: 1 } },
  nest(1_000, (inner) => [inner]),
  nest(1_000, (inner) => ({ a: inner })),
];

interface Operation {
  key: string;
  method: string;
  path: string;
  operation: Schema;
}

interface Sent {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body?: string;
  /** What the request is, for the report. */
  kind: string;
  /** valid: by the document; invalid: by the document, to be refused; invalid-id: an {id} that is not one (404); tolerated: outside the document (an unexpected body or parameter). */
  expect: 'valid' | 'invalid' | 'invalid-id' | 'tolerated' | { status: number };
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
  json: unknown;
}

/** JSON Schema → fast-check arbitraries of valid and of invalid values, over the document's schemas. */
class Arbitraries {
  readonly #ajv: Ajv2020;
  readonly #doc: Schema;
  readonly #validators = new Map<Schema, ValidateFunction>();
  readonly #derefs = new WeakMap<Schema, Schema>();
  readonly #merges = new WeakMap<Schema, Map<Schema, Schema>>();

  constructor(doc: Schema) {
    this.#doc = doc;
    this.#ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
    addFormats(this.#ajv);
  }

  /**
   * The schema with every `$ref` into the document replaced by its target; the same object for the same schema, so
   * that validators compiled for it are reused.
   */
  deref(schema: Schema): Schema {
    if (!schema || typeof schema !== 'object') return schema;
    const done = this.#derefs.get(schema);
    if (done) return done;
    let result: Schema;
    if (Array.isArray(schema)) result = schema.map((s) => this.deref(s)) as unknown as Schema;
    else if (typeof schema.$ref === 'string') {
      const target = schema.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((node: Schema, token: string) => node[token.replaceAll('~1', '/').replaceAll('~0', '~')], this.#doc);
      result = this.deref(target);
    } else result = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, typeof v === 'object' && v !== null ? this.deref(v) : v]));
    this.#derefs.set(schema, result);
    this.#derefs.set(result, result);
    return result;
  }

  validator(schema: Schema): ValidateFunction {
    const resolved = this.deref(schema);
    let validate = this.#validators.get(resolved);
    if (!validate) {
      validate = this.#ajv.compile(resolved);
      this.#validators.set(resolved, validate);
    }
    return validate;
  }

  /** A branch of the anyOf/oneOf of `s` with the keywords around it, made once per pair. */
  #merged(s: Schema, branch: Schema): Schema {
    let byBranch = this.#merges.get(s);
    if (!byBranch) this.#merges.set(s, (byBranch = new Map()));
    let merged = byBranch.get(branch);
    if (!merged) {
      const { anyOf: _a, oneOf: _o, ...rest } = s;
      byBranch.set(branch, (merged = { ...rest, ...branch }));
    }
    return merged;
  }

  valid(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    const check = this.validator(schema);
    return this.#validShape(this.deref(schema), depth).filter((v) => check(v));
  }

  #validShape(s: Schema, depth: number): fc.Arbitrary<unknown> {
    if ('const' in s) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
    if (branches) {
      return fc.oneof(...branches.map((b) => this.valid(this.#merged(s, b), depth)));
    }
    const types: string[] = s.type === undefined ? (s.properties ? ['object'] : ['any']) : [s.type].flat();
    return fc.oneof(...types.map((t) => this.#validOfType(s, t, depth)));
  }

  #validOfType(s: Schema, type: string, depth: number): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer': {
        const min = s.minimum ?? -(2 ** 53 - 1);
        const max = s.maximum ?? 2 ** 53 - 1;
        return fc.oneof(fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31 - 1) }), fc.constantFrom(min, max));
      }
      case 'number': {
        const min = s.minimum ?? -1e308;
        const max = s.maximum ?? 1e308;
        return fc.oneof(fc.double({ min, max, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(min, max, 5e-324 >= min && 5e-324 <= max ? 5e-324 : min));
      }
      case 'string':
        return this.#string(s);
      case 'array': {
        const minLength = s.minItems ?? 0;
        return fc.array(this.valid(s.items ?? {}, depth + 1), { minLength, maxLength: Math.max(minLength, Math.min(s.maxItems ?? 3, 3)) });
      }
      case 'object': {
        const properties = (s.properties ?? {}) as Record<string, Schema>;
        const record = fc.record(
          Object.fromEntries(Object.entries(properties).map(([name, p]) => [name, this.valid(p, depth + 1)])),
          { requiredKeys: (s.required ?? []) as string[] },
        ) as fc.Arbitrary<Record<string, unknown>>;
        if (s.additionalProperties === false || depth > 2) return record;
        // Fields the schema leaves open: some extra ones, of the type it allows.
        const extra = fc.dictionary(
          fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !(k in properties)),
          typeof s.additionalProperties === 'object' ? this.valid(s.additionalProperties, depth + 1) : fc.jsonValue({ maxDepth: 2 }),
          { maxKeys: 2 },
        );
        return fc.tuple(record, extra).map(([r, e]) => ({ ...e, ...r }));
      }
      default:
        return fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(...NASTY_STRINGS));
    }
  }

  #string(s: Schema): fc.Arbitrary<string> {
    const options: fc.Arbitrary<string>[] = [];
    if (Array.isArray(s.examples)) options.push(fc.constantFrom(...(s.examples as string[])));
    switch (s.format) {
      case 'uuid':
        options.push(fc.uuid());
        break;
      case 'email':
        options.push(fc.emailAddress());
        break;
      case 'uri':
        options.push(fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true, withFragments: true }));
        break;
      case 'binary':
        // A file's content in a multipart form (POST /v1/knowledge/files).
        options.push(fc.string({ minLength: 0, maxLength: 200 }));
        break;
      case 'date-time':
        options.push(fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()));
        break;
      case undefined:
        if (s.pattern) options.push(patternArbitrary(s.pattern as string));
        else {
          const minLength = s.minLength ?? 0;
          const maxLength = Math.max(minLength, Math.min(s.maxLength ?? 40, 40));
          options.push(fc.string({ minLength, maxLength }), fc.string({ minLength, maxLength, unit: 'binary' }));
          if (s.maxLength !== undefined && s.maxLength <= 10_000) options.push(fc.constant('é'.repeat(s.maxLength)));
        }
        break;
      default:
        throw new Error(`no generator for format ${s.format}`);
    }
    // The strings that break servers, wherever the schema admits them (the caller filters).
    options.push(fc.constantFrom(...NASTY_STRINGS));
    return fc.oneof(...options);
  }

  /** Values the schema refuses: of another type, out of range, too long, not matching, missing or extra fields. */
  invalid(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    const check = this.validator(schema);
    const s = this.deref(schema);
    const options: fc.Arbitrary<unknown>[] = [fc.constantFrom(...ANY_VALUES)];
    const types: string[] = s.type === undefined ? [] : [s.type].flat();
    if (Array.isArray(s.enum) || 'const' in s || s.pattern || s.format) options.push(fc.string({ maxLength: 20 }), fc.constantFrom(...NASTY_STRINGS));
    if (types.includes('string')) {
      if (s.maxLength !== undefined) options.push(fc.constant('x'.repeat(s.maxLength + 1)), fc.constant('é'.repeat(s.maxLength + 1)));
      if (s.minLength) options.push(fc.constant(''));
    }
    if (types.includes('integer') || types.includes('number')) {
      if (s.minimum !== undefined) options.push(fc.constantFrom(s.minimum - 1, s.minimum - 0.5, -1e308));
      if (s.maximum !== undefined) options.push(fc.constantFrom(s.maximum + 1, s.maximum + 0.5, 1e308));
      if (types.includes('integer')) options.push(fc.constantFrom(0.5, 1.000001, 2 ** 53 + 0.5));
    }
    if (types.includes('array') && depth < 3) {
      const item = (s.items ?? {}) as Schema;
      if (s.maxItems !== undefined) options.push(this.valid(item, depth + 1).map((v) => Array.from({ length: s.maxItems + 1 }, () => v)));
      if (s.minItems) options.push(fc.constant([]));
      options.push(fc.tuple(fc.array(this.valid(item, depth + 1), { maxLength: 2 }), this.invalid(item, depth + 1)).map(([items, bad]) => [...items, bad]));
    }
    if (types.includes('object') && depth < 3) {
      const whole = this.valid(s, depth) as fc.Arbitrary<Record<string, unknown>>;
      for (const name of (s.required ?? []) as string[]) {
        options.push(whole.map((o) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== name))));
      }
      if (s.additionalProperties === false) options.push(fc.tuple(whole, fc.constantFrom(...ANY_VALUES)).map(([o, v]) => ({ ...o, unexpected_field: v })));
      for (const [name, p] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
        options.push(fc.tuple(whole, this.invalid(p, depth + 1)).map(([o, v]) => ({ ...o, [name]: v })));
      }
    }
    const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
    if (branches && depth < 3) for (const b of branches) options.push(this.invalid(this.#merged(s, b), depth + 1));
    return fc.oneof(...options).filter((v) => !check(v));
  }
}

/**
 * fast-check's stringMatching knows no lookarounds: they are left out of the pattern it generates from, and the
 * caller's filter (the whole schema) keeps what the real pattern admits.
 */
function patternArbitrary(pattern: string): fc.Arbitrary<string> {
  const withoutLookarounds = pattern.replace(/\(\?<?[!=](?:\\.|[^)\\])*\)/g, '');
  return fc.stringMatching(new RegExp(withoutLookarounds, 'u'));
}

/** A query value as it travels: a string. */
const queryText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** `value` once for each string in it, with that string replaced by `text`; named by where it is (`upserts.0.title`). */
function stringsReplaced(value: unknown, text: string, at = ''): Array<[string, unknown]> {
  if (typeof value === 'string') return [[at || '(the body)', text]];
  if (Array.isArray(value)) return value.flatMap((item, i) => stringsReplaced(item, text, at ? `${at}.${i}` : String(i)).map(([f, v]): [string, unknown] => [f, value.map((x, j) => (j === i ? v : x))]));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, item]) => stringsReplaced(item, text, at ? `${at}.${k}` : k).map(([f, v]): [string, unknown] => [f, { ...value, [k]: v }]));
  }
  return [];
}

/** The schema with every top-level property required. */
function withEveryField(schema: Schema): Schema {
  return schema.properties ? { ...schema, required: Object.keys(schema.properties) } : schema;
}

/** A form body: the fields of an object as text, anything else as the text it would be. */
function formText(body: unknown): string {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return queryText(body);
  return new URLSearchParams(Object.entries(body).map(([k, v]): [string, string] => [k, queryText(v)])).toString();
}

/** No URL can carry these to a path parameter: a lone surrogate has no UTF-8, `.` and `..` are removed by every URL library. */
const reachesThePath = (value: string) => value !== '' && value !== '.' && value !== '..' && value.isWellFormed();

const STATUS_TEXT_LIMIT = 300;
const describeSent = (sent: Sent) =>
  `${sent.method} ${sent.path}${sent.query ? `?${sent.query}` : ''} [${sent.kind}]${sent.body === undefined ? '' : ` body ${sent.body.slice(0, STATUS_TEXT_LIMIT)}${sent.body.length > STATUS_TEXT_LIMIT ? `… (${sent.body.length} bytes)` : ''}`}`;

function operationsOf(doc: Schema): Operation[] {
  return Object.entries(doc.paths as Record<string, Record<string, Schema>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, operation })),
  );
}

/**
 * Two templated paths are ambiguous when one request could match both: segment by segment, two fixed segments must
 * be equal and a fixed segment must be a value the other's parameter admits (its enum, pattern or format).
 */
function ambiguousPairs(doc: Schema, arbitraries: Arbitraries): string[] {
  const paramSchema = (path: string, name: string): Schema => {
    for (const operation of Object.values(doc.paths[path] as Record<string, Schema>)) {
      const found = ((operation.parameters ?? []) as Schema[]).find((p) => p.in === 'path' && p.name === name);
      if (found) return found.schema as Schema;
    }
    throw new Error(`${path} has no parameter ${name}`);
  };
  const segmentsMeet = (pathA: string, a: string, pathB: string, b: string): boolean => {
    const paramA = /^\{(.+)\}$/.exec(a)?.[1];
    const paramB = /^\{(.+)\}$/.exec(b)?.[1];
    if (paramA === undefined && paramB === undefined) return a === b;
    if (paramA !== undefined && paramB !== undefined) {
      const enumA = paramSchema(pathA, paramA).enum as string[] | undefined;
      const enumB = paramSchema(pathB, paramB).enum as string[] | undefined;
      if (enumA && enumB) return enumA.some((v) => enumB.includes(v));
      if (enumA) return enumA.some((v) => arbitraries.validator(paramSchema(pathB, paramB))(v));
      if (enumB) return enumB.some((v) => arbitraries.validator(paramSchema(pathA, paramA))(v));
      return true;
    }
    return paramA !== undefined ? arbitraries.validator(paramSchema(pathA, paramA))(b) : arbitraries.validator(paramSchema(pathB, paramB!))(a);
  };
  const paths = Object.keys(doc.paths as object);
  const pairs: string[] = [];
  for (const [i, pathA] of paths.entries()) {
    for (const pathB of paths.slice(i + 1)) {
      const a = pathA.split('/');
      const b = pathB.split('/');
      if (a.length === b.length && a.every((segment, j) => segmentsMeet(pathA, segment, pathB, b[j]!))) pairs.push(`${pathA} ~ ${pathB}`);
    }
  }
  return pairs;
}

describe('the patterns of the document agree with the checks of the server', () => {
  const phoneLike = fc
    .array(fc.oneof(fc.constantFrom('+', '(0)', 'tel:', 'TEL:', '(', ')', '.', '-', ' ', '\u00a0', '\t', '\ufeff', 'x'), fc.integer({ min: 0, max: 9 }).map(String), fc.stringMatching(/^[0-9]{1,6}$/)), { maxLength: 14 })
    .map((parts) => parts.join(''));

  it('E.164 as the phone settings take it: the pattern admits exactly what normaliseE164 accepts', () => {
    const pattern = new RegExp(E164_INPUT_PATTERN, 'u');
    fc.assert(
      fc.property(phoneLike, (text) => pattern.test(text) === (normaliseE164(text) !== null)),
      { numRuns: 5_000, seed: SEED, examples: [['+31 (0)20 123 4567'], ['+3(0)1'], ['+3(0)'], [' tel: +31 20'], ['+((0))1'], ['+1234567890123456']] },
    );
  });

  it('a title the document admits keeps a visible character once the knowledge base has cleaned it', () => {
    const pattern = new RegExp(VISIBLE_TEXT_PATTERN, 'u');
    const titleLike = fc.string({ unit: fc.oneof(fc.constantFrom(' ', '\t', '\n', '\u0000', '\u0001', '\u0085', '\u00a0', '\u2028', '\ufeff', '\ufffe', '\uffff', '\u200b', '\u2000', 'a'), fc.constantFrom(...'\u0300\u1fef\u2126\u212b'.split(''))), maxLength: 6 });
    fc.assert(fc.property(titleLike, (title) => pattern.test(title) === (cleanLine(title) !== '')), { numRuns: 5_000, seed: SEED });
  });

  const urlLike = fc.oneof(
    fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true, withFragments: true }),
    fc.tuple(fc.constantFrom('http://', 'https://', 'HTTPS://', 'ftp://', 'http:/', ''), fc.string({ unit: fc.constantFrom(...'ab1.-_:@[]/?#% 0x9xn-'.split('')), maxLength: 24 })).map(([s, rest]) => s + rest),
    fc.tuple(fc.constantFrom('http://', 'https://'), fc.oneof(fc.ipV4(), fc.ipV4Extended(), fc.ipV6().map((ip) => `[${ip}]`), fc.string({ unit: fc.constantFrom(...'[]:.0fF9'.split('')), maxLength: 12 })), fc.option(fc.integer({ min: 0, max: 99_999 })), fc.constantFrom('', '/', '/a?b#c')).map(([s, ip, port, rest]) => `${s}${ip}${port === null ? '' : `:${port}`}${rest}`),
    fc.tuple(fc.constantFrom('http://', 'https://'), fc.domain(), fc.option(fc.integer({ min: 0, max: 99_999 })), fc.constantFrom('', '/', '//', '/x', '?', '#')).map(([s, host, port, rest]) => `${s}${host}${port === null ? '' : `:${port}`}${rest}`),
  );

  it('an allowed origin the document admits is one the server takes', () => {
    const pattern = new RegExp(ORIGIN_PATTERN, 'u');
    fc.assert(fc.property(urlLike, (text) => !pattern.test(text) || canonicalOrigin(text) !== undefined), { numRuns: 5_000, seed: SEED });
    // …and it is not stricter than it need be for the origins people have.
    for (const origin of ['https://shop.example', 'http://localhost:3000', 'https://SHOP.example:443/', 'http://127.0.0.1:8080', 'http://[::1]:8080', 'https://xn--bcher-kva.example']) expect(pattern.test(origin), origin).toBe(true);
  });

  it('a page_url the document admits is one the server takes (an http(s) URL with a host)', () => {
    const pattern = new RegExp(PAGE_URL_PATTERN, 'u');
    const serverTakes = (text: string) => {
      try {
        const url = new URL(text);
        return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
      } catch {
        return false;
      }
    };
    fc.assert(fc.property(urlLike, (text) => !pattern.test(text) || serverTakes(text)), { numRuns: 5_000, seed: SEED });
  });
});

describeEachDatabase('the API as /openapi.json describes it', (get) => {
  let service: TestService;
  let doc: Schema;
  let arbitraries: Arbitraries;
  const exercised = new Map<string, number>();
  const credentials = { owner: '', syncKey: '', widgetKey: '' };
  const known = { ids: [] as string[], externalIds: [] as string[] };

  beforeAll(async () => {
    service = await startTestService(
      get(),
      // Replies to a WhatsApp message the fuzzer made up would go nowhere.
      { PUBLIC_URL, WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN, WHATSAPP_GRAPH_URL: DEAD_ENDPOINT },
      {
        webchat: { rateLimit: { burst: 100_000, windowMs: 1_000 } },
        // No name resolves: an endpoint URL the fuzzer makes up is refused (422) without touching the network.
        lookup: async (host: string) => {
          throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        },
      },
    );
    const ws = await seedWorkspace(service, 'Fuzz');
    credentials.owner = ws.owner;
    credentials.syncKey = (await service.api('POST', '/v1/keys/sync', { token: ws.owner })).body.key;
    credentials.widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key;
    await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } });
    const page = await service.api('PUT', '/v1/sync/pages/shipping', { headers: { 'x-sync-key': credentials.syncKey }, body: { title: 'Shipping', body: 'We ship within two working days.' } });
    expect(page.status).toBe(201);
    const started = await service.api('POST', '/v1/webchat/conversations', {
      headers: { 'x-widget-key': credentials.widgetKey, origin: SHOP },
      body: { visitor_message: 'How fast do you ship?', page_url: `${SHOP}/` },
    });
    expect(started.status).toBe(201);
    const sessions = await service.api('GET', '/v1/sessions', { token: ws.owner });
    await ensureFixtures();
    const delivery = await service.api('POST', '/v1/webhooks/test', { token: ws.owner, body: { event: 'new_chat' } });
    expect(delivery.status).toBe(200);
    known.ids.push(started.body.conversation_id, sessions.body.sessions[0].id, delivery.body.id, ws.agentId);
    known.externalIds.push('shipping');

    doc = (await service.api('GET', '/openapi.json')).body;
    arbitraries = new Arbitraries(doc);
  });
  afterAll(async () => {
    await service?.stop();
  });

  async function newConversation(): Promise<string> {
    const started = await service.api('POST', '/v1/webchat/conversations', {
      headers: { 'x-widget-key': credentials.widgetKey, origin: SHOP },
      body: { visitor_message: 'Do you ship to Belgium?', page_url: `${SHOP}/` },
    });
    if (started.status !== 201) throw new Error(`a conversation: ${started.text}`);
    return started.body.conversation_id as string;
  }

  /** What the operations build on: an integration and a webhook (other operations remove them). */
  async function ensureFixtures(): Promise<void> {
    const integration = await service.api('PUT', '/v1/integration', { token: credentials.owner, body: { endpoint_url: `${DEAD_ENDPOINT}/botlink/channel` } });
    const webhook = await service.api('PUT', '/v1/webhooks/new_chat', { token: credentials.owner, body: { url: `${DEAD_ENDPOINT}/hooks/new_chat` } });
    if (integration.status !== 200 || webhook.status !== 200) throw new Error(`fixtures: ${integration.text} ${webhook.text}`);
  }

  it('the document is OpenAPI 3.1 and no two of its paths can match the same request', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(ambiguousPairs(doc, arbitraries)).toEqual([]);
    // The check sees what it is for: without its enum, {event} would also match /v1/webhooks/test and /deliveries.
    const loose = structuredClone(doc) as Schema;
    for (const operation of Object.values(loose.paths['/v1/webhooks/{event}'] as Record<string, Schema>)) operation.parameters[0].schema = { type: 'string' };
    expect(ambiguousPairs(loose, new Arbitraries(loose))).toEqual(['/v1/webhooks/{event} ~ /v1/webhooks/test', '/v1/webhooks/{event} ~ /v1/webhooks/deliveries']);
  });

  it('every allow-list entry names an operation of the document', () => {
    const keys = operationsOf(doc).map((o) => o.key);
    for (const key of [...Object.keys(LENIENT_BODIES), ...Object.keys(SEMANTIC_CHECKS), ...Object.keys(STATEFUL)]) expect(keys, key).toContain(key);
  });

  /** The headers that authorise `operation` (its first security requirement), and the body's signature where one is needed. */
  async function authorise(op: Operation, body: string | undefined): Promise<Record<string, string>> {
    if (op.key === 'POST /v1/whatsapp/webhook') return { 'x-hub-signature-256': signWebhookBody(WHATSAPP_APP_SECRET, body ?? '') };
    const requirement = ((op.operation.security ?? []) as Array<Record<string, string[]>>)[0];
    if (!requirement) return {};
    const scheme = Object.keys(requirement)[0];
    switch (scheme) {
      case 'bearer': {
        const token = op.key === 'DELETE /v1/tokens/current' ? (await service.api('POST', '/v1/tokens', { token: credentials.owner })).body.token : credentials.owner;
        return { authorization: `Bearer ${token}` };
      }
      case 'operatorToken':
        return { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
      case 'syncKey':
        return { 'x-sync-key': credentials.syncKey };
      case 'widgetKey':
        return { 'x-widget-key': credentials.widgetKey, origin: SHOP };
      default:
        throw new Error(`${op.key}: no credentials for the security scheme ${scheme}`);
    }
  }

  type Unsent = Omit<Sent, 'headers'> & { contentType?: string };

  /** What the requests for `op` are made of, from the document. */
  function partsOf(op: Operation) {
    const parameters = (op.operation.parameters ?? []) as Schema[];
    const pathParams = parameters.filter((p) => p.in === 'path');
    const queryParams = parameters.filter((p) => p.in === 'query');
    const content = op.operation.requestBody?.content as Record<string, { schema: Schema }> | undefined;
    const [contentType, media] = content ? Object.entries(content)[0]! : [undefined, undefined];

    const validPathValue = (p: Schema): fc.Arbitrary<string> => {
      const fromDocument = arbitraries.valid(p.schema).map(String);
      const real = p.name === 'id' ? known.ids : p.name === 'external_id' ? known.externalIds : [];
      return (real.length ? fc.oneof(fromDocument, fc.constantFrom(...real)) : fromDocument).filter(reachesThePath);
    };
    const invalidPathValue = (p: Schema): fc.Arbitrary<string> =>
      fc.oneof(arbitraries.invalid(p.schema).map(queryText), fc.constantFrom('0', 'not-an-id', '1 OR 1=1', 'a'.repeat(300), '%', '\u0000', '00000000-0000-0000-0000-00000000000g')).filter((v) => reachesThePath(v) && !arbitraries.validator(p.schema)(v));
    const validQuery = fc.record(Object.fromEntries(queryParams.map((p) => [p.name as string, arbitraries.valid(p.schema).map(queryText)])), { requiredKeys: [] });
    const bodyRequired = op.operation.requestBody?.required === true;
    // An optional body may also be left out.
    const validBody = media ? (bodyRequired ? arbitraries.valid(media.schema) : fc.option(arbitraries.valid(media.schema), { nil: undefined })) : fc.constant(undefined);

    const build = (kind: string, expect: Sent['expect'], pathValues: Record<string, string>, query: Record<string, string | string[] | undefined>, body: unknown) => {
      const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(pathValues[name]!));
      const search = new URLSearchParams();
      for (const [name, value] of Object.entries(query)) for (const v of [value ?? []].flat()) search.append(name, v);
      // The verify handshake's credential is in the query.
      if (op.key === 'GET /v1/whatsapp/webhook' && !('hub.verify_token' in query)) search.set('hub.verify_token', WHATSAPP_VERIFY_TOKEN);
      if (contentType === 'multipart/form-data') {
        const binary = Object.entries((arbitraries.deref(media!.schema).properties ?? {}) as Record<string, Schema>).filter(([, p]) => p.format === 'binary').map(([name]) => name);
        const multipart = body === undefined ? undefined : multipartText(body, binary);
        return { method: op.method, path, query: search.toString(), body: multipart, kind, expect, contentType: `multipart/form-data; boundary=${MULTIPART_BOUNDARY}` };
      }
      const text = body === undefined ? undefined : contentType === 'application/x-www-form-urlencoded' ? formText(body) : JSON.stringify(body);
      return { method: op.method, path, query: search.toString(), body: text, kind, expect, ...(contentType ? { contentType } : {}) };
    };
    const validPath = fc.record(Object.fromEntries(pathParams.map((p) => [p.name as string, validPathValue(p)])));
    return { pathParams, queryParams, media, bodyRequired, validPath, validQuery, validBody, invalidPathValue, build };
  }

  /** Requests for `op`: all valid by the document, or one part of it invalid. */
  function requests(op: Operation, mode: 'valid' | 'invalid'): fc.Arbitrary<Unsent> {
    const { pathParams, queryParams, media, bodyRequired, validPath, validQuery, validBody, invalidPathValue, build } = partsOf(op);
    if (mode === 'valid') return fc.tuple(validPath, validQuery, validBody).map(([p, q, b]) => build('valid', 'valid', p, q, b));

    const targets: fc.Arbitrary<ReturnType<typeof build>>[] = [];
    for (const p of pathParams) {
      targets.push(
        fc.tuple(validPath, validQuery, validBody, invalidPathValue(p)).map(([path, q, b, bad]) => build(`invalid path parameter ${p.name}`, p.name === 'id' ? 'invalid-id' : 'invalid', { ...path, [p.name]: bad }, q, b)),
      );
    }
    for (const p of queryParams) {
      const constrained = p.schema.enum || p.schema.pattern || p.schema.format || p.schema.type === 'integer';
      if (constrained) {
        // An empty value is not among them: the filters read `?status=` as no filter, which is harmless.
        const bad = fc
          .oneof(arbitraries.invalid(p.schema).map(queryText), fc.constantFrom('abc', '1.5', '-1', '0x10', 'yesterday'))
          .filter((v) => v !== '' && !arbitraries.validator(p.schema)(p.schema.type === 'integer' && /^-?\d+$/.test(v) ? Number(v) : v));
        targets.push(fc.tuple(validPath, validQuery, validBody, bad).map(([path, q, b, v]) => build(`invalid query parameter ${p.name}`, 'invalid', path, { ...q, [p.name]: v }, b)));
      }
      // A parameter given twice is not one value.
      targets.push(
        fc.tuple(validPath, validQuery, validBody, fc.array(arbitraries.valid(p.schema).map(queryText), { minLength: 2, maxLength: 2 })).map(([path, q, b, values]) => build(`query parameter ${p.name} twice`, 'invalid', path, { ...q, [p.name]: values }, b)),
      );
    }
    if (media && bodyRequired) targets.push(fc.tuple(validPath, validQuery).map(([path, q]) => build('no body', LENIENT_BODIES[op.key] ? 'tolerated' : 'invalid', path, q, undefined)));
    if (media) {
      targets.push(
        fc.tuple(validPath, validQuery, arbitraries.invalid(media.schema)).map(([path, q, b]) => build('invalid body', LENIENT_BODIES[op.key] ? 'tolerated' : 'invalid', path, q, b)),
      );
    } else if (op.method === 'POST' || op.method === 'PUT') {
      targets.push(fc.tuple(validPath, validQuery, fc.constantFrom(...ANY_VALUES.filter((v) => v !== undefined))).map(([path, q, b]) => build('a body the operation does not take', 'tolerated', path, q, b)));
    }
    // A parameter the operation does not know is ignored.
    targets.push(fc.tuple(validPath, validQuery, validBody, fc.constantFrom(...NASTY_STRINGS)).map(([path, q, b, v]) => build('an unknown query parameter', 'tolerated', path, { ...q, unknown_parameter: v }, b)));
    return fc.oneof(...targets);
  }

  /**
   * U+0000 and lone surrogates in every string the document lets them into (docs/reliability.md, "Outside text"): each
   * string of a few valid requests is replaced in turn, where the document still calls the request valid.
   */
  async function textSweep(op: Operation): Promise<Unsent[]> {
    const { queryParams, media, validPath, validQuery, build } = partsOf(op);
    const swept: Unsent[] = [];
    // Bases with a body that has every field, optional ones too, so that each gets its turn.
    const fullBody = media ? arbitraries.valid(withEveryField(arbitraries.deref(media.schema))) : fc.constant(undefined);
    const bases = fc.sample(fc.tuple(validPath, validQuery, fullBody), { numRuns: 5, seed: SEED + 2 });
    for (const [sampled, query, body] of bases) {
      // Into a real page or conversation (a new one each time: some things happen once per conversation), so that
      // the text goes all the way in.
      const path = async () =>
        Object.fromEntries(
          await Promise.all(
            Object.entries(sampled).map(async ([name, value]) => [name, name === 'external_id' ? known.externalIds[0]! : name === 'id' && op.path.startsWith('/v1/webchat/') ? await newConversation() : value]),
          ),
        );
      for (const text of ['before\u0000after', 'x\ud800y']) {
        const label = text.includes('\u0000') ? 'U+0000' : 'a lone surrogate';
        for (const [field, replaced] of stringsReplaced(body, text)) {
          if (media && arbitraries.validator(media.schema)(replaced)) swept.push(build(`${label} in ${field}`, 'valid', await path(), query, replaced));
        }
        for (const p of queryParams) {
          if (arbitraries.validator(p.schema)(text)) swept.push(build(`${label} in query parameter ${p.name}`, 'valid', await path(), { ...query, [p.name]: text }, body));
        }
      }
    }
    return swept;
  }

  /** Fixed requests every operation with a body gets: not JSON, not its media type, too large. */
  function edgeRequests(op: Operation): Sent[] {
    if (op.method !== 'POST' && op.method !== 'PUT') return [];
    const base = { method: op.method, path: op.path.replace(/\{id\}/g, randomUUID()).replace(/\{event\}/g, 'new_chat').replace(/\{external_id\}/g, 'edge-case'), query: '', headers: {} };
    const lenient = LENIENT_BODIES[op.key] && op.key.includes('whatsapp');
    // A form-only operation (a file upload) refuses any JSON body for its media type, before reading it; a form over
    // its size is refused with 413 in its own tests (test/knowledge/sources/knowledge-files.test.ts).
    const formOnly = Object.keys((op.operation.requestBody?.content ?? {}) as object).join() === 'multipart/form-data';
    if (formOnly) {
      return [
        { ...base, kind: 'JSON that does not parse', headers: { 'content-type': 'application/json' }, body: '{"unterminated": ', expect: { status: 415 } },
        { ...base, kind: 'a text/plain body', headers: { 'content-type': 'text/plain' }, body: 'hello', expect: { status: 415 } },
        { ...base, kind: 'a JSON body over the size limit', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x: 'a'.repeat(MAX_API_BODY_BYTES) }), expect: { status: 415 } },
      ];
    }
    return [
      { ...base, kind: 'JSON that does not parse', headers: { 'content-type': 'application/json' }, body: '{"unterminated": ', expect: lenient ? 'tolerated' : { status: 400 } },
      { ...base, kind: 'a text/plain body', headers: { 'content-type': 'text/plain' }, body: 'hello', expect: lenient ? 'tolerated' : { status: 415 } },
      // Deeper than JSON.stringify goes, so written out: 100 000 nested arrays in a field.
      { ...base, kind: 'nesting 100 000 deep', headers: { 'content-type': 'application/json' }, body: `{"deep":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, expect: 'tolerated' },
      { ...base, kind: 'a body over the size limit', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x: 'a'.repeat(lenient ? 3 * 1024 * 1024 : MAX_API_BODY_BYTES) }), expect: { status: 413 } },
    ];
  }

  async function send(op: Operation, sent: Sent): Promise<Answer> {
    const controller = new AbortController();
    const res = await fetch(`${service.url}${sent.path}${sent.query ? `?${sent.query}` : ''}`, { method: sent.method, headers: sent.headers, body: sent.body, signal: controller.signal });
    const contentType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    // A live event stream stays open: its status and type are what can be checked.
    if (contentType === 'text/event-stream') {
      controller.abort();
      return { status: res.status, contentType, text: '', json: undefined };
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = contentType === 'application/json' && text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (op.key === 'POST /v1/keys/sync' && res.status === 201) credentials.syncKey = (json as { key: string }).key;
    return { status: res.status, contentType, text, json };
  }

  /** Every way the answer departs from the document. */
  function problemsOf(op: Operation, sent: Sent, answer: Answer): string[] {
    const problems: string[] = [];
    const { status } = answer;
    if (status >= 500) return [`${status} ${answer.text.slice(0, 200)}`];
    const documented = (op.operation.responses as Record<string, Schema>)[String(status)];
    if (!documented) problems.push(`${status} is not documented (${answer.text.slice(0, 120)})`);
    else if (documented.content) {
      const media = (documented.content as Record<string, Schema>)[answer.contentType];
      if (!media) problems.push(`${status} came as ${answer.contentType || 'no content type'}, documented as ${Object.keys(documented.content).join(', ')}`);
      else if (media.schema && answer.contentType === 'application/json') {
        const validate = arbitraries.validator(media.schema);
        if (!validate(answer.json)) problems.push(`${status} body does not match its schema: ${arbitraries.validator(media.schema).errors?.map((e) => `${e.instancePath} ${e.message}`).join('; ')} in ${answer.text.slice(0, 200)}`);
      }
    }
    if (status >= 400) {
      const error = (answer.json as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
      if (typeof error?.code !== 'string' || typeof error.message !== 'string') problems.push(`${status} without the error body: ${answer.text.slice(0, 120)}`);
    }
    const expected = sent.expect;
    if (typeof expected === 'object') {
      if (status !== expected.status) problems.push(`${status} where ${expected.status} was due`);
    } else if (expected === 'valid') {
      if (status === 413 || status === 415) problems.push(`${status} for a request the document calls valid`);
      if (status === 400) {
        const semantic = SEMANTIC_CHECKS[op.key];
        const fields = ((answer.json as { error?: { details?: Array<{ field?: string }> } })?.error?.details ?? []).map((d) => d.field ?? '');
        if (!semantic || fields.length === 0 || !fields.every((f) => semantic.fields.test(f))) problems.push(`400 for a request the document calls valid: ${answer.text.slice(0, 200)}`);
      }
    } else if (expected === 'invalid') {
      if (status < 400) problems.push(`${status} for a request the document calls invalid`);
    } else if (expected === 'invalid-id') {
      if (status !== 404) problems.push(`${status} where 404 was due for an {id} that is not one`);
    }
    return problems;
  }

  // The operations are read from the document once the service runs; this list is the same document, built here.
  const operations = () => operationsOf(doc);

  it('describes at least the operations this suite knows to exercise', () => {
    expect(operations().length).toBeGreaterThanOrEqual(54);
  });

  it('every operation answers valid, invalid and malformed requests as documented', { timeout: 120_000 }, async () => {
    const report: Record<string, string[]> = {};
    const runs = get().kind === 'postgres' ? RUNS_ON_POSTGRES : RUNS;
    for (const op of operations()) {
      await ensureFixtures();
      const samples = [
        ...fc.sample(requests(op, 'valid'), { numRuns: runs, seed: SEED }),
        ...fc.sample(requests(op, 'invalid'), { numRuns: runs, seed: SEED + 1 }),
        ...(await textSweep(op)),
      ];
      const all: Sent[] = [];
      for (const sample of samples) {
        const { contentType, ...rest } = sample;
        const headers = { ...(contentType && rest.body !== undefined ? { 'content-type': contentType } : {}), ...(await authorise(op, rest.body)) };
        all.push({ ...rest, headers });
      }
      for (const edge of edgeRequests(op)) all.push({ ...edge, headers: { ...edge.headers, ...(await authorise(op, edge.body)) } });
      const seen = new Map<string, string>();
      for (const sent of all) {
        const answer = await send(op, sent);
        exercised.set(op.key, (exercised.get(op.key) ?? 0) + 1);
        for (const problem of problemsOf(op, sent, answer)) {
          // One example per kind of problem.
          const kind = `${sent.kind}: ${problem.replace(/\d{3} body does not match.*/, (m) => m.slice(0, 60)).slice(0, 80)}`;
          if (!seen.has(kind)) seen.set(kind, `${problem}\n      sent: ${describeSent(sent)}`);
        }
      }
      if (op.key === 'PUT /v1/webchat') await service.api('PUT', '/v1/webchat', { token: credentials.owner, body: { allowed_origins: [SHOP], enabled: true } });
      if (seen.size) report[op.key] = [...seen.values()];
    }
    expect(report).toEqual({});
  });

  it('a method the document does not give a path is answered 405 with Allow naming the ones it does', async () => {
    const problems: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
      const documented = Object.keys(item).map((m) => m.toUpperCase());
      const op = operationsOf({ paths: { [path]: item } })[0]!;
      const { validPath, build } = partsOf(op);
      const [pathValues] = fc.sample(validPath, { numRuns: 1, seed: SEED });
      for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'].filter((m) => !documented.includes(m))) {
        const sent = { ...build(`undocumented method ${method}`, { status: 405 }, pathValues!, {}, undefined), method, body: method === 'GET' || method === 'DELETE' ? undefined : '{}' };
        const headers = { ...(sent.body ? { 'content-type': 'application/json' } : {}), ...(await authorise(op, sent.body)) };
        const res = await fetch(`${service.url}${sent.path}`, { method, headers, body: sent.body });
        const allow = (res.headers.get('allow') ?? '').split(',').map((m) => m.trim().toUpperCase()).filter((m) => m && m !== 'HEAD' && m !== 'OPTIONS');
        if (res.status !== 405) problems.push(`${method} ${sent.path}: ${res.status}, not 405`);
        else if ([...allow].sort().join() !== [...documented].sort().join()) problems.push(`${method} ${sent.path}: Allow ${allow.join(', ')}, documented ${documented.join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('exercised every operation of the document', () => {
    const missing = operations().filter((op) => !exercised.get(op.key));
    expect(missing.map((op) => op.key)).toEqual([]);
  });
});
