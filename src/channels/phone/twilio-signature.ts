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

/** Constant-time check of a signature header; false when it is missing. */
export function verifyTwilioSignature(authToken: string, header: string | string[] | undefined, url: string, params?: FormParams): boolean {
  if (typeof header !== 'string' || header.length === 0) return false;
  return secretsEqual(header, twilioSignature(authToken, url, params));
}

/** The URL Twilio requested for `pathAndQuery` on this service: PUBLIC_URL's origin and base path, then the path. */
export function publicRequestUrl(publicUrl: string, pathAndQuery: string, scheme: 'http' | 'ws'): string {
  const base = publicUrl.replace(/\/+$/, '');
  const url = scheme === 'ws' ? base.replace(/^http/i, 'ws') : base;
  return url + pathAndQuery;
}
