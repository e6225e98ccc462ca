import { describe, expect, it } from 'vitest';
import {
  AJV_RENEW_AFTER_COMPILES,
  MAX_TOOL_ARG_STRING_CHARS,
  MAX_TOOL_ARGS_BYTES,
  MAX_TOOL_SCHEMA_BYTES,
  MAX_TOOL_SCHEMA_DEPTH,
  createToolSchemaCompiler,
} from '../../src/botlink/tool-schema.ts';
import { PATTERN_STEP_BUDGET, patternInputLimit, unsafePatternReason } from '../../src/botlink/pattern-safety.ts';
import type { CompiledToolSchema } from '../../src/botlink/tool-schema.ts';
import { readToolManifest } from '../../src/botlink/tools-manifest.ts';
import { MAX_TOOL_DESCRIPTION_CHARS, MAX_TOOL_NAME_CHARS, MAX_TOOLS } from '../../src/limits.ts';

const compiler = createToolSchemaCompiler();
const fetchedAt = 1_700_000_000_000;

const tool = (name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  name,
  description: `Looks up ${name}.`,
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  ...overrides,
});
const withParameters = (parameters: unknown) => tool('bad', { parameters });
const objectWith = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });

function read(body: unknown, status = 200, truncated = false) {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return readToolManifest({ status, body: bytes, truncated }, compiler, fetchedAt);
}

function compiled(parameters: Record<string, unknown>): CompiledToolSchema {
  const result = compiler.compile(parameters);
  if (!result.ok) throw new Error(`expected the schema to compile: ${result.problem.field} ${result.problem.message}`);
  return result.compiled;
}

/** A schema nested `levels` deep counting JSON objects and arrays, the schema itself being level 1. */
function nested(levels: number): Record<string, unknown> {
  // Each object property adds two levels (properties → a); an enum array adds one where the count is even.
  let schema: Record<string, unknown> = levels % 2 === 0 ? { type: 'string', enum: ['x'] } : { type: 'string' };
  for (let depth = levels % 2 === 0 ? 2 : 1; depth + 2 <= levels; depth += 2) schema = { type: 'object', properties: { a: schema } };
  return schema;
}

describe('a tool manifest (protocol §2.3)', () => {
  it('reads a good manifest: every tool in order, status ok, no problems', () => {
    const { manifest, checks } = read({ tools: [tool('order_status'), tool('product-search'), tool('A1')] });
    expect(manifest).toMatchObject({ status: 'ok', fetchedAt, problems: [] });
    expect(manifest.error).toBeUndefined();
    expect(manifest.tools.map((t) => t.name)).toEqual(['order_status', 'product-search', 'A1']);
    expect(manifest.tools[0]).toEqual(tool('order_status'));
    expect([...checks.keys()]).toEqual(['order_status', 'product-search', 'A1']);
  });

  it('an empty tools array is a readable manifest with no tools', () => {
    expect(read({ tools: [] }).manifest).toMatchObject({ status: 'ok', tools: [], problems: [] });
  });

  it(`keeps the first ${MAX_TOOLS} of 9 tools, with a problem for the ninth`, () => {
    const tools = Array.from({ length: 9 }, (_, i) => tool(`tool_${i + 1}`));
    const { manifest } = read({ tools });
    expect(manifest.tools.map((t) => t.name)).toEqual(tools.slice(0, MAX_TOOLS).map((t) => t.name));
    expect(manifest.problems).toEqual([
      { index: 8, tool: 'tool_9', field: 'tools', message: expect.stringContaining(`first ${MAX_TOOLS} tools`) },
    ]);
  });

  it('entries beyond the eighth are dropped even when earlier ones are bad (the first eight listed count)', () => {
    const tools = [tool('bad name'), ...Array.from({ length: 9 }, (_, i) => tool(`t${i}`))];
    const { manifest } = read({ tools });
    expect(manifest.tools).toHaveLength(MAX_TOOLS - 1);
    expect(manifest.problems.map((p) => p.index)).toEqual([0, 8, 9]);
  });

  it.each([
    ['a name with a space', tool('order status'), 'name'],
    [`a name of ${MAX_TOOL_NAME_CHARS + 1} characters`, tool('a'.repeat(MAX_TOOL_NAME_CHARS + 1)), 'name'],
    ['an empty name', tool(''), 'name'],
    ['a name with letters outside A-Z', tool('bestelstatus_é'), 'name'],
    ['a name in another script', tool('поиск'), 'name'],
    ['a name with a dot', tool('orders.status'), 'name'],
    ['no name', { description: 'x', parameters: objectWith({}) }, 'name'],
    ['a name that is not a string', tool('x', { name: 42 }), 'name'],
    [`a description of ${MAX_TOOL_DESCRIPTION_CHARS + 1} characters`, tool('bad', { description: 'd'.repeat(MAX_TOOL_DESCRIPTION_CHARS + 1) }), 'description'],
    ['no description', tool('bad', { description: undefined }), 'description'],
    ['parameters that are not an object', withParameters('{"type":"object"}'), 'parameters'],
    ['parameters that are not of type object', withParameters({ type: 'string', properties: {} }), 'parameters.type'],
    ['parameters of type ["object"]', withParameters({ type: ['object'], properties: {} }), 'parameters.type'],
    ['parameters without properties', withParameters({ type: 'object' }), 'parameters.properties'],
    ['properties that are an array', withParameters({ type: 'object', properties: [] }), 'parameters.properties'],
    ['required that is not a list of names', withParameters(objectWith({}, { required: [1] })), 'parameters.required'],
    ['a remote $ref', withParameters(objectWith({ a: { $ref: 'https://schemas.example.com/order.json' } })), 'parameters.properties.a.$ref'],
    ['a relative $ref', withParameters(objectWith({ a: { $ref: 'order.json#/x' } })), 'parameters.properties.a.$ref'],
    ['an unsafe pattern (a+)+$', withParameters(objectWith({ a: { type: 'string', pattern: '(a+)+$' } })), 'parameters.properties.a.pattern'],
    ['an unsafe patternProperties key', withParameters(objectWith({}, { patternProperties: { '^(a|a)*$': {} } })), 'parameters.patternProperties["^(a|a)*$"]'],
    ['an unsafe pattern deep in items', withParameters(objectWith({ a: { type: 'array', items: { type: 'string', pattern: '^(\\w+\\s?)*$' } } })), 'parameters.properties.a.items.pattern'],
    ['a pattern that is not a regular expression', withParameters(objectWith({ a: { type: 'string', pattern: '(' } })), 'parameters.properties.a.pattern'],
    ['a schema that breaks JSON Schema', withParameters(objectWith({ a: { type: 'strin' } })), 'parameters'],
    ['a $ref to nothing', withParameters(objectWith({ a: { $ref: '#/definitions/missing' } })), 'parameters'],
    [`a schema deeper than ${MAX_TOOL_SCHEMA_DEPTH} levels`, withParameters(nested(MAX_TOOL_SCHEMA_DEPTH + 1)), 'parameters'],
    [`a schema larger than ${MAX_TOOL_SCHEMA_BYTES} bytes`, withParameters(objectWith({ a: { type: 'string', description: 'x'.repeat(MAX_TOOL_SCHEMA_BYTES) } })), 'parameters'],
    ['an entry that is not an object', 'lookup_order', 'tools'],
    ['an entry that is null', null, 'tools'],
  ] as const)('drops %s with a problem, and the good tools stay', (_what, bad, field) => {
    const { manifest, checks } = read({ tools: [tool('first'), bad, tool('last')] });
    expect(manifest.status).toBe('ok');
    expect(manifest.tools.map((t) => t.name)).toEqual(['first', 'last']);
    expect([...checks.keys()]).toEqual(['first', 'last']);
    expect(manifest.problems.length).toBeGreaterThanOrEqual(1);
    expect(manifest.problems[0]).toMatchObject({ index: 1, field });
    expect(manifest.problems[0]!.message).toMatch(/ignored$/);
  });

  it('accepts a name of exactly 64 characters and a description of exactly 500', () => {
    const name = 'n'.repeat(MAX_TOOL_NAME_CHARS);
    const { manifest } = read({ tools: [tool(name, { description: '€'.repeat(MAX_TOOL_DESCRIPTION_CHARS) })] });
    expect(manifest.tools.map((t) => t.name)).toEqual([name]);
    expect(manifest.problems).toEqual([]);
  });

  it('keeps the first of two tools with the same name, with a problem for the other', () => {
    const first = tool('lookup');
    const { manifest } = read({ tools: [first, tool('lookup', { description: 'The second one.' }), tool('other')] });
    expect(manifest.tools).toEqual([first, tool('other')]);
    expect(manifest.problems).toEqual([{ index: 1, tool: 'lookup', field: 'name', message: expect.stringContaining('earlier tool') }]);
  });

  it('the first entry claims its name even when it is dropped for another reason', () => {
    const { manifest } = read({ tools: [tool('lookup', { description: 7 }), tool('lookup')] });
    expect(manifest.tools).toEqual([]);
    expect(manifest.problems.map((p) => [p.index, p.field])).toEqual([
      [0, 'description'],
      [1, 'name'],
    ]);
  });

  it('records every problem of one tool, named by the tool', () => {
    const { manifest } = read({ tools: [{ name: 'x y', description: 'd'.repeat(600), parameters: { type: 'array' } }] });
    expect(manifest.problems.map((p) => p.field)).toEqual(['name', 'description', 'parameters.type', 'parameters.properties']);
    expect(manifest.problems.every((p) => p.tool === 'x y' && p.index === 0)).toBe(true);
  });

  it.each([
    ['a status other than 200', { tools: [tool('a')] }, 500, false, /HTTP 500/],
    ['201 (protocol §4.3 says 200)', { tools: [tool('a')] }, 201, false, /HTTP 201/],
    ['401, with a hint about the key', '', 401, false, /same key/],
    ['a body cut off at 64 KB', '{"tools":[', 200, true, /64 KB/],
    ['invalid JSON', '{"tools": [', 200, false, /not valid JSON/],
    ['a body that is not UTF-8', Buffer.from([0x7b, 0xff, 0x7d]), 200, false, /UTF-8/],
    ['an array instead of an object', [tool('a')], 200, false, /JSON object/],
    ['no tools field', { functions: [tool('a')] }, 200, false, /"tools" must be an array/],
    ['tools that is not an array', { tools: { a: tool('a') } }, 200, false, /"tools" must be an array/],
  ] as const)('a manifest with %s is unavailable: no tools, and a sentence', (_what, body, status, truncated, error) => {
    const { manifest, checks } = read(body, status, truncated);
    expect(manifest).toMatchObject({ status: 'unavailable', tools: [], problems: [], fetchedAt });
    expect(manifest.error).toMatch(error);
    expect(manifest.error).toMatch(/\.$/);
    expect(checks.size).toBe(0);
  });

  it('is deep-frozen, since the cache hands the same object to every session', () => {
    const { manifest } = read({ tools: [tool('a')] });
    expect(Object.isFrozen(manifest)).toBe(true);
    expect(Object.isFrozen(manifest.tools[0]!.parameters)).toBe(true);
    expect(Object.isFrozen((manifest.tools[0]!.parameters.properties as Record<string, unknown>).q)).toBe(true);
  });

  it('never lets an own property named __proto__ or an inherited one stand in for a field', () => {
    const body = '{"tools":[{"__proto__":{"name":"x","description":"d","parameters":{"type":"object","properties":{}}}}]}';
    const { manifest } = read(body);
    expect(manifest.tools).toEqual([]);
    expect(manifest.problems[0]).toMatchObject({ index: 0, field: 'name' });
  });
});

describe('parameter schemas are compiled safely', () => {
  it('strips $id and $schema wherever they are keywords, but keeps a parameter named $id', () => {
    const { parameters } = compiled({
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'https://evil.example/base.json',
      type: 'object',
      properties: { $id: { type: 'string', $id: 'inner' }, b: { type: 'object', properties: {}, $schema: 'x' } },
    });
    expect(parameters).toEqual({ type: 'object', properties: { $id: { type: 'string' }, b: { type: 'object', properties: {} } } });
  });

  it('follows a local $ref (#/definitions/…), so shared definitions work', () => {
    const { check } = compiled(
      objectWith(
        { from: { $ref: '#/definitions/postcode' }, to: { $ref: '#/$defs/postcode' } },
        { definitions: { postcode: { type: 'string', pattern: '^[0-9]{4}[A-Z]{2}$' } }, $defs: { postcode: { $ref: '#/definitions/postcode' } } },
      ),
    );
    expect(check({ from: '1234AB', to: '5678CD' })).toEqual({ ok: true });
    expect(check({ from: '1234AB', to: 'nope' })).toEqual({ ok: false, errors: ['to must match pattern "^[0-9]{4}[A-Z]{2}$"'] });
  });

  it('tolerates unknown keywords (OpenAI strict, x- annotations) and unknown formats', () => {
    const { check } = compiled(objectWith({ a: { type: 'string', format: 'order-number', 'x-example': 'A1' } }, { strict: true, additionalProperties: false }));
    expect(check({ a: 'anything' })).toEqual({ ok: true });
    expect(check({ a: 'x', b: 1 })).toEqual({ ok: false, errors: ['b is not a parameter of this tool'] });
  });

  it('checks the formats it knows (ajv-formats)', () => {
    const { check } = compiled(objectWith({ email: { type: 'string', format: 'email' }, day: { type: 'string', format: 'date' } }));
    expect(check({ email: 'an@example.com', day: '2024-02-29' })).toEqual({ ok: true });
    expect(check({ email: 'not an address', day: '2023-02-29' })).toEqual({
      ok: false,
      errors: ['email must match format "email"', 'day must match format "date"'],
    });
  });

  it('refuses an unsafe pattern tucked under an unknown keyword and reached by a local $ref', () => {
    const result = compiler.compile(objectWith({ a: { $ref: '#/x-hidden/p' } }, { 'x-hidden': { p: { type: 'string', pattern: '(a*)*b' } } }));
    expect(result).toMatchObject({ ok: false, problem: { field: 'parameters.x-hidden.p.pattern' } });
  });

  it('refuses an unsafe pattern that only Ajv reaches (a $ref into a default value) at compile time', () => {
    // `default` is data and is not walked; Ajv's own RegExp engine (code.regExp) still refuses the pattern.
    const result = compiler.compile(objectWith({ a: { $ref: '#/properties/b/default' }, b: { default: { type: 'string', pattern: '(x+)+y' } } }));
    expect(result).toMatchObject({ ok: false, problem: { field: 'parameters', message: expect.stringContaining('(x+)+y') } });
  });

  it('a schema exactly at the depth and size limits compiles', () => {
    expect(compiler.compile(nested(MAX_TOOL_SCHEMA_DEPTH)).ok).toBe(true);
    const filler = 'x'.repeat(MAX_TOOL_SCHEMA_BYTES - JSON.stringify(objectWith({ a: { description: '' } })).length);
    expect(compiler.compile(objectWith({ a: { description: filler } })).ok).toBe(true);
  });

  it('ignores $async, so a check is always a verdict and never a Promise', () => {
    const { check } = compiled(objectWith({ a: { type: 'number' } }, { $async: true }));
    expect(check({ a: 'x' })).toEqual({ ok: false, errors: ['a must be number'] });
  });

  it('never changes the arguments it checks (no defaults, no coercion)', () => {
    const { check } = compiled(objectWith({ n: { type: 'number' }, lang: { type: 'string', default: 'nl' } }));
    const args = { n: 3 };
    expect(check(args)).toEqual({ ok: true });
    expect(args).toEqual({ n: 3 });
    expect(check({ n: '3' })).toEqual({ ok: false, errors: ['n must be number'] });
  });

  it('explains every mistake in words the AI can act on', () => {
    const { check } = compiled(
      objectWith(
        { order_number: { type: 'string', pattern: '^[0-9]{6}$' }, lines: { type: 'array', items: { type: 'integer' } }, size: { enum: ['S', 'M'] } },
        { required: ['order_number', 'postcode'] },
      ),
    );
    expect(check({ order_number: 'A1', lines: [1, 'two'], size: 'XL' })).toEqual({
      ok: false,
      errors: ['postcode is required', 'order_number must match pattern "^[0-9]{6}$"', 'lines[1] must be integer', 'size must be one of "S", "M"'],
    });
  });

  it(`caps every string at ${MAX_TOOL_ARG_STRING_CHARS} characters, though the schema has no maxLength`, () => {
    const { check } = compiled(objectWith({ q: { type: 'string', pattern: '^[a-z ]*$' } }));
    expect(check({ q: 'a'.repeat(MAX_TOOL_ARG_STRING_CHARS) })).toEqual({ ok: true });
    expect(check({ q: 'a'.repeat(MAX_TOOL_ARG_STRING_CHARS + 1) })).toEqual({
      ok: false,
      errors: [`q is longer than ${MAX_TOOL_ARG_STRING_CHARS} characters`],
    });
    expect(check({ ['k'.repeat(MAX_TOOL_ARG_STRING_CHARS + 1)]: 1 })).toMatchObject({ ok: false });
  });

  it(`refuses arguments larger than ${MAX_TOOL_ARGS_BYTES} bytes, nested too deep, or not a JSON object`, () => {
    const { check } = compiled(objectWith({}));
    const many = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, 'v'.repeat(1_000)]));
    expect(check(many)).toEqual({ ok: false, errors: [`the arguments are longer than ${MAX_TOOL_ARGS_BYTES} bytes of JSON`] });
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { d: deep };
    expect(check(deep)).toMatchObject({ ok: false, errors: [expect.stringContaining('nested deeper')] });
    for (const args of [null, [], 'q', 3]) expect(check(args)).toEqual({ ok: false, errors: ['the arguments must be a JSON object'] });
    expect(check({ n: 10n })).toEqual({ ok: false, errors: ['the arguments must be plain JSON'] });
  });

  it(`starts a fresh Ajv after ${AJV_RENEW_AFTER_COMPILES} compilations, and earlier checks keep working`, () => {
    const own = createToolSchemaCompiler();
    const first = own.compile(objectWith({ a: { type: 'integer' } }, { required: ['a'] }));
    for (let i = 0; i < AJV_RENEW_AFTER_COMPILES + 2; i++) expect(own.compile(objectWith({ [`p${i}`]: { type: 'string' } })).ok).toBe(true);
    if (!first.ok) throw new Error('expected the first schema to compile');
    expect(first.compiled.check({ a: 1 })).toEqual({ ok: true });
    expect(first.compiled.check({})).toEqual({ ok: false, errors: ['a is required'] });
  });
});

describe('the ReDoS guard on patterns', () => {
  it.each([
    '(a+)+$',
    '(a*)*',
    '(?:a+)+',
    '(a|a)*',
    '(a|aa)+',
    '(cat|dog)+',
    '^(\\d{1,3}\\.)+$',
    '(a?){25}a{25}',
    '^(\\w+\\s?)*$',
    '((ab)*c)+',
    '(x(?:y+))+',
    '(.*a){12}',
    '(?<w>a+)+',
    '(a)\\1',
    '(?<w>a)\\k<w>',
  ])('refuses %s', (pattern) => {
    expect(unsafePatternReason(pattern)).toEqual(expect.any(String));
  });

  it.each([
    '^[A-Za-z0-9_-]{1,64}$',
    '^\\d{4}\\s?[A-Z]{2}$',
    '^(\\+31)?\\d{9}$',
    '^(\\d{3}-){2}\\d{4}$',
    '^(?:ab)+$',
    '^(?:[a-z]+)$',
    '^(cat|dog)$',
    '^[^@\\s]+@[^@\\s]+$',
    '[(a+)+]',
    '\\(a+\\)+',
    '\\p{L}+',
    '\\u{1F600}+',
    '(a{3})+',
    '^(?:https?://)?[a-z.]+$',
    '\\0',
  ])('accepts %s', (pattern) => {
    expect(unsafePatternReason(pattern)).toBeNull();
  });

  it.each([
    ['^[A-Z0-9]+$', MAX_TOOL_ARG_STRING_CHARS],
    ['^\\d{4}\\s?[A-Z]{2}$', MAX_TOOL_ARG_STRING_CHARS],
    ['\\d+$', MAX_TOOL_ARG_STRING_CHARS],
    ['\\d+\\d+$', 214],
    ['^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', 214],
    ['^\\d*\\d*\\d*\\d*$', 55],
  ])(`runs %s only on values short enough to stay within ${PATTERN_STEP_BUDGET} steps: %i characters`, (pattern, limit) => {
    expect(patternInputLimit(pattern, MAX_TOOL_ARG_STRING_CHARS)).toBe(limit);
  });

  it('a polynomial pattern never runs on a value longer than its limit: the check says so at once', () => {
    // On 2000 digits this pattern backtracks for seconds; it is refused in a moment instead.
    const { check } = compiled(objectWith({ n: { type: 'string', pattern: '^\\d*\\d*\\d*$' } }));
    const started = performance.now();
    expect(check({ n: `${'1'.repeat(1_999)}x` })).toEqual({
      ok: false,
      errors: ['a value checked against the pattern "^\\d*\\d*\\d*$" is longer than the 214 characters that pattern is run on'],
    });
    expect(check({ n: `${'1'.repeat(214)}` })).toEqual({ ok: true });
    expect(check({ n: `${'1'.repeat(213)}x` })).toEqual({ ok: false, errors: ['n must match pattern "^\\d*\\d*\\d*$"'] });
    expect(performance.now() - started).toBeLessThan(250);
  });

  it('a refused pattern takes time that explodes; the guard is why it never runs', () => {
    // Not run on a long input here (that is the point); the shape is the classic one.
    expect(unsafePatternReason('^(a+)+$')).toMatch(/repeats a group that itself contains a repetition/);
    expect(unsafePatternReason('^(a|b)+$')).toMatch(/\[ab\]\+/);
  });
});
