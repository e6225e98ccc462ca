/**
 * The integrator's parameter schemas (spec §2.3: "a JSON Schema object … describing the arguments"), compiled so that
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
import { isObject } from '../json-value.ts';

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
 * (spec §2.1), and the bound keeps a pattern's running time small even when the schema has no `maxLength`.
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

// ── Patterns ─────────────────────────────────────────────────────────────────────────────────────────────────────

interface GroupFrame {
  /** Something inside can match a varying number of times (`*`, `+`, `?`, `{n,m}` with m > n). */
  variable: boolean;
  /** Something inside has alternatives (`|`). */
  alternation: boolean;
}

type Quantified = { kind: 'atom' } | ({ kind: 'group' } & GroupFrame) | null;

/** `*`, `+`, `?`, `{n}`, `{n,}` or `{n,m}` at `i`, with its bounds and where it ends; null if there is none. */
function readQuantifier(pattern: string, i: number): { min: number; max: number; end: number } | null {
  const c = pattern[i];
  if (c === '*') return { min: 0, max: Infinity, end: i + 1 };
  if (c === '+') return { min: 1, max: Infinity, end: i + 1 };
  if (c === '?') return { min: 0, max: 1, end: i + 1 };
  if (c !== '{') return null;
  const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 40));
  if (m === null) return null;
  const min = Number(m[1]);
  const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
  return { min, max, end: i + m[0].length };
}

/** The index just past the character class that opens at `i` (JS: a `]` right after `[` or `[^` closes it). */
function endOfClass(pattern: string, i: number): number {
  let j = i + 1;
  while (j < pattern.length) {
    if (pattern[j] === '\\') j += 2;
    else if (pattern[j] === ']') return j + 1;
    else j += 1;
  }
  return pattern.length;
}

/** The index just past a group's opening: `(`, `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`, `(?i:`. */
function endOfGroupOpening(pattern: string, i: number): number {
  if (pattern[i + 1] !== '?') return i + 1;
  const kind = pattern[i + 2];
  if (kind === ':' || kind === '=' || kind === '!') return i + 3;
  if (kind === '<') {
    if (pattern[i + 3] === '=' || pattern[i + 3] === '!') return i + 4;
    const close = pattern.indexOf('>', i + 3);
    return close < 0 ? pattern.length : close + 1;
  }
  const colon = pattern.indexOf(':', i + 2); // modifiers, (?i:…)
  return colon < 0 ? pattern.length : colon + 1;
}

/**
 * What the ReDoS guard finds in a pattern: whether it is refused, and what its worst-case matching time grows with.
 * `unbounded` counts the quantifiers without an upper bound (`*`, `+`, `{n,}`), plus one when the pattern is not
 * anchored with a leading `^` (the engine then tries every start position); `widths` are the number of choices of each
 * bounded varying quantifier (`{1,3}`: 3, `?`: 2).
 */
interface PatternAnalysis {
  unsafe: string | null;
  unbounded: number;
  widths: number[];
}

function analysePattern(pattern: string): PatternAnalysis {
  const stack: GroupFrame[] = [{ variable: false, alternation: false }];
  const widths: number[] = [];
  let unbounded = 0;
  let last: Quantified = null;
  let i = 0;
  const refuse = (unsafe: string): PatternAnalysis => ({ unsafe, unbounded, widths });
  while (i < pattern.length) {
    const c = pattern[i]!;
    const top = stack.at(-1)!;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next !== undefined && next >= '1' && next <= '9') {
        return refuse('uses a backreference (\\1 …), whose matching time can explode');
      }
      if (next === 'k' && pattern[i + 2] === '<') return refuse('uses a named backreference (\\k<…>), whose matching time can explode');
      if ((next === 'p' || next === 'P' || next === 'u') && pattern[i + 2] === '{') {
        const close = pattern.indexOf('}', i + 3);
        i = close < 0 ? pattern.length : close + 1;
      } else {
        i += 2;
      }
      last = { kind: 'atom' };
    } else if (c === '[') {
      i = endOfClass(pattern, i);
      last = { kind: 'atom' };
    } else if (c === '(') {
      stack.push({ variable: false, alternation: false });
      i = endOfGroupOpening(pattern, i);
      last = null;
    } else if (c === ')') {
      // An unbalanced `)` is a syntax error that `new RegExp` reports; here it just closes nothing.
      const frame = stack.length > 1 ? stack.pop()! : { variable: false, alternation: false };
      const parent = stack.at(-1)!;
      parent.variable ||= frame.variable;
      parent.alternation ||= frame.alternation;
      last = { kind: 'group', ...frame };
      i += 1;
    } else if (c === '|') {
      top.alternation = true;
      last = null;
      i += 1;
    } else {
      const quantifier = readQuantifier(pattern, i);
      if (quantifier === null) {
        last = { kind: 'atom' }; // a literal, `.`, `^`, `$`, or a `{` that is not a quantifier
        i += 1;
        continue;
      }
      if (last !== null) {
        if (quantifier.max > 1 && last.kind === 'group' && (last.variable || last.alternation)) {
          return refuse(
            last.variable
              ? 'repeats a group that itself contains a repetition, as in (a+)+, whose matching time can explode; ' +
                  'repeat a single character class instead, as in [a-z0-9.]+'
              : 'repeats a group with alternatives, as in (a|b)+, whose matching time can explode; ' +
                  'use a character class such as [ab]+ instead',
          );
        }
        if (quantifier.max > quantifier.min) {
          top.variable = true;
          if (quantifier.max === Infinity) unbounded += 1;
          else widths.push(quantifier.max - quantifier.min + 1);
        }
      }
      i = quantifier.end;
      if (pattern[i] === '?') i += 1; // lazy
      last = null;
    }
  }
  // Conservative: any alternation at all may hide an unanchored branch (`^a|b+`).
  const anchored = pattern.startsWith('^') && !stack[0]!.alternation;
  return { unsafe: null, unbounded: unbounded + (anchored ? 0 : 1), widths };
}

/**
 * Why a regular expression could take exponential time on a backtracking engine like V8's, or null when it passes.
 * Conservative on purpose (a false alarm drops one tool with a problem that says how to rewrite the pattern; a miss
 * could stall the process for every workspace):
 *
 * - a backreference (`\1`, `\k<name>`) is refused: matching with one is NP-hard;
 * - a group repeated more than once (`*`, `+`, `{n,}`, `{n,m}` with m > 1) may contain neither a varying quantifier
 *   (`(a+)+`, `(a?){20}`, `(\d{1,3}\.)+`) nor alternatives (`(a|a)*`, `(cat|dog)+`): together these are star height
 *   above one and overlapping alternation, the two shapes behind exponential backtracking;
 * - a group that is merely optional (`(\+31)?`) or repeated a fixed number of times over fixed content (`(\d{3}-){2}`)
 *   is fine, as is any quantifier on a single character, class or escape.
 *
 * What remains is polynomial (`\d*\d*\d*` is cubic: 2.8 s on 2000 digits): that is bounded by
 * {@link patternInputLimit} instead of refused. The pattern's syntax is left to `new RegExp`.
 */
export function unsafePatternReason(pattern: string): string | null {
  return analysePattern(pattern).unsafe;
}

/**
 * Worst-case backtracking steps one pattern may take on one value: 10 million, some 20 ms in V8. A pattern that
 * passes {@link unsafePatternReason} has star height at most one, so its steps on n characters are at most about
 * (n + 1) to the power of its unbounded quantifiers (plus one if unanchored), times the widths of its bounded ones.
 */
export const PATTERN_STEP_BUDGET = 10_000_000;

/**
 * The longest value (in UTF-16 units, at most {@link MAX_TOOL_ARG_STRING_CHARS}) that `pattern` is run on, so its
 * worst case stays within {@link PATTERN_STEP_BUDGET}. Ordinary patterns (`^[A-Z0-9]+$`, `\d+$`) get the full
 * 2000; `^[^@\s]+@[^@\s]+\.[^@\s]+$` gets 214; `^\d*\d*\d*\d*$` gets 55. A longer value is refused with a
 * sentence instead of matched.
 */
export function patternInputLimit(pattern: string): number {
  const { unbounded, widths } = analysePattern(pattern);
  const budget = Math.log(PATTERN_STEP_BUDGET);
  const logSteps = (n: number): number => unbounded * Math.log(n + 1) + widths.reduce((sum, w) => sum + Math.log(Math.min(n + 1, w)), 0);
  if (logSteps(MAX_TOOL_ARG_STRING_CHARS) <= budget) return MAX_TOOL_ARG_STRING_CHARS;
  let low = 0;
  let high = MAX_TOOL_ARG_STRING_CHARS;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (logSteps(mid) <= budget) low = mid;
    else high = mid - 1;
  }
  return low;
}

class UnsafeSchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeSchemaError';
  }
}

/** Thrown out of a validator when a value is longer than its pattern may be run on; checkArgs turns it into a sentence. */
class PatternInputTooLong extends Error {
  constructor(pattern: string, limit: number) {
    // Quoted as Ajv quotes patterns in its own messages, which the AI reads next to this one.
    super(`a value checked against the pattern "${pattern}" is longer than the ${limit} characters that pattern is run on`);
    this.name = 'PatternInputTooLong';
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
    const limit = patternInputLimit(pattern);
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
  const message = (err instanceof Error ? err.message : String(err))
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
