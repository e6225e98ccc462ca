/**
 * Verifying a request from the service, on the integrator's side (protocol §5.5). Pure functions over the raw bytes and
 * the header values, for any HTTP framework; the Express middleware in ./express.ts is built on them.
 */
import { MAX_CLOCK_SKEW_SECONDS, MIN_OWN_KEY_CHARS } from '../limits.ts';
import { signChannelBody, signaturesEqual, signToolsRequest } from '../botlink/signing.ts';

/** Why a request was refused. Every one of them is answered with 401 and no content (protocol §5.5.4). */
export type VerifyFailure = 'missing_signature' | 'bad_signature' | 'missing_sent_at' | 'bad_sent_at' | 'stale' | 'invalid_json';

/** `sentAt`: the request's verified Unix seconds, when the request is genuine. */
export type VerifyResult = { ok: true; sentAt: number } | { ok: false; reason: VerifyFailure };

export interface VerifyOptions {
  /** The receiver's clock in milliseconds since the epoch; default Date.now. */
  now?: () => number;
  /** How far sent_at may be from the clock, either way, in seconds; default 300 (protocol §5.5.3, §8: 5 minutes). */
  maxSkewSeconds?: number;
}

/** protocol §4.3: "decimal Unix seconds": digits only, no sign, no fraction, no exponent, no spaces; 15 digits stay exact. */
const SENT_AT_HEADER_PATTERN = /^[0-9]{1,15}$/;

/**
 * A missing key would make every request's signature checkable by anyone (HMAC with an empty key is still an HMAC):
 * fail loudly at start instead. protocol §5.3: every key the service accepts has at least 32 characters.
 */
export function assertKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || Array.from(key).length < MIN_OWN_KEY_CHARS) {
    throw new TypeError(
      `The Bot Link key must be the key shown in the dashboard (at least ${MIN_OWN_KEY_CHARS} characters); ` +
        'is the environment variable that holds it set?',
    );
  }
}

function fresh(sentAt: number, options: VerifyOptions | undefined): boolean {
  const nowSeconds = Math.floor((options?.now ?? Date.now)() / 1000);
  return Math.abs(nowSeconds - sentAt) <= (options?.maxSkewSeconds ?? MAX_CLOCK_SKEW_SECONDS);
}

/** The channel request's verdict, and its parsed body when genuine (so the middleware parses it once). */
export function checkChannelRequest(
  key: string,
  rawBody: Buffer | string,
  signatureHeader: string | undefined,
  options?: VerifyOptions,
): { ok: true; sentAt: number; body: Record<string, unknown> } | { ok: false; reason: VerifyFailure } {
  assertKey(key);
  if (!signatureHeader) return { ok: false, reason: 'missing_signature' };
  // protocol §5.5.1: the HMAC over the bytes as received, before anything parses them.
  if (!signaturesEqual(signChannelBody(key, rawBody), signatureHeader)) return { ok: false, reason: 'bad_signature' };
  let body: unknown;
  try {
    body = JSON.parse(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8'));
  } catch {
    return { ok: false, reason: 'invalid_json' };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, reason: 'invalid_json' };
  const record = body as Record<string, unknown>;
  // protocol §5.4: for the channel message the time is sent_at inside the (signed) body.
  const sentAt = Object.hasOwn(record, 'sent_at') ? record.sent_at : undefined;
  if (sentAt === undefined || sentAt === null) return { ok: false, reason: 'missing_sent_at' };
  if (typeof sentAt !== 'number' || !Number.isSafeInteger(sentAt)) return { ok: false, reason: 'bad_sent_at' };
  if (!fresh(sentAt, options)) return { ok: false, reason: 'stale' };
  return { ok: true, sentAt, body: record };
}

/**
 * Verify a channel message (protocol §5.4, §5.5): the X-Service-Signature header against the HMAC of the raw body, in
 * constant time, either hex case; then sent_at from the JSON body, an integer within `maxSkewSeconds` of the clock.
 */
export function verifyChannelRequest(
  key: string,
  rawBody: Buffer | string,
  signatureHeader: string | undefined,
  options?: VerifyOptions,
): VerifyResult {
  const result = checkChannelRequest(key, rawBody, signatureHeader, options);
  return result.ok ? { ok: true, sentAt: result.sentAt } : result;
}

/**
 * Verify a tools request, the manifest GET (empty body) or a tool call POST (protocol §5.4, §5.5): the X-Service-Sent-At
 * header is required and is decimal seconds only; the signature is over `sent_at + '.' + raw body`, with sent_at
 * exactly as it arrived in the header; then the skew check.
 */
export function verifyToolsRequest(
  key: string,
  rawBody: Buffer | string,
  sentAtHeader: string | undefined,
  signatureHeader: string | undefined,
  options?: VerifyOptions,
): VerifyResult {
  assertKey(key);
  if (!signatureHeader) return { ok: false, reason: 'missing_signature' };
  if (!sentAtHeader) return { ok: false, reason: 'missing_sent_at' };
  if (!SENT_AT_HEADER_PATTERN.test(sentAtHeader)) return { ok: false, reason: 'bad_sent_at' };
  if (!signaturesEqual(signToolsRequest(key, sentAtHeader, rawBody), signatureHeader)) {
    return { ok: false, reason: 'bad_signature' };
  }
  const sentAt = Number(sentAtHeader);
  if (!fresh(sentAt, options)) return { ok: false, reason: 'stale' };
  return { ok: true, sentAt };
}
