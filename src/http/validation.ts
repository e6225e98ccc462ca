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
