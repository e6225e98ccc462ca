/**
 * Twilio's request signature (`X-Twilio-Signature`): base64 of HMAC-SHA1, keyed with the account's auth token, over
 * the full URL Twilio requested, followed for a form POST by every POST parameter as name then value, names sorted
 * (a repeated name contributes each of its values, sorted). The WebSocket upgrade of ConversationRelay is signed the
 * same way over its wss:// URL, with no parameters.
 *
 * The URL is rebuilt from PUBLIC_URL (what Twilio was told to call) plus the path and query as received, because
 * behind a TLS-terminating proxy the request itself no longer shows the scheme and host Twilio used.
 */
import { createHmac } from 'node:crypto';
import { secretsEqual } from '../../auth/tokens.ts';

export type FormParams = Record<string, string | string[] | undefined>;

export function twilioSignature(authToken: string, url: string, params: FormParams = {}): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const value = params[name];
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? [...value].sort() : [value]) data += name + v;
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/**
 * Constant-time check of a signature header; false when it is missing. Twilio signs the URL as it was configured,
 * which may or may not spell out the scheme's default port (`https://host:443/…`, `wss://host:443/…`); like Twilio's
 * own `validateRequest`, both spellings are accepted, each compared in constant time.
 */
export function verifyTwilioSignature(authToken: string, header: string | string[] | undefined, url: string, params?: FormParams): boolean {
  if (typeof header !== 'string' || header.length === 0) return false;
  let ok = false;
  for (const candidate of urlSpellings(url)) ok = secretsEqual(header, twilioSignature(authToken, candidate, params)) || ok;
  return ok;
}

const DEFAULT_PORTS: Record<string, string> = { 'https:': '443', 'wss:': '443', 'http:': '80', 'ws:': '80' };

/** The URL as given, and with its scheme's default port written out (or left out, when it was written). */
export function urlSpellings(url: string): string[] {
  const match = /^([a-z][a-z0-9+.-]*:)\/\/([^/?#:]+)(:\d+)?(.*)$/is.exec(url);
  const port = match ? DEFAULT_PORTS[match[1]!.toLowerCase()] : undefined;
  if (!match || port === undefined) return [url];
  const [, scheme, host, given, rest] = match;
  if (given === undefined) return [url, `${scheme}//${host}:${port}${rest}`];
  if (given === `:${port}`) return [url, `${scheme}//${host}${rest}`];
  return [url];
}

/** The URL Twilio requested for `pathAndQuery` on this service: PUBLIC_URL's origin and base path, then the path. */
export function publicRequestUrl(publicUrl: string, pathAndQuery: string, scheme: 'http' | 'ws'): string {
  const base = publicUrl.replace(/\/+$/, '');
  const url = scheme === 'ws' ? base.replace(/^http/i, 'ws') : base;
  return url + pathAndQuery;
}
