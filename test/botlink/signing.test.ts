import { describe, expect, it } from 'vitest';
import { generateKey, keyHint, signChannelBody, signaturesEqual, signToolsRequest } from '../../src/botlink/signing.ts';
import { GENERATED_KEY_CHARS, MIN_OWN_KEY_CHARS } from '../../src/limits.ts';

// Known answers computed independently with OpenSSL 3.0, e.g.
//   printf '%s' '<body>' | openssl dgst -sha256 -hmac '<key>'
// over byte-exact files; hex-decoded key: openssl dgst -sha256 -mac HMAC -macopt hexkey:<key>.
const KEY = 'test-key-0123456789abcdefghijklmnopqrstuvwxyz';
const SENT_AT = 1735689600;
const CHANNEL_BODY =
  '{"channel":"phone","session_id":"CA123","message":"Where is my order 1234?","language":"nl","customer":{"phone":"+31612345678"},"sent_at":1735689600}';
const CHANNEL_SIGNATURE = '921c55db63b4c96fa02ab541edb45c534e42cee9db6c342ed10090a0f779ed24';
const TOOL_BODY = '{"tool":"order_status","args":{"order":"1234"},"language":"nl","session_id":"CA123","sent_at":1735689600}';
const TOOL_SIGNATURE = '19ee65dcd45c64c56515d598cc59955de57fcc1cc406dfd342f1458e9dbb34f6';
/** HMAC(KEY, '1735689600.') */
const MANIFEST_SIGNATURE = '96a3d3bfe67ae352c3a9922858fbc289045d499c95d20fec9c795cef2258bfaf';
const HEX_LOOKING_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const PING_BODY = '{"channel":"webchat","session_id":"test","message":"ping","language":"en","customer":{"phone":null},"sent_at":1735689600}';
const PING_SIGNATURE_KEY_AS_TEXT = '0e73d4e29dd9bddbce80ca819dd9eb1cd34eb32df64c092d716ae50498b462d6';
const PING_SIGNATURE_KEY_HEX_DECODED = 'c6104fd85ddc99cff5835fa55d2f5d74ae483b8b94eb1f8fd43409db35213426';
const UTF8_BODY =
  '{"channel":"whatsapp","session_id":"wa-1","message":"Grüße, € 5 — 你好 😀","language":"de","customer":{"phone":null},"sent_at":1735689600}';
const UTF8_SIGNATURE = '25cf92debad6690306e38d9bd560b9b8e1bd0711c43cd578bc7773b496d5791d';
const NON_ASCII_KEY = 'geheime-sleutel-ßü€-0123456789abcdef';
const CHANNEL_SIGNATURE_NON_ASCII_KEY = '365a36bc702831877a8bcd16c5ec74f49c1f071a5419aa546878bd3ce483e8df';

describe('signChannelBody: HMAC-SHA256 of the raw body, lowercase hex (protocol §5.4)', () => {
  it('matches the OpenSSL digest of a channel body', () => {
    expect(signChannelBody(KEY, CHANNEL_BODY)).toBe(CHANNEL_SIGNATURE);
  });

  it('gives the same digest for the body as a Buffer', () => {
    expect(signChannelBody(KEY, Buffer.from(CHANNEL_BODY, 'utf8'))).toBe(CHANNEL_SIGNATURE);
  });

  it('signs the raw UTF-8 bytes of a non-ASCII body', () => {
    expect(signChannelBody(KEY, UTF8_BODY)).toBe(UTF8_SIGNATURE);
    expect(signChannelBody(KEY, Buffer.from(UTF8_BODY, 'utf8'))).toBe(UTF8_SIGNATURE);
  });

  it('uses a key that looks like hex as text, never hex-decoded (protocol §5.2)', () => {
    expect(signChannelBody(HEX_LOOKING_KEY, PING_BODY)).toBe(PING_SIGNATURE_KEY_AS_TEXT);
    expect(signChannelBody(HEX_LOOKING_KEY, PING_BODY)).not.toBe(PING_SIGNATURE_KEY_HEX_DECODED);
  });

  it('uses a non-ASCII key as its UTF-8 bytes', () => {
    expect(signChannelBody(NON_ASCII_KEY, CHANNEL_BODY)).toBe(CHANNEL_SIGNATURE_NON_ASCII_KEY);
  });

  it('changes when one byte of the body changes', () => {
    expect(signChannelBody(KEY, CHANNEL_BODY.replace('1234', '1235'))).not.toBe(CHANNEL_SIGNATURE);
  });
});

describe("signToolsRequest: HMAC of sent_at + '.' + raw body (protocol §5.4)", () => {
  it('matches the OpenSSL digest of a tool call POST', () => {
    expect(signToolsRequest(KEY, SENT_AT, TOOL_BODY)).toBe(TOOL_SIGNATURE);
    expect(signToolsRequest(KEY, String(SENT_AT), Buffer.from(TOOL_BODY))).toBe(TOOL_SIGNATURE);
  });

  it('signs exactly the sent_at followed by a dot for the manifest GET', () => {
    expect(signToolsRequest(KEY, SENT_AT, '')).toBe(MANIFEST_SIGNATURE);
    expect(signToolsRequest(KEY, SENT_AT, Buffer.alloc(0))).toBe(MANIFEST_SIGNATURE);
  });

  it('signs a sent_at string exactly as given (a receiver passes the header unchanged)', () => {
    expect(signToolsRequest(KEY, '01735689600', '')).not.toBe(MANIFEST_SIGNATURE);
  });

  it('refuses a sent_at that is not whole seconds', () => {
    expect(() => signToolsRequest(KEY, 1735689600.5, '')).toThrow(RangeError);
    expect(() => signToolsRequest(KEY, Number.NaN, '')).toThrow(RangeError);
  });
});

describe('signaturesEqual: constant-time comparison of hex signatures (protocol §5.5.2)', () => {
  it('accepts the same signature', () => {
    expect(signaturesEqual(CHANNEL_SIGNATURE, CHANNEL_SIGNATURE)).toBe(true);
  });

  it('accepts upper-case hex, since protocol §5.1 leaves the case open', () => {
    expect(signaturesEqual(CHANNEL_SIGNATURE, CHANNEL_SIGNATURE.toUpperCase())).toBe(true);
    expect(signaturesEqual(CHANNEL_SIGNATURE.toUpperCase(), CHANNEL_SIGNATURE)).toBe(true);
  });

  it('rejects a signature that differs in one digit', () => {
    const flipped = CHANNEL_SIGNATURE.slice(0, -1) + (CHANNEL_SIGNATURE.endsWith('4') ? '5' : '4');
    expect(signaturesEqual(CHANNEL_SIGNATURE, flipped)).toBe(false);
  });

  it.each([
    ['empty', ''],
    ['too short', CHANNEL_SIGNATURE.slice(0, 62)],
    ['too long', `${CHANNEL_SIGNATURE}00`],
    ['odd length', CHANNEL_SIGNATURE.slice(0, 63)],
    ['not hex', 'zz'.repeat(32)],
    ['hex with a prefix', `sha256=${CHANNEL_SIGNATURE}`],
    ['base64 of the digest', Buffer.from(CHANNEL_SIGNATURE, 'hex').toString('base64')],
    ['hex followed by garbage of the same length', `${CHANNEL_SIGNATURE.slice(0, 60)}zzzz`],
    ['surrounded by spaces', ` ${CHANNEL_SIGNATURE} `],
  ])('returns false without throwing for a signature that is %s', (_name, given) => {
    expect(() => signaturesEqual(CHANNEL_SIGNATURE, given)).not.toThrow();
    expect(signaturesEqual(CHANNEL_SIGNATURE, given)).toBe(false);
  });

  it('returns false for values that are not strings (headers are untrusted input)', () => {
    expect(signaturesEqual(CHANNEL_SIGNATURE, undefined as unknown as string)).toBe(false);
    expect(signaturesEqual(CHANNEL_SIGNATURE, ['a'] as unknown as string)).toBe(false);
  });
});

describe('generateKey: 64 random characters (protocol §5.3)', () => {
  it('has GENERATED_KEY_CHARS characters from a URL-safe alphabet', () => {
    const key = generateKey();
    expect(key).toHaveLength(GENERATED_KEY_CHARS);
    expect(key).toMatch(/^[A-Za-z0-9]+$/);
    expect(key.length).toBeGreaterThanOrEqual(MIN_OWN_KEY_CHARS);
  });

  it('never repeats and uses the whole alphabet', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateKey()));
    expect(keys.size).toBe(200);
    const seen = new Set([...keys].join(''));
    // 12 800 characters over 62 symbols: every one appears (each is missed with probability ~1e-89).
    expect(seen.size).toBe(62);
  });
});

describe('keyHint: what the dashboard shows of a key', () => {
  it('shows an ellipsis and the last 4 characters', () => {
    expect(keyHint(KEY)).toBe('…wxyz');
  });

  it('never shows more than 4 characters of the key', () => {
    const key = generateKey();
    const hint = keyHint(key);
    expect(hint.replace('…', '')).toHaveLength(4);
    expect(key.endsWith(hint.slice(1))).toBe(true);
  });

  it('gives a short key away even less (at most an eighth of it)', () => {
    expect(keyHint('abcd')).toBe('…');
    expect(keyHint('0123456789abcdef')).toBe('…ef');
  });

  it('does not split a character of a non-ASCII key', () => {
    expect(keyHint(`${'x'.repeat(40)}ab😀c`)).toBe('…ab😀c');
  });
});
