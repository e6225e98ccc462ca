/**
 * Phone numbers in E.164 (`+` country code and subscriber number, at most 15 digits). Numbers are stored and compared
 * in this form only, so `+31 20 123 4567` from the dashboard and `+31201234567` from Twilio's `to` are one number.
 */

const E164 = /^\+[1-9][0-9]{1,14}$/;
/** Separators people write inside numbers; a leading "tel:" as in RFC 3966 URIs. */
const SEPARATORS = /[\s().\u00a0-]/g;

/**
 * What {@link normaliseE164} accepts, as a JSON Schema pattern (ECMAScript, `u` flag) for the API description: an
 * optional `tel:`, separators and `(0)` anywhere, `+`, then 2 to 15 digits the first of which is not 0; the 0 of a
 * `(0)` is not counted. test/http/openapi-fuzz.test.ts checks that the two agree.
 */
const FILLER = String.raw`(?:[\s().-]|\(0\))`;
const COUNTED_DIGIT = String.raw`(?:[1-9]|0(?!\))|(?<!\()0)`;
export const E164_INPUT_PATTERN = String.raw`^(?:\s*[Tt][Ee][Ll]:)?${FILLER}*\+${FILLER}*[1-9](?:${FILLER}*${COUNTED_DIGIT}){1,14}${FILLER}*$`;

/**
 * The number in E.164, or null when it is not one. Separators are removed; a national number (no `+`) is refused
 * because the country it belongs to cannot be known here.
 */
export function normaliseE164(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  // "+31 (0)20 …" is common European notation for "dial 0 only from inside the country": the (0) is dropped.
  const compact = value.trim().replace(/^tel:/i, '').replace(/\(0\)/g, '').replace(SEPARATORS, '');
  return E164.test(compact) ? compact : null;
}

/**
 * A number as people type it (docs/phone.md, "Numbers"): `+44 20 1234 5678`, `0044 20 1234 5678`, `tel:+44…`, or a
 * national number like `020 1234 5678` when the country is known (`callingCode`, digits only, like `44`). The national
 * trunk prefix 0 is dropped (as in most of Europe; a country without one simply has no leading 0 to drop).
 * Null when it cannot be read; the caller says why in words.
 */
export function readPhoneNumber(value: string, callingCode?: string | null): string | null {
  const compact = value.trim().replace(/^tel:/i, '').replace(/\(0\)/g, '').replace(SEPARATORS, '');
  if (compact.startsWith('+')) return normaliseE164(compact);
  if (compact.startsWith('00')) return normaliseE164(`+${compact.slice(2)}`);
  if (!/^[0-9]+$/.test(compact) || !callingCode || !/^[1-9][0-9]{0,2}$/.test(callingCode)) return null;
  return normaliseE164(`+${callingCode}${compact.replace(/^0/, '')}`);
}

/** Whether the text looks like a national number (digits, no `+` or `00`), which needs a country to be read. */
export function isNationalNumber(value: string): boolean {
  const compact = value.trim().replace(/\(0\)/g, '').replace(SEPARATORS, '');
  return /^0[1-9][0-9]+$/.test(compact);
}
