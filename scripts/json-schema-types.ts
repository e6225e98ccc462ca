/**
 * TypeScript declarations from the JSON Schemas of our OpenAPI document (src/http/openapi.ts), for the dashboard's
 * types (scripts/dashboard-types.ts). It knows the subset our route declarations use: type (one or a list), object
 * with properties, required and additionalProperties, array with items, enum, const, oneOf, anyOf, allOf, $ref into
 * the components and OpenAPI 3.0's nullable. A keyword that would change a shape and is not in that subset stops the
 * generator with its path, so a type is never quietly wider or narrower than the schema.
 */

export type JsonSchema = Record<string, unknown>;

/** Keywords that constrain or describe a value without changing its TypeScript type. */
const ANNOTATIONS = new Set([
  'description', 'title', 'format', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'multipleOf', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'default', 'examples', 'example', 'deprecated',
  'readOnly', 'writeOnly', 'contentMediaType', 'contentEncoding', 'propertyNames', '$comment',
]);
const SHAPES = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'oneOf', 'anyOf', 'allOf', '$ref', 'nullable']);

export interface ConvertOptions {
  /** The TypeScript name a `$ref` (`#/components/schemas/Name`) stands for. */
  refName: (ref: string) => string;
}

/** The TypeScript type of `schema`, indented for a declaration at `depth`; `at` names the schema in errors. */
export function typeOf(schema: unknown, options: ConvertOptions, at: string, depth = 0): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (!isObject(schema)) throw new Error(`${at}: a schema must be an object or a boolean`);
  for (const key of Object.keys(schema)) {
    if (!ANNOTATIONS.has(key) && !SHAPES.has(key)) throw new Error(`${at}: the keyword "${key}" is not one the dashboard's types know (scripts/json-schema-types.ts)`);
  }
  const type = baseType(schema, options, at, depth);
  return schema.nullable === true && type !== 'unknown' ? union([type, 'null']) : type;
}

function baseType(schema: JsonSchema, options: ConvertOptions, at: string, depth: number): string {
  if (typeof schema.$ref === 'string') return options.refName(schema.$ref);
  if ('const' in schema) return literal(schema.const, at);
  if (Array.isArray(schema.enum)) return union(schema.enum.map((value) => literal(value, at)));
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(alternatives)) {
    const others = { ...schema, oneOf: undefined, anyOf: undefined };
    // Shape keywords beside oneOf (shared properties, say) apply to every alternative; a bare `type` says nothing more.
    const shared = hasShape({ ...others, type: undefined }) ? typeOf(strip(others), options, at, depth) : null;
    const each = union(alternatives.map((alternative, i) => typeOf(alternative, options, `${at}.oneOf[${i}]`, depth)));
    return shared && shared !== 'unknown' ? `${parenthesised(shared)} & (${each})` : each;
  }
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((part, i) => typeOf(part, options, `${at}.allOf[${i}]`, depth));
    const others = strip({ ...schema, allOf: undefined });
    if (hasShape(others)) parts.push(typeOf(others, options, at, depth));
    return parts.map(parenthesised).join(' & ');
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? inferredTypes(schema) : [schema.type];
  if (types.length === 0) return 'unknown';
  return union(types.map((t) => {
    if (typeof t !== 'string') throw new Error(`${at}: type must be a string or a list of strings`);
    return typeNamed(t, schema, options, at, depth);
  }));
}

/** A schema with properties or items but no type (JSON Schema applies them only to that kind of value). */
function inferredTypes(schema: JsonSchema): string[] {
  if (schema.properties !== undefined || schema.additionalProperties !== undefined || schema.required !== undefined) return ['object'];
  if (schema.items !== undefined) return ['array'];
  return [];
}

function typeNamed(type: string, schema: JsonSchema, options: ConvertOptions, at: string, depth: number): string {
  switch (type) {
    case 'string': return 'string';
    case 'integer':
    case 'number': return 'number';
    case 'boolean': return 'boolean';
    case 'null': return 'null';
    case 'array': return `${parenthesised(typeOf(schema.items, options, `${at}.items`, depth))}[]`;
    case 'object': return objectType(schema, options, at, depth);
    default: throw new Error(`${at}: unknown type "${type}"`);
  }
}

function objectType(schema: JsonSchema, options: ConvertOptions, at: string, depth: number): string {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const extra = schema.additionalProperties;
  const names = Object.keys(properties);
  // An object that names no property is a map: of what additionalProperties says, else of anything.
  if (names.length === 0) return `Record<string, ${isObject(extra) ? typeOf(extra, options, `${at}.additionalProperties`, depth) : extra === false ? 'never' : 'unknown'}>`;
  const pad = '  '.repeat(depth + 1);
  const lines = names.map((name) => {
    const property = properties[name];
    const comment = isObject(property) && typeof property.description === 'string' ? `${pad}${docComment(property.description)}\n` : '';
    const key = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
    return `${comment}${pad}${key}${required.has(name) ? '' : '?'}: ${typeOf(property, options, `${at}.${name}`, depth + 1)};`;
  });
  // Properties the schema lets through beside the named ones (additionalProperties: a schema).
  if (isObject(extra)) lines.push(`${pad}[key: string]: ${union([typeOf(extra, options, `${at}.additionalProperties`, depth + 1), ...names.map((name) => typeOf(properties[name], options, `${at}.${name}`, depth + 1)), 'undefined'])};`);
  return `{\n${lines.join('\n')}\n${'  '.repeat(depth)}}`;
}

/** A one-line JSDoc comment (a description's line breaks folded, and nothing in it can close the comment). */
export function docComment(text: string): string {
  return `/** ${text.replace(/\s+/g, ' ').trim().replaceAll('*/', '* /')} */`;
}

function literal(value: unknown, at: string): string {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  throw new Error(`${at}: only strings, numbers, booleans and null can be an enum's or a const's value`);
}

/** The alternatives once each (`string | null` rather than `string | string | null`). */
function union(types: string[]): string {
  // `&` binds tighter than `|`, so no alternative needs parentheses.
  const once = [...new Set(types)];
  if (once.includes('unknown')) return 'unknown';
  return once.join(' | ');
}

/** A union or intersection inside `[]` or `&` needs parentheses; an object literal or a name does not. */
function parenthesised(type: string): string {
  let level = 0;
  for (let i = 0; i < type.length; i++) {
    const c = type[i]!;
    if (c === '{' || c === '(' || c === '<' || c === '[') level++;
    else if (c === '}' || c === ')' || c === '>' || c === ']') level--;
    else if (level === 0 && (c === '|' || c === '&')) return `(${type})`;
    else if (c === '"') i = type.indexOf('"', i + 1) < 0 ? type.length : skipString(type, i);
  }
  return type;
}

function skipString(type: string, start: number): number {
  for (let i = start + 1; i < type.length; i++) {
    if (type[i] === '\\') i++;
    else if (type[i] === '"') return i;
  }
  return type.length;
}

function strip(schema: JsonSchema): JsonSchema {
  return Object.fromEntries(Object.entries(schema).filter(([, value]) => value !== undefined));
}

function hasShape(schema: JsonSchema): boolean {
  return Object.entries(schema).some(([key, value]) => value !== undefined && SHAPES.has(key) && key !== 'nullable');
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
