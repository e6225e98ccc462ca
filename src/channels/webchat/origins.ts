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

/**
 * The origin of what an owner pastes as "a website": a page's address (the path, query and fragment are dropped) or a
 * bare host (`www.yourshop.example`, https assumed), canonical; `changed` when it is not what was written. Undefined
 * when it cannot be a website's address (another scheme, credentials, no host).
 */
export function originFromPasted(text: string): { origin: string; changed: boolean } | undefined {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.length > MAX_ORIGIN_CHARS) return undefined;
  const exact = canonicalOrigin(trimmed);
  if (exact !== undefined) return { origin: exact, changed: false };
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || !url.hostname.includes('.') && url.hostname !== 'localhost') return undefined;
  return { origin: url.origin, changed: true };
}

/**
 * Checks and canonicalises the list of PUT /v1/webchat; duplicates collapse. A page's address or a bare host is taken
 * as its site's origin, and `notes` say so in words; what cannot be a website is refused, naming its item.
 */
export function parseAllowedOrigins(list: readonly string[]): { origins: string[]; notes: string[] } {
  const problems: { field: string; message: string }[] = [];
  const notes: string[] = [];
  if (list.length > MAX_ALLOWED_ORIGINS) problems.push({ field: 'allowed_origins', message: `must have at most ${MAX_ALLOWED_ORIGINS} items` });
  const origins = new Set<string>();
  list.forEach((item, i) => {
    const found = originFromPasted(item);
    if (found === undefined) {
      problems.push({ field: `allowed_origins[${i}]`, message: `"${item.trim().slice(0, 80)}" is not a website's address: write it as the browser's address bar shows your shop, like https://www.yourshop.example` });
      return;
    }
    if (found.changed && !origins.has(found.origin)) {
      notes.push(`${item.trim()} is saved as ${found.origin}: the chat works on every page of that site, so only its address is kept.`);
    }
    origins.add(found.origin);
  });
  if (problems.length) throw new AppError('validation_failed', `${problems[0]!.field}: ${problems[0]!.message}.`, problems);
  return { origins: [...origins], notes };
}
