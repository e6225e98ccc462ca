/**
 * JSON text for a `jsonb` parameter that PostgreSQL always accepts. Outside text is cleaned where it enters
 * (src/text/outside-text.ts); this is the last guard at the storage edge, for a string that reached a write some
 * other way: one unstorable string must not make a batched write fail for every row in the batch, at every retry
 * (docs/reliability.md, "Outside text").
 *
 * `JSON.stringify` writes U+0000 as `\u0000` and a lone surrogate as `\udXXX` (a well-formed pair is written as the
 * characters themselves), and `jsonb` refuses both escapes. Each becomes `\ufffd`, the same rule as at the edge. An
 * escape that is really the text `\u0000` (its backslash escaped, `\\u0000`) is left alone.
 */
const SUSPECT = /\\u(?:0000|d[89a-f])/i;
const UNSTORABLE = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/gi;

export function jsonb(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  return SUSPECT.test(text) ? text.replace(UNSTORABLE, '$1\\ufffd') : text;
}
