/**
 * The integrator's tool manifest (protocol §2.3, §4.3) and the parameter schemas in it, as properties: whatever comes
 * back, reading it gives a manifest (status ok or unavailable) and never throws; a tool kept is a valid one; every
 * string in the manifest follows the outside-text rule (src/text/outside-text.ts); and the argument check compiled
 * from a kept schema answers a verdict for any arguments.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createToolSchemaCompiler } from '../../src/botlink/tool-schema.ts';
import { readToolManifest, type LoadedManifest } from '../../src/botlink/tools-manifest.ts';
import { MAX_RESPONSE_BYTES, MAX_TOOL_DESCRIPTION_CHARS, MAX_TOOLS, TOOL_NAME_PATTERN } from '../../src/limits.ts';
import { cleanText } from '../../src/text/outside-text.ts';
import { dirtyText, expectAllClean, nestedJsonText, outsideJson, outsideText } from './outside.ts';

const compiler = createToolSchemaCompiler();
const FETCHED_AT = 1_700_000_000_000;
const toolName = new RegExp(TOOL_NAME_PATTERN);

const read = (body: Buffer, status = 200, truncated = false): LoadedManifest => readToolManifest({ status, body, truncated }, compiler, FETCHED_AT);
const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');

/**
 * Names of Object.prototype ("__proto__", "constructor", "toString", …; fast-check's strings produce them on purpose)
 * are left to tests of their own below: tool-schema.ts mishandles parameters so named, and the properties here must
 * not fail at random for it.
 */
const notInherited = (name: string): boolean => !(name in Object.prototype);
const validName = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/).filter(notInherited);
const propertyName = fc.oneof(validName, outsideText()).filter(notInherited);
/** A parameter schema as an integrator might write one, with outside text wherever a schema holds text. */
const parameterSchema: fc.Arbitrary<unknown> = fc.oneof(
  fc.record(
    {
      type: fc.constantFrom('string', 'number', 'integer', 'boolean'),
      description: outsideText(),
      enum: fc.array(fc.oneof(outsideText(), fc.integer()), { minLength: 1, maxLength: 4 }),
      pattern: fc.oneof(fc.constantFrom('^[A-Z0-9]+$', '\\d+', '^\\d{4}[A-Z]{2}$', '(a+)+$'), outsideText()),
      default: outsideJson(2),
      maxLength: fc.nat(50),
    },
    { requiredKeys: ['type'] },
  ),
  outsideJson(2),
);
const parameters: fc.Arbitrary<unknown> = fc.oneof(
  fc.record(
    {
      type: fc.constant('object'),
      properties: fc.dictionary(fc.oneof(validName, outsideText()), parameterSchema, { maxKeys: 4 }),
      required: fc.array(fc.oneof(validName, outsideText()), { maxLength: 3 }),
      additionalProperties: fc.boolean(),
    },
    { requiredKeys: ['type', 'properties'] },
  ),
  outsideJson(3),
);
const toolEntry: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ name: fc.oneof(validName, outsideText(), dirtyText), description: fc.oneof(outsideText(), outsideJson(1)), parameters }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: outsideJson(2) },
);
const manifestShaped = fc.record({ tools: fc.array(toolEntry, { maxLength: MAX_TOOLS + 2 }), extra: outsideJson(2) }, { requiredKeys: ['tools'] });

function expectManifest({ manifest, checks }: LoadedManifest): void {
  expect(['ok', 'unavailable']).toContain(manifest.status);
  expect(manifest.fetchedAt).toBe(FETCHED_AT);
  expect(Object.isFrozen(manifest)).toBe(true);
  if (manifest.status === 'unavailable') expect(manifest.tools).toEqual([]);
  expect(manifest.tools.length).toBeLessThanOrEqual(MAX_TOOLS);
  for (const tool of manifest.tools) {
    expect(tool.name).toMatch(toolName);
    expect(Array.from(tool.description).length).toBeLessThanOrEqual(MAX_TOOL_DESCRIPTION_CHARS);
    expect(tool.parameters.type).toBe('object');
    expect(checks.has(tool.name)).toBe(true);
  }
  expect(new Set(manifest.tools.map((t) => t.name)).size).toBe(manifest.tools.length);
}

describe('the tool manifest, whatever the integrator serves', () => {
  it('property: any status, any bytes, cut or not: a manifest, never a throw', () => {
    const body = fc.oneof(fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)), outsideJson().map(json), manifestShaped.map(json));
    fc.assert(
      fc.property(fc.oneof(fc.constant(200), fc.integer({ min: 100, max: 599 })), body, fc.boolean(), (status, bytes, truncated) => {
        expectManifest(read(bytes, status, truncated));
      }),
      { numRuns: 300 },
    );
  });

  it('property: no string in the manifest holds U+0000 or a lone surrogate, names, descriptions, schemas and problems alike', () => {
    fc.assert(
      fc.property(manifestShaped, (value) => {
        const loaded = read(json(value));
        expectManifest(loaded);
        expectAllClean(loaded.manifest);
      }),
      { numRuns: 300 },
    );
  });

  it('property: a valid tool is kept, its description as sent with only U+0000 and lone surrogates replaced', () => {
    const description = outsideText({ maxLength: MAX_TOOL_DESCRIPTION_CHARS });
    fc.assert(
      fc.property(validName, description, propertyName, (name, text, parameter) => {
        const schema = { type: 'object', properties: { [parameter]: { type: 'string', description: text } } };
        const { manifest } = read(json({ tools: [{ name, description: text, parameters: schema }] }));
        expect(manifest.problems).toEqual([]);
        expect(manifest.tools).toHaveLength(1);
        expect(manifest.tools[0]!.description).toBe(cleanText(text));
        expect(manifest.tools[0]!.parameters).toEqual({ type: 'object', properties: { [cleanText(parameter)]: { type: 'string', description: cleanText(text) } } });
      }),
      { numRuns: 200 },
    );
  });

  it('property: the argument check of a kept tool answers a verdict for any arguments, never a throw', () => {
    const safeSchema = fc.record(
      {
        type: fc.constantFrom('string', 'number', 'integer', 'boolean', 'array', 'object'),
        description: outsideText(),
        // JSON Schema wants enum values unique, and two values that differ only in what cleaning replaces are equal.
        enum: fc.uniqueArray(fc.oneof(outsideText(), fc.integer()), { minLength: 1, maxLength: 4, selector: (v) => (typeof v === 'string' ? cleanText(v) : v) }),
        pattern: fc.constantFrom('^[A-Z0-9]+$', '\\d+', '^\\d{4}[A-Z]{2}$', '^[^@\\s]+@[^@\\s]+$'),
        maxLength: fc.nat(50),
      },
      { requiredKeys: ['type'] },
    );
    const tool = fc.record({
      name: validName,
      description: outsideText({ maxLength: 100 }),
      parameters: fc.record({
        type: fc.constant('object'),
        properties: fc.dictionary(propertyName, safeSchema, { maxKeys: 4 }),
        required: fc.uniqueArray(fc.oneof(validName, outsideText()), { maxLength: 3, selector: cleanText }),
      }),
    });
    const args = fc.oneof(outsideJson(3), fc.dictionary(fc.oneof(validName, outsideText()), fc.oneof(outsideText(), outsideJson(2)), { maxKeys: 5 }));
    fc.assert(
      fc.property(tool, fc.array(args, { minLength: 1, maxLength: 4 }), (entry, calls) => {
        const { manifest, checks } = read(json({ tools: [entry] }));
        expect(manifest.problems).toEqual([]);
        const check = checks.get(entry.name)!;
        for (const call of calls) {
          const verdict = check(call);
          if (!verdict.ok) expect(verdict.errors.length > 0 && verdict.errors.every((e) => typeof e === 'string')).toBe(true);
        }
        // Arguments the schema cannot refuse pass.
        if (entry.parameters.required.length === 0) expect(check({})).toEqual({ ok: true });
      }),
      { numRuns: 200 },
    );
  });

  it('a parameter named __proto__ is a parameter like any other', () => {
    const parameters = '{"type":"object","properties":{"__proto__":{"type":"string"},"order":{"type":"string"}},"required":["__proto__"]}';
    const { manifest, checks } = read(Buffer.from(`{"tools":[{"name":"t","description":"d","parameters":${parameters}}]}`, 'utf8'));
    expect(manifest.problems).toEqual([]);
    expect(Object.keys(manifest.tools[0]?.parameters.properties ?? {})).toEqual(['__proto__', 'order']);
    expect(checks.get('t')!({ order: '1' })).toMatchObject({ ok: false });
    expect(checks.get('t')!(JSON.parse('{"__proto__":"x","order":"1"}'))).toEqual({ ok: true });
  });

  it('an optional parameter named constructor or toString may be left out, as any other', () => {
    const parameters = { type: 'object', properties: { constructor: { type: 'string' }, toString: { type: 'string' }, order: { type: 'string' } }, required: ['order'] };
    const { manifest, checks } = read(json({ tools: [{ name: 't', description: 'd', parameters }] }));
    expect(manifest.problems).toEqual([]);
    expect(checks.get('t')!({ order: '1' })).toEqual({ ok: true });
  });

  it('property: a manifest nested thousands of levels deep, anywhere, is read without a throw', () => {
    const maxDepth = Math.floor((MAX_RESPONSE_BYTES - 200) / 6);
    const place = fc.constantFrom('root', 'tools', 'entry', 'parameters', 'property', 'description');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: maxDepth }), place, (depth, where) => {
        const deep = nestedJsonText(depth, '"\\u0000"');
        const text = {
          root: deep,
          tools: `{"tools":${deep}}`,
          entry: `{"tools":[${deep}]}`,
          parameters: `{"tools":[{"name":"t","description":"d","parameters":${deep}}]}`,
          property: `{"tools":[{"name":"t","description":"d","parameters":{"type":"object","properties":{"p":${deep}}}}]}`,
          description: `{"tools":[{"name":"t","description":${deep},"parameters":{"type":"object","properties":{}}}]}`,
        }[where];
        const loaded = read(Buffer.from(text, 'utf8'));
        expectManifest(loaded);
        if (depth > 20 && where !== 'root' && where !== 'tools') expect(loaded.manifest.tools).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });
});
