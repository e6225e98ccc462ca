/**
 * The signatures of the Bot Link (protocol §5). HMAC-SHA256 with the shared key, sent as hex in X-Service-Signature.
 *
 * This module is also part of the receiver kit integrators copy (`src/receiver/`), so it imports nothing but
 * node:crypto and the limits.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { BOTLINK_USER_AGENT, GENERATED_KEY_CHARS } from '../limits.ts';

/** The HMAC key: protocol §5.2, the key is used exactly as displayed, as text (UTF-8); it is never hex- or base64-decoded. */
// The key is given as a string (encoded as UTF-8 by Node, protocol §5.2): a Buffer key costs Node 24 two internal
// exceptions per call, which was a fifth of the bot-link client's CPU per request (docs/performance.md).
function hmac(key: string): ReturnType<typeof createHmac> {
  return createHmac('sha256', key);
}

/**
 * A signed bot-link POST (protocol §4.1, §4.4): the JSON body and its headers, the signature headers last. They sign
 * the UTF-8 bytes of `body`: the HTTP client must send this string unchanged (fetch and undici encode strings as
 * UTF-8), never re-serialise the request.
 */
export function signedJsonRequest(body: string, signatureHeaders: Record<string, string>): { body: string; headers: Record<string, string> } {
  return { body, headers: { 'Content-Type': 'application/json', 'User-Agent': BOTLINK_USER_AGENT, ...signatureHeaders } };
}

/** Lowercase hex HMAC-SHA256 of the raw channel body (protocol §5.4: HMAC(key, raw_body)). Strings are hashed as UTF-8. */
export function signChannelBody(key: string, rawBody: string | Buffer): string {
  return hmac(key).update(rawBody).digest('hex');
}

/**
 * Lowercase hex HMAC-SHA256 of `sent_at + '.' + raw_body` for the tools requests (protocol §5.4). For the manifest GET the
 * body is empty, so the signed data is the sent_at followed by a dot.
 *
 * A string `sentAt` is signed exactly as given (a receiver passes the X-Service-Sent-At header as it arrived); a number
 * must be a whole number of seconds, since `String(1.5)` would sign something no receiver accepts (protocol §4.3: decimal
 * Unix seconds).
 */
export function signToolsRequest(key: string, sentAt: number | string, rawBody: string | Buffer): string {
  if (typeof sentAt === 'number' && !(Number.isSafeInteger(sentAt) && sentAt >= 0)) {
    throw new RangeError(`sent_at must be whole Unix seconds, got ${sentAt}`);
  }
  return hmac(key).update(`${sentAt}.`, 'utf8').update(rawBody).digest('hex');
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;

/**
 * Compare two hex signatures in constant time (protocol §5.5.2). protocol §5.1 leaves the case of the hex open, so both
 * cases are accepted: the comparison is on the decoded bytes. A signature of the wrong length or that is not hex is
 * simply unequal; this never throws (the header is attacker-controlled).
 */
export function signaturesEqual(expectedHex: string, givenHex: string): boolean {
  if (typeof expectedHex !== 'string' || typeof givenHex !== 'string') return false;
  if (!HEX.test(expectedHex) || !HEX.test(givenHex)) return false;
  // Only the length is compared in variable time; it is public (always 32 bytes for SHA-256).
  if (expectedHex.length !== givenHex.length) return false;
  return timingSafeEqual(Buffer.from(expectedHex, 'hex'), Buffer.from(givenHex, 'hex'));
}

/**
 * Letters and digits only: a subset of the URL-safe alphabet without `-` and `_`, so that a double click selects the
 * whole key and a key never starts with a dash on a command line (`openssl … -hmac <key>`).
 */
const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Largest multiple of the alphabet size below 256: bytes at or above it are dropped so every character is equally likely. */
const KEY_BYTE_LIMIT = 256 - (256 % KEY_ALPHABET.length);

/**
 * A new key of GENERATED_KEY_CHARS characters (protocol §5.3: 64) from crypto.randomBytes, letters and digits only
 * (about 5.95 bits per character, 381 bits in all). Rejection sampling keeps the distribution uniform.
 */
export function generateKey(): string {
  let key = '';
  while (key.length < GENERATED_KEY_CHARS) {
    for (const byte of randomBytes(GENERATED_KEY_CHARS)) {
      if (byte < KEY_BYTE_LIMIT) key += KEY_ALPHABET[byte % KEY_ALPHABET.length];
      if (key.length === GENERATED_KEY_CHARS) break;
    }
  }
  return key;
}

/** Characters of a key a hint may show, at most. */
const KEY_HINT_CHARS = 4;

/**
 * What the dashboard shows of a stored key (docs/interfaces.md: `key_hint`, never the key): '…' and its last 4 characters.
 * Keys are at least 32 characters (protocol §5.3); should a shorter one ever reach here, the hint shows at most an eighth
 * of it, so a hint never gives a key away.
 */
export function keyHint(key: string): string {
  const chars = Array.from(key);
  const shown = Math.min(KEY_HINT_CHARS, Math.floor(chars.length / 8));
  return `…${chars.slice(chars.length - shown).join('')}`;
}
