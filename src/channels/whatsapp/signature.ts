/**
 * Meta's two webhook checks (docs/interfaces.md: Channels → WhatsApp):
 * - the verify handshake: `GET ?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…` answered with the challenge
 *   when the token is ours;
 * - `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body, key = app secret>` on every POST.
 *
 * The HMAC is taken over the bytes as they arrived. Meta escapes non-ASCII as `\uXXXX` in the JSON it signs, so a
 * body that was parsed and serialised again (which would write `ë` as UTF-8) no longer matches.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { secretsEqual } from '../../auth/tokens.ts';

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;
/** Meta's challenge is a number; anything printable up to 256 characters is echoed, nothing else (it is reflected). */
const CHALLENGE = /^[\x21-\x7e]{1,256}$/;

/** The header value Meta would send for `body` (tests, benchmarks). */
export function signWebhookBody(appSecret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`;
}

/** True when `header` is a well-formed `sha256=<hex>` and equals our HMAC of `body`; compared in constant time. */
export function verifyWebhookSignature(appSecret: string, body: Buffer, header: string | undefined): boolean {
  const match = header === undefined ? null : SIGNATURE.exec(header.trim());
  if (!match) return false;
  const given = Buffer.from(match[1]!, 'hex');
  const expected = createHmac('sha256', appSecret).update(body).digest();
  return timingSafeEqual(given, expected);
}

/**
 * The challenge to echo when the handshake is ours, else null. The token comparison is constant-time (over hashes,
 * so the length does not leak either).
 */
export function verifyHandshake(verifyToken: string, query: { mode?: unknown; token?: unknown; challenge?: unknown }): string | null {
  if (query.mode !== 'subscribe' || typeof query.token !== 'string' || typeof query.challenge !== 'string') return null;
  if (!CHALLENGE.test(query.challenge)) return null;
  return secretsEqual(query.token, verifyToken) ? query.challenge : null;
}
