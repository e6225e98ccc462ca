/** Request bodies are checked with Ajv against the route's schema; every problem names its field. */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AppError } from '../errors.ts';
import type { JsonSchema } from './route.ts';

// ajv-formats is CommonJS: under ESM its plugin is the `default` property of the module object.
const addFormats = addFormatsModule.default;

const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: false });
addFormats(ajv, ['email', 'uri', 'date-time', 'uuid']);

export function compileBodyValidator(schema: JsonSchema): (body: unknown) => unknown {
  const validate: ValidateFunction = ajv.compile(schema);
  return (body) => {
    if (body === undefined) throw new AppError('validation_failed', 'The request needs a JSON body.', [{ field: '', message: 'is required' }]);
    if (!validate(body)) {
      const problems = (validate.errors ?? []).map(describeError);
      const first = problems[0]!;
      throw new AppError('validation_failed', `${first.field || 'The body'} ${first.message}.`, problems);
    }
    return body;
  };
}

function describeError(e: ErrorObject): { field: string; message: string } {
  const path = e.instancePath.replace(/^\//, '').replaceAll('/', '.');
  switch (e.keyword) {
    case 'required':
      return { field: join(path, (e.params as { missingProperty: string }).missingProperty), message: 'is required' };
    case 'additionalProperties':
      return { field: join(path, (e.params as { additionalProperty: string }).additionalProperty), message: 'is not a known field' };
    case 'enum':
      return { field: path, message: `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}` };
    default:
      return { field: path, message: e.message ?? 'is invalid' };
  }
}

function join(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

/**
 * The query parameters a route declares (`query` in its definition), checked before the handler: each must be given
 * once (a repeated one is an array, which no handler expects), and must be what its schema says, read strictly from
 * the text: an integer is decimal digits (not `0x10` or `1e1`), a date-time is RFC 3339. Parameters not declared are
 * left to the handler. Problems name the parameter, as body problems name the field.
 */
export function compileQueryValidator(query: Record<string, JsonSchema>): (values: Record<string, unknown>) => void {
  const checks = Object.entries(query).map(([, schema]) => {
    const validate = ajv.compile(schema);
    const type = schema.type;
    return (value: unknown): string | null => {
      if (value === undefined) return null;
      if (typeof value !== 'string') return 'must be given once';
      let typed: unknown = value;
      if (type === 'integer' || type === 'number') {
        if (!(type === 'integer' ? /^-?\d{1,15}$/ : /^-?\d{1,15}(\.\d{1,15})?$/).test(value)) return `must be ${type === 'integer' ? 'a whole number' : 'a number'}`;
        typed = Number(value);
      } else if (type === 'boolean') {
        if (value !== 'true' && value !== 'false') return 'must be true or false';
        typed = value === 'true';
      }
      if (!validate(typed)) return describeError(validate.errors![0]!).message;
      return null;
    };
  });
  const names = Object.keys(query);
  return (values) => {
    const problems: { field: string; message: string }[] = [];
    checks.forEach((check, i) => {
      const message = check(values[names[i]!]);
      if (message !== null) problems.push({ field: names[i]!, message });
    });
    if (problems.length > 0) throw new AppError('validation_failed', `${problems[0]!.field} ${problems[0]!.message}.`, problems);
  };
}

/**
 * Whether a path names this route: a declared path parameter with an `enum` selects the route (`{event}` names an
 * event, so `PUT /v1/webhooks/test` is not `PUT /v1/webhooks/{event}` and gets the 405 of `/v1/webhooks/test`). Other
 * declared parameters (a pattern) are the handler's to check, with a 400 that names them.
 */
export function compileParamsMatcher(params: Record<string, JsonSchema> | undefined): (values: Record<string, string>) => boolean {
  const selecting = Object.entries(params ?? {}).filter(([, schema]) => Array.isArray(schema.enum));
  if (selecting.length === 0) return () => true;
  return (values) => selecting.every(([name, schema]) => values[name] === undefined || (schema.enum as unknown[]).includes(values[name]));
}
