import { describe, expect, it } from 'vitest';
import { buildChannelRequest, encodeChannelRequest } from '../../src/botlink/channel-request.ts';
import { cutToChars } from '../../src/text/cut.ts';
import { DEFAULT_LANGUAGE, normaliseLanguage } from '../../src/text/language.ts';
import type { ChannelRequestInput } from '../../src/botlink/channel-request.ts';
import { BOTLINK_USER_AGENT, MAX_MESSAGE_CHARS, SIGNATURE_HEADER } from '../../src/limits.ts';
import { verifyChannelRequest } from '../../src/receiver/index.ts';

const KEY = 'test-key-0123456789abcdefghijklmnopqrstuvwxyz';
const NOW = new Date('2025-01-01T00:00:00.999Z');
const NOW_SECONDS = 1735689600;

const input = (over: Partial<ChannelRequestInput> = {}): ChannelRequestInput => ({
  channel: 'whatsapp',
  conversationId: 'wa-42',
  message: 'Where is my order?',
  language: 'nl',
  customerPhone: '+31612345678',
  now: NOW,
  ...over,
});

const codePoints = (s: string): number => Array.from(s).length;

describe('buildChannelRequest (protocol §2.1)', () => {
  it('carries every field of protocol §2.1 in the spec order', () => {
    const request = buildChannelRequest(input());
    expect(request).toEqual({
      channel: 'whatsapp',
      session_id: 'wa-42',
      message: 'Where is my order?',
      language: 'nl',
      customer: { phone: '+31612345678' },
      sent_at: NOW_SECONDS,
    });
    expect(Object.keys(request)).toEqual(['channel', 'session_id', 'message', 'language', 'customer', 'sent_at']);
  });

  it('sets sent_at to whole Unix seconds, rounded down', () => {
    expect(buildChannelRequest(input({ now: new Date(NOW_SECONDS * 1000) })).sent_at).toBe(NOW_SECONDS);
    expect(buildChannelRequest(input({ now: new Date(NOW_SECONDS * 1000 + 999) })).sent_at).toBe(NOW_SECONDS);
    expect(Number.isInteger(buildChannelRequest(input({ now: undefined })).sent_at)).toBe(true);
  });

  it('takes the real clock when no `now` is given', () => {
    const before = Math.floor(Date.now() / 1000);
    const { sent_at } = buildChannelRequest(input({ now: undefined }));
    expect(sent_at).toBeGreaterThanOrEqual(before);
    expect(sent_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('refuses an invalid Date rather than sending sent_at null', () => {
    expect(() => buildChannelRequest(input({ now: new Date(Number.NaN) }))).toThrow(RangeError);
  });

  it.each([
    ['absent', undefined],
    ['null', null],
    ['empty', ''],
    ['blank', '   '],
  ])('sends customer.phone null when the phone is %s', (_name, customerPhone) => {
    const request = buildChannelRequest(input({ customerPhone }));
    expect(request.customer).toEqual({ phone: null });
    expect(JSON.stringify(request)).toContain('"customer":{"phone":null}');
  });

  it('keeps a message of exactly MAX_MESSAGE_CHARS characters whole', () => {
    const message = 'é'.repeat(MAX_MESSAGE_CHARS);
    expect(buildChannelRequest(input({ message })).message).toBe(message);
  });

  it('cuts a longer message to MAX_MESSAGE_CHARS code points, keeping an emoji that straddles the UTF-16 boundary whole', () => {
    // The emoji is code point 2000 but UTF-16 units 1999 and 2000: slice(0, 2000) would split its surrogate pair.
    const message = `${'a'.repeat(MAX_MESSAGE_CHARS - 1)}😀tail`;
    const cut = buildChannelRequest(input({ message })).message;
    expect(codePoints(cut)).toBe(MAX_MESSAGE_CHARS);
    expect(cut.endsWith('😀')).toBe(true);
    expect(cut.isWellFormed()).toBe(true);
  });

  it('drops a grapheme that does not fit whole instead of splitting it (emoji with skin tone)', () => {
    // 👍🏽 is two code points: only the first would fit.
    const message = `${'a'.repeat(MAX_MESSAGE_CHARS - 1)}👍🏽`;
    const cut = buildChannelRequest(input({ message })).message;
    expect(cut).toBe('a'.repeat(MAX_MESSAGE_CHARS - 1));
  });

  it('never splits a surrogate pair, wherever the boundary falls', () => {
    const message = '😀'.repeat(MAX_MESSAGE_CHARS + 10);
    const cut = buildChannelRequest(input({ message })).message;
    expect(cut).toBe('😀'.repeat(MAX_MESSAGE_CHARS));
    expect(cut.length).toBe(2 * MAX_MESSAGE_CHARS);
  });

  it('cuts one grapheme longer than the limit by code points rather than sending nothing', () => {
    const message = `e${'\u0301'.repeat(MAX_MESSAGE_CHARS * 2)}`;
    const cut = buildChannelRequest(input({ message })).message;
    expect(codePoints(cut)).toBe(MAX_MESSAGE_CHARS);
  });

  it('replaces a lone surrogate so the body is valid UTF-8', () => {
    const request = buildChannelRequest(input({ message: 'broken \ud800 text' }));
    expect(request.message).toBe('broken \ufffd text');
  });
});

describe('cutToChars', () => {
  it('leaves shorter text unchanged and cuts plain text exactly', () => {
    expect(cutToChars('hello', 10)).toBe('hello');
    expect(cutToChars('hello', 3)).toBe('hel');
    expect(cutToChars('hello', 0)).toBe('');
  });

  it('keeps a family emoji (ZWJ sequence) whole or not at all', () => {
    const family = '👨‍👩‍👧';
    expect(codePoints(family)).toBe(5);
    expect(cutToChars(`ab${family}`, 6)).toBe('ab');
    expect(cutToChars(`ab${family}c`, 2 + codePoints(family))).toBe(`ab${family}`);
  });
});

describe('normaliseLanguage: a lowercase two-letter code (protocol §2.1)', () => {
  it.each([
    ['nl', 'nl'],
    ['NL', 'nl'],
    ['EN', 'en'],
    ['nl-NL', 'nl'],
    ['en-US', 'en'],
    ['nl_BE', 'nl'],
    ['de_DE.UTF-8', 'de'],
    ['zh-Hant-TW', 'zh'],
    [' fr ', 'fr'],
    ['nld', 'nl'],
    ['deu', 'de'],
    ['iw', 'he'],
    ['tl', 'tl'],
    ['', DEFAULT_LANGUAGE],
    ['   ', DEFAULT_LANGUAGE],
    ['x', DEFAULT_LANGUAGE],
    ['xx', DEFAULT_LANGUAGE],
    ['und', DEFAULT_LANGUAGE],
    ['fil', DEFAULT_LANGUAGE],
    ['*', DEFAULT_LANGUAGE],
    ['12', DEFAULT_LANGUAGE],
    ['english', DEFAULT_LANGUAGE],
    ['-nl', DEFAULT_LANGUAGE],
  ])('%j → %j', (given, expected) => {
    expect(normaliseLanguage(given)).toBe(expected);
  });

  it('falls back to English for a missing language', () => {
    expect(DEFAULT_LANGUAGE).toBe('en');
    expect(normaliseLanguage(undefined)).toBe('en');
    expect(normaliseLanguage(null)).toBe('en');
  });

  it('is applied by buildChannelRequest', () => {
    expect(buildChannelRequest(input({ language: 'nl-NL' })).language).toBe('nl');
    expect(buildChannelRequest(input({ language: 'klingon' })).language).toBe('en');
  });
});

describe('encodeChannelRequest: the exact bytes and headers of protocol §4.1', () => {
  const request = buildChannelRequest(input({ message: 'Grüße 😀 "quoted"' }));
  const { body, headers } = encodeChannelRequest(request, KEY);

  it('sends the JSON of the request, UTF-8 not escaped', () => {
    expect(JSON.parse(body)).toEqual(request);
    expect(body).toContain('Grüße 😀 \\"quoted\\"');
  });

  it('sets Content-Type, User-Agent and X-Service-Signature', () => {
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': BOTLINK_USER_AGENT,
      [SIGNATURE_HEADER]: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(headers['User-Agent']).toBe('Service-BotLink/1.0');
  });

  it('is verified by the receiver kit over the raw UTF-8 bytes', () => {
    const result = verifyChannelRequest(KEY, Buffer.from(body, 'utf8'), headers[SIGNATURE_HEADER], { now: () => NOW.getTime() });
    expect(result).toEqual({ ok: true, sentAt: NOW_SECONDS });
  });

  it('is refused by the receiver kit under another key', () => {
    const result = verifyChannelRequest(`${KEY}-other`, body, headers[SIGNATURE_HEADER], { now: () => NOW.getTime() });
    expect(result).toEqual({ ok: false, reason: 'bad_signature' });
  });
});
