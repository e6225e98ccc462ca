/**
 * The integrator's parameter schemas (protocol §2.3: "a JSON Schema object … describing the arguments"), compiled so that
 * they can be run safely inside the service. The schema comes from someone else's server and the arguments it checks
 * come from the phone AI, that is from what a caller said; neither may be able to stall or steer the process. So:
 *
 * - Size: at most {@link MAX_TOOL_SCHEMA_BYTES} serialised and {@link MAX_TOOL_SCHEMA_DEPTH} levels deep.
 * - Nothing is ever loaded: Ajv gets no `loadSchema` and only `compile` (never `compileAsync`) is used, and a `$ref`
 *   must point inside the schema itself (`#` or `#/…`); a remote one drops the tool. `$id` and `$schema` are stripped,
 *   so a schema can neither move its own base URI nor pick a meta-schema, nor register itself in the shared Ajv; so is
 *   `$async`, which would turn a verdict into a Promise.
 * - Unknown keywords are tolerated (`strict: false`, an integrator may write OpenAI's `strict` or its own `x-…`
 *   annotations); known formats are checked with ajv-formats, unknown ones are ignored.
 * - ReDoS: every `pattern` and `patternProperties` key must pass {@link unsafePatternReason}, a conservative
 *   star-height check, both while the schema is walked (for a readable problem) and again inside Ajv's own RegExp
 *   engine (`code.regExp`), so a pattern Ajv reaches by a path the walk did not foresee is checked too. Polynomial
 *   patterns that pass it run only on values within {@link patternInputLimit}; and the arguments are bounded before
 *   anything runs: {@link MAX_TOOL_ARGS_BYTES} in all and {@link MAX_TOOL_ARG_STRING_CHARS} per string or key,
 *   whether or not the schema says `maxLength`.
 * - `$data` references, defaults and coercion are off: checking never changes the arguments that are sent.
 *
 * Ajv keeps every schema and validator it ever compiled in the instance's code scope (removeSchema does not free it),
 * so a long-lived instance would grow with every manifest fetch. One compiler holds one Ajv at a time and replaces it
 * after {@link AJV_RENEW_AFTER_COMPILES} compilations; validators already made keep working, and the old instance is
 * freed with the last of them.
 */
import { Ajv } from 'ajv';
import type { CodeOptions, ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { BotlinkError, errorText } from '../errors.ts';
import { isObject } from '../json-value.ts';
import { patternInputLimit, unsafePatternReason } from './pattern-safety.ts';

/** Largest parameters schema, as UTF-8 JSON: 16 KiB. Ours, the spec sets none; real tool schemas are well under 2 KB. */
export const MAX_TOOL_SCHEMA_BYTES = 16 * 1024;
/**
 * Deepest nesting of JSON objects and arrays in a parameters schema, the schema itself being level 1: 10 leaves room
 * for an object parameter with its own object properties (`properties.order.properties.lines.items.…`).
 */
export const MAX_TOOL_SCHEMA_DEPTH = 10;
/** Largest arguments object the AI may send, as UTF-8 JSON: 8 KiB (also bounds Ajv's work on `uniqueItems`). */
export const MAX_TOOL_ARGS_BYTES = 8 * 1024;
/** Deepest nesting of the arguments. */
export const MAX_TOOL_ARGS_DEPTH = 16;
/**
 * Longest string (or object key) in the arguments, in UTF-16 units: what a caller said is at most 2000 characters
 * (protocol §2.1), and the bound keeps a pattern's running time small even when the schema has no `maxLength`.
 */
export const MAX_TOOL_ARG_STRING_CHARS = 2_000;
/** Schemas one Ajv instance compiles before the compiler starts a fresh one (see the module comment). */
export const AJV_RENEW_AFTER_COMPILES = 256;

/** Readable Ajv errors handed back for one call, at most this many (the AI needs the first few to fix its call). */
const MAX_REPORTED_ARG_ERRORS = 5;

/** Why a schema was refused: the dotted path inside `parameters` and a sentence for the integrator. */
export interface SchemaProblem {
  field: string;
  message: string;
}

export type ArgsVerdict = { ok: true } | { ok: false; errors: string[] };

/** A compiled tool schema: the cleaned schema (what the AI is shown) and the check for the AI's arguments. */
export interface CompiledToolSchema {
  /** The schema with `$id` and `$schema` removed. */
  parameters: Record<string, unknown>;
  check(args: unknown): ArgsVerdict;
}

export interface ToolSchemaCompiler {
  compile(parameters: Record<string, unknown>): { ok: true; compiled: CompiledToolSchema } | { ok: false; problem: SchemaProblem };
}

// ── Patterns (their safety analysis: ./pattern-safety.ts) ─────────────────────────────────────────────────────

class UnsafeSchemaError extends BotlinkError {
  constructor(message: string) {
    super('unsafe_schema', message);
  }
}

/** Thrown out of a validator when a value is longer than its pattern may be run on; checkArgs turns it into a sentence. */
class PatternInputTooLong extends BotlinkError {
  constructor(pattern: string, limit: number) {
    // Quoted as Ajv quotes patterns in its own messages, which the AI reads next to this one.
    super('pattern_input_too_long', `a value checked against the pattern "${pattern}" is longer than the ${limit} characters that pattern is run on`);
  }
}

/**
 * Ajv's RegExp engine: the exponential shapes are refused once more at compile time, for every pattern Ajv actually
 * compiles (whatever path led there), and each pattern runs only on values within its {@link patternInputLimit}.
 * Ajv calls nothing but `test` on what this returns; `toString` is the key under which Ajv shares equal patterns.
 */
const guardedRegExp: NonNullable<CodeOptions['regExp']> = Object.assign(
  (pattern: string, flags: string) => {
    const reason = unsafePatternReason(pattern);
    if (reason !== null) throw new UnsafeSchemaError(`the pattern ${JSON.stringify(pattern)} ${reason}`);
    const regExp = new RegExp(pattern, flags);
    const limit = patternInputLimit(pattern, MAX_TOOL_ARG_STRING_CHARS);
    return {
      test(value: string): boolean {
        if (value.length > limit) throw new PatternInputTooLong(pattern, limit);
        return regExp.test(value);
      },
      toString: () => `${regExp.toString()}{${limit}}`,
    };
  },
  // Only read when Ajv writes standalone code, which this module never does.
  { code: 'new RegExp' },
);

// ── Walking a schema ─────────────────────────────────────────────────────────────────────────────────────────────

/** Keywords whose value maps names to schemas; the names are data, never keywords. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas', 'dependencies']);
/** Keywords whose value is data (copied as it is: a `$ref` inside an enum is a value, not a reference). */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);
/**
 * Dropped wherever they appear as keywords: `$id` and `$schema` (see the module comment), and `$async`, which would
 * make Ajv return a Promise where a verdict is expected.
 */
const STRIPPED_KEYWORDS = new Set(['$id', '$schema', '$async']);

function path(base: string, key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

/** Nesting depth of a JSON value (a scalar is 0), counting no further than `limit + 1`. */
function depthOf(value: unknown, limit: number): number {
  if (typeof value !== 'object' || value === null) return 0;
  if (limit < 0) return 1;
  let deepest = 0;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    deepest = Math.max(deepest, depthOf(child, limit - 1));
    if (deepest > limit) break;
  }
  return deepest + 1;
}

function checkPattern(pattern: string, field: string): SchemaProblem | null {
  try {
    new RegExp(pattern, 'u');
  } catch {
    return { field, message: `${JSON.stringify(pattern)} is not a valid regular expression` };
  }
  const reason = unsafePatternReason(pattern);
  return reason === null ? null : { field, message: `the pattern ${JSON.stringify(pattern)} ${reason}` };
}

type Cleaned = { ok: true; value: unknown } | { ok: false; problem: SchemaProblem };

/**
 * A copy of the schema (or of any value in a schema position) without `$id` and `$schema`, with every `$ref`,
 * `pattern` and `patternProperties` key checked. Keywords this walk does not know are walked as schemas too, so a
 * pattern tucked under an unknown keyword and reached by a `#/…` reference is still checked.
 */
function clean(node: unknown, field: string): Cleaned {
  if (Array.isArray(node)) {
    const out: unknown[] = [];
    for (const [index, item] of node.entries()) {
      const cleaned = clean(item, `${field}[${index}]`);
      if (!cleaned.ok) return cleaned;
      out.push(cleaned.value);
    }
    return { ok: true, value: out };
  }
  if (!isObject(node)) return { ok: true, value: node };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    const at = path(field, key);
    if (STRIPPED_KEYWORDS.has(key)) continue;
    if (DATA_KEYWORDS.has(key)) {
      out[key] = value;
      continue;
    }
    if (key === '$ref') {
      if (typeof value !== 'string' || !(value === '#' || value.startsWith('#/'))) {
        return {
          ok: false,
          problem: { field: at, message: `must point inside this schema ("#/…"); ${JSON.stringify(value)} is not loaded` },
        };
      }
      out[key] = value;
      continue;
    }
    if (key === 'pattern' && typeof value === 'string') {
      const problem = checkPattern(value, at);
      if (problem) return { ok: false, problem };
      out[key] = value;
      continue;
    }
    if (SCHEMA_MAPS.has(key) && isObject(value)) {
      const map: Record<string, unknown> = {};
      for (const [name, schema] of Object.entries(value)) {
        if (key === 'patternProperties') {
          const problem = checkPattern(name, path(at, name));
          if (problem) return { ok: false, problem };
        }
        // `dependencies` may map a name to a list of names: data, copied as it is.
        const cleaned = key === 'dependencies' && Array.isArray(schema) ? ({ ok: true, value: schema } as const) : clean(schema, path(at, name));
        if (!cleaned.ok) return cleaned;
        // A parameter may be named `__proto__`: define it, as JSON.parse did, rather than assign (which sets the prototype).
        Object.defineProperty(map, name, { value: cleaned.value, writable: true, enumerable: true, configurable: true });
      }
      out[key] = map;
      continue;
    }
    const cleaned = clean(value, at);
    if (!cleaned.ok) return cleaned;
    out[key] = cleaned.value;
  }
  return { ok: true, value: out };
}

/**
 * The schema made safe to compile, or the first reason it is not: too deep, too large, a remote `$ref` or an unsafe
 * pattern. `field` paths start at 'parameters'.
 */
export function prepareToolSchema(parameters: Record<string, unknown>): { ok: true; schema: Record<string, unknown> } | { ok: false; problem: SchemaProblem } {
  if (depthOf(parameters, MAX_TOOL_SCHEMA_DEPTH) > MAX_TOOL_SCHEMA_DEPTH) {
    return { ok: false, problem: { field: 'parameters', message: `is nested deeper than ${MAX_TOOL_SCHEMA_DEPTH} levels` } };
  }
  const bytes = Buffer.byteLength(JSON.stringify(parameters), 'utf8');
  if (bytes > MAX_TOOL_SCHEMA_BYTES) {
    return { ok: false, problem: { field: 'parameters', message: `is ${bytes} bytes of JSON; at most ${MAX_TOOL_SCHEMA_BYTES} are accepted` } };
  }
  const cleaned = clean(parameters, 'parameters');
  if (!cleaned.ok) return cleaned;
  return { ok: true, schema: cleaned.value as Record<string, unknown> };
}

// ── Arguments ────────────────────────────────────────────────────────────────────────────────────────────────────

/**
 * The first string or key longer than the limit, or nesting beyond it, as a sentence; null when the arguments are
 * within bounds. `at` is the dotted name of `value` ('' for the arguments themselves).
 */
function argsOutOfBounds(value: unknown, at: string, depth: number): string | null {
  if (typeof value === 'string') {
    return value.length > MAX_TOOL_ARG_STRING_CHARS ? `${at} is longer than ${MAX_TOOL_ARG_STRING_CHARS} characters` : null;
  }
  if (typeof value !== 'object' || value === null) return null;
  if (depth > MAX_TOOL_ARGS_DEPTH) return `the arguments are nested deeper than ${MAX_TOOL_ARGS_DEPTH} levels`;
  if (Array.isArray(value)) {
    for (const [index, child] of value.entries()) {
      const problem = argsOutOfBounds(child, `${at}[${index}]`, depth + 1);
      if (problem) return problem;
    }
    return null;
  }
  for (const [key, child] of Object.entries(value)) {
    if (key.length > MAX_TOOL_ARG_STRING_CHARS) return `a parameter name is longer than ${MAX_TOOL_ARG_STRING_CHARS} characters`;
    const problem = argsOutOfBounds(child, at === '' ? key : path(at, key), depth + 1);
    if (problem) return problem;
  }
  return null;
}

/** An Ajv instance path ('/order/lines/0') as the dotted name the AI used ('order.lines[0]'). */
function argName(instancePath: string, extra?: unknown): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (typeof extra === 'string') parts.push(extra);
  let name = '';
  for (const part of parts) name = /^\d+$/.test(part) && name !== '' ? `${name}[${part}]` : name === '' ? part : `${name}.${part}`;
  return name;
}

/** One Ajv error as a sentence the AI can act on: 'postcode must match pattern "^\d{4}[A-Z]{2}$"'. */
function describeArgError(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${argName(error.instancePath, params.missingProperty)} is required`;
    case 'additionalProperties':
      return `${argName(error.instancePath, params.additionalProperty)} is not a parameter of this tool`;
    case 'enum':
      return `${argName(error.instancePath) || 'the arguments'} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${argName(error.instancePath) || 'the arguments'} ${error.message ?? `fail the ${error.keyword} rule`}`;
  }
}

/**
 * Check the AI's arguments: a JSON object within the bounds above, then the tool's schema. The errors are sentences
 * meant for the AI, which reads them to correct its call.
 */
function checkArgs(validate: ValidateFunction, args: unknown): ArgsVerdict {
  if (!isObject(args)) return { ok: false, errors: ['the arguments must be a JSON object'] };
  let json: string | undefined;
  try {
    json = JSON.stringify(args);
  } catch {
    json = undefined;
  }
  if (json === undefined) return { ok: false, errors: ['the arguments must be plain JSON'] };
  if (Buffer.byteLength(json, 'utf8') > MAX_TOOL_ARGS_BYTES) {
    return { ok: false, errors: [`the arguments are longer than ${MAX_TOOL_ARGS_BYTES} bytes of JSON`] };
  }
  const bound = argsOutOfBounds(args, '', 1);
  if (bound !== null) return { ok: false, errors: [bound] };
  try {
    if (validate(args)) return { ok: true };
  } catch (err) {
    if (err instanceof PatternInputTooLong) return { ok: false, errors: [err.message] };
    throw err;
  }
  const sentences = [...new Set((validate.errors ?? []).map(describeArgError))];
  const shown = sentences.slice(0, MAX_REPORTED_ARG_ERRORS);
  if (sentences.length > shown.length) shown.push(`and ${sentences.length - shown.length} more`);
  return { ok: false, errors: shown.length > 0 ? shown : ['the arguments do not match the parameters'] };
}

// ── The compiler ─────────────────────────────────────────────────────────────────────────────────────────────────

// ajv-formats is CommonJS; under Node's ESM interop its default import is module.exports, whose `default` is the plugin.
const addFormats = addFormatsModule.default;

function newAjv(): Ajv {
  const ajv = new Ajv({
    strict: false, // unknown keywords and formats are tolerated, never an error
    allErrors: true, // every mistake in one answer, so the AI can fix its call in one go
    logger: false, // an integrator's odd schema must not write to our logs
    addUsedSchema: false, // nothing an integrator compiles is registered in the shared instance
    validateSchema: true, // a schema that breaks the draft-07 meta-schema is refused with Ajv's reason
    useDefaults: false,
    coerceTypes: false,
    // Arguments are the AI's JSON: `constructor` or `toString` are names like any other, not Object.prototype's.
    ownProperties: true,
    removeAdditional: false,
    $data: false,
    code: { regExp: guardedRegExp },
  });
  addFormats(ajv);
  return ajv;
}

/** Ajv's compile error as a problem, its paths named from 'parameters' ("data/properties" → "parameters.properties"). */
function compileProblem(err: unknown): SchemaProblem {
  const message = errorText(err)
    .replace(/^schema is invalid: /, 'breaks JSON Schema: ')
    .replace(/\bdata((?:\/[^\s,]*)?)/g, (_all, rest: string) => `parameters${rest.replaceAll('/', '.')}`);
  return { field: 'parameters', message: message.startsWith('breaks') ? message : `cannot be compiled: ${message}` };
}

/** One compiler per tools client: one Ajv at a time, renewed as described in the module comment. */
export function createToolSchemaCompiler(): ToolSchemaCompiler {
  let ajv = newAjv();
  let compiled = 0;
  return {
    compile(parameters) {
      const prepared = prepareToolSchema(parameters);
      if (!prepared.ok) return prepared;
      if (compiled >= AJV_RENEW_AFTER_COMPILES) {
        ajv = newAjv();
        compiled = 0;
      }
      compiled += 1;
      let validate: ValidateFunction;
      try {
        validate = ajv.compile(prepared.schema);
      } catch (err) {
        return { ok: false, problem: compileProblem(err) };
      } finally {
        // The compiled function no longer needs the instance's cache entry.
        ajv.removeSchema(prepared.schema);
      }
      if ((validate as { $async?: unknown }).$async === true) {
        return { ok: false, problem: { field: 'parameters', message: 'must not be an asynchronous schema ($async)' } };
      }
      return { ok: true, compiled: { parameters: prepared.schema, check: (args) => checkArgs(validate, args) } };
    },
  };
}
