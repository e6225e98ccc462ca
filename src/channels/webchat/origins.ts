/**
 * Web origins (RFC 6454): `scheme://host[:port]`, the unit browsers send in `Origin` and CORS compares. A workspace
 * lists the origins of its own web pages; the widget is served only to those (docs/webchat.md, CORS).
 */
import { AppError } from '../../errors.ts';
import { MAX_ALLOWED_ORIGINS, MAX_ORIGIN_CHARS } from './limits.ts';

/**
 * The canonical form of an origin (lowercase scheme and host, default port dropped, IDN in punycode), or undefined
 * when the text is not an http(s) origin. A trailing slash is forgiven; a path, query, fragment or credentials are not.
 */
export function canonicalOrigin(text: string): string | undefined {
  if (text.length > MAX_ORIGIN_CHARS) return undefined;
  const trimmed = text.trim().replace(/\/$/, '');
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return undefined;
  return url.origin;
}

/** Checks and canonicalises the list of PUT /v1/webchat; duplicates collapse. Each problem names its item. */
export function parseAllowedOrigins(list: readonly string[]): string[] {
  const problems: { field: string; message: string }[] = [];
  if (list.length > MAX_ALLOWED_ORIGINS) problems.push({ field: 'allowed_origins', message: `must have at most ${MAX_ALLOWED_ORIGINS} items` });
  const origins = new Set<string>();
  list.forEach((item, i) => {
    const origin = canonicalOrigin(item);
    if (origin === undefined) problems.push({ field: `allowed_origins[${i}]`, message: 'must be a web origin like https://shop.example (http or https, a host, an optional port; no path)' });
    else origins.add(origin);
  });
  if (problems.length) throw new AppError('validation_failed', `${problems[0]!.field} ${problems[0]!.message}.`, problems);
  return [...origins];
}
