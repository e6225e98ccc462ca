/**
 * The channel request the service POSTs to the integrator's endpoint (spec §2.1, §4.1): built from what a channel
 * heard, then encoded into the exact bytes that are signed and sent.
 */
import { BOTLINK_USER_AGENT, MAX_MESSAGE_CHARS, SIGNATURE_HEADER } from '../limits.ts';
import { signChannelBody } from './signing.ts';

/** spec §2.1: webchat only from the dashboard test button. */
export type Channel = 'phone' | 'whatsapp' | 'webchat';

/** The wire format of spec §2.1; the property order here is the order in the JSON body. */
export interface ChannelRequest {
  channel: Channel;
  session_id: string;
  message: string;
  language: string;
  customer: { phone: string | null };
  sent_at: number;
}

export interface ChannelRequestInput {
  channel: Channel;
  /** The call ID or the WhatsApp conversation ID (spec §2.1). */
  sessionId: string;
  /** What the customer said or wrote; cut to MAX_MESSAGE_CHARS characters. */
  message: string;
  /** Any language tag ('nl-NL', 'EN', 'nl_NL'); normalised by {@link normaliseLanguage}. */
  language: string;
  /** Caller or WhatsApp sender; absent, null or blank becomes null (spec §2.1: null when not known). */
  customerPhone?: string | null;
  /** The clock; default the real one. */
  now?: Date;
}

/**
 * The language sent when the one given is unusable. English, because it is the language an integrator is most likely
 * to answer in when it cannot tell; the spec (§2.1) only asks for a two-letter code and names nl and en.
 */
export const DEFAULT_LANGUAGE = 'en';

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/**
 * A two-letter ISO 639-1 code, lowercase (spec §2.1, §2.4: "two-letter language code").
 *
 * The primary subtag of a BCP 47 or POSIX tag is taken ('nl-NL', 'nl_NL.UTF-8' → 'nl'; 'EN' → 'en'), three-letter
 * codes that have a two-letter form are mapped to it ('nld' → 'nl'), deprecated codes to their current form
 * ('iw' → 'he'), and a code no language has ('xx', 'und', 'fil', '', '*') becomes {@link DEFAULT_LANGUAGE}.
 */
export function normaliseLanguage(tag: string | null | undefined): string {
  if (typeof tag !== 'string') return DEFAULT_LANGUAGE;
  // Intl.Locale and DisplayNames cost ~8 µs a message; a conversation's tags are few, so remember them.
  const known = languageCache.get(tag);
  if (known !== undefined) return known;
  const result = normaliseUncached(tag);
  if (languageCache.size >= LANGUAGE_CACHE_SIZE) languageCache.clear();
  languageCache.set(tag, result);
  return result;
}

const LANGUAGE_CACHE_SIZE = 1_024;
const languageCache = new Map<string, string>();

function normaliseUncached(tag: string): string {
  const primary = tag.trim().split(/[-_.@]/, 1)[0]!.toLowerCase();
  if (!/^[a-z]{2,3}$/.test(primary)) return DEFAULT_LANGUAGE;
  let canonical = primary;
  try {
    canonical = new Intl.Locale(primary).language;
  } catch {
    // Not a well-formed language subtag; fall through with the primary as it is.
  }
  // 'tl' canonicalises to 'fil', which has no two-letter form: then the two-letter code given is the better answer.
  for (const code of [canonical, primary]) {
    if (/^[a-z]{2}$/.test(code) && languageNames.of(code) !== undefined) return code;
  }
  return DEFAULT_LANGUAGE;
}

const graphemes = typeof Intl.Segmenter === 'function' ? new Intl.Segmenter('und', { granularity: 'grapheme' }) : null;

/**
 * `text` cut to at most `max` characters, where a character is a Unicode code point (what the spec's "characters"
 * can mean across languages: an emoji is one, not two UTF-16 units). A surrogate pair is never split, and the cut is
 * made at a grapheme boundary (an emoji with a skin tone or a letter with its accent stays whole or goes whole),
 * except when a single grapheme is itself longer than the room left: then it is cut by code points rather than
 * dropped entirely. Lone surrogates are replaced by U+FFFD so the text encodes to valid UTF-8.
 */
export function cutToChars(text: string, max: number): string {
  const wellFormed = text.toWellFormed();
  // Fast path: no more UTF-16 units than the limit means no more code points either.
  if (wellFormed.length <= max) return wellFormed;
  const codePoints = Array.from(wellFormed);
  if (codePoints.length <= max) return wellFormed;
  if (graphemes === null) return codePoints.slice(0, max).join('');
  let out = '';
  let used = 0;
  for (const { segment } of graphemes.segment(wellFormed)) {
    const size = Array.from(segment).length;
    if (used + size > max) {
      if (size > max) out += Array.from(segment).slice(0, max - used).join('');
      break;
    }
    out += segment;
    used += size;
  }
  return out;
}

/**
 * The channel request of spec §2.1: message cut to MAX_MESSAGE_CHARS (spec §8: 2000 characters, see
 * {@link cutToChars}), language normalised ({@link normaliseLanguage}), sent_at in whole Unix seconds (spec §2.1).
 */
export function buildChannelRequest(input: ChannelRequestInput): ChannelRequest {
  const nowMs = (input.now ?? new Date()).getTime();
  if (!Number.isFinite(nowMs)) throw new RangeError('buildChannelRequest: `now` is an invalid Date');
  const phone = input.customerPhone?.trim();
  return {
    channel: input.channel,
    session_id: input.sessionId,
    message: cutToChars(input.message, MAX_MESSAGE_CHARS),
    language: normaliseLanguage(input.language),
    customer: { phone: phone ? phone : null },
    sent_at: Math.floor(nowMs / 1000),
  };
}

/**
 * The exact body and headers of spec §4.1. The signature is over the UTF-8 bytes of `body`: the HTTP client must send
 * this string unchanged (fetch and undici encode strings as UTF-8), never re-serialise the request.
 */
export function encodeChannelRequest(request: ChannelRequest, key: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(request);
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': BOTLINK_USER_AGENT,
      [SIGNATURE_HEADER]: signChannelBody(key, body),
    },
  };
}
