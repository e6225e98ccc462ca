/** Reading parsed JSON from outside: what every parser of integrators', Meta's and the LLM's answers asks first. */
import { cutToChars } from './text/cut.ts';

/** A JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object's own property `key` (never one inherited from its prototype, such as `constructor`), or undefined. */
export function own(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** How much of a string an error sentence quotes, in characters. */
const QUOTED_CHARS = 40;

/**
 * A value named the way a reader of an error sentence understands it: 'the number 3', 'the string "yes"', 'an
 * array', 'null'. Short whatever was sent: a string is quoted and cut, an object or array is named by its kind and
 * never written out (a nested value could be thousands of levels deep).
 */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return value.length === 0 ? 'an empty string' : `the string ${JSON.stringify(cutToChars(value, QUOTED_CHARS))}${Array.from(value).length > QUOTED_CHARS ? '…' : ''}`;
    case 'number':
    case 'boolean':
      return `${typeof value === 'number' ? 'the number ' : ''}${String(value)}`;
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}
