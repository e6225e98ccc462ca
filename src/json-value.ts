/** Reading parsed JSON from outside: what every parser of integrators', Meta's and the LLM's answers asks first. */

/** A JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object's own property `key` (never one inherited from its prototype, such as `constructor`), or undefined. */
export function own(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}
