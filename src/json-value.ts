/** Reading parsed JSON from outside: what every parser of integrators', Meta's and the LLM's answers asks first. */

/** A JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
