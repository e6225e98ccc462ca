/**
 * The channel request the service POSTs to the integrator's endpoint (protocol §2.1, §4.1): built from what a channel
 * heard, then encoded into the exact bytes that are signed and sent.
 */
import { MAX_MESSAGE_CHARS, SIGNATURE_HEADER } from '../limits.ts';
import { cutToChars } from '../text/cut.ts';
import { normaliseLanguage } from '../text/language.ts';
import type { Channel } from '../channels-and-handoffs.ts';
import { signChannelBody, signedJsonRequest } from './signing.ts';


/** The wire format of protocol §2.1; the property order here is the order in the JSON body. */
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
  /** The conversation's id on its channel, the call ID or the WhatsApp conversation ID: the wire's `session_id` (protocol §2.1). */
  conversationId: string;
  /** What the customer said or wrote; cut to MAX_MESSAGE_CHARS characters. */
  message: string;
  /** Any language tag ('nl-NL', 'EN', 'nl_NL'); normalised by {@link normaliseLanguage}. */
  language: string;
  /** Caller or WhatsApp sender; absent, null or blank becomes null (protocol §2.1: null when not known). */
  customerPhone?: string | null;
  /** The clock; default the real one. */
  now?: Date;
}


/**
 * The channel request of protocol §2.1: message cut to MAX_MESSAGE_CHARS (protocol §8: 2000 characters, see
 * {@link cutToChars}), language normalised ({@link normaliseLanguage}), sent_at in whole Unix seconds (protocol §2.1).
 */
export function buildChannelRequest(input: ChannelRequestInput): ChannelRequest {
  const nowMs = (input.now ?? new Date()).getTime();
  if (!Number.isFinite(nowMs)) throw new RangeError('buildChannelRequest: `now` is an invalid Date');
  const phone = input.customerPhone?.trim();
  return {
    channel: input.channel,
    session_id: input.conversationId,
    message: cutToChars(input.message, MAX_MESSAGE_CHARS),
    language: normaliseLanguage(input.language),
    customer: { phone: phone ? phone : null },
    sent_at: Math.floor(nowMs / 1000),
  };
}

/**
 * The exact body and headers of protocol §4.1. The signature is over the UTF-8 bytes of `body`: the HTTP client must send
 * this string unchanged (fetch and undici encode strings as UTF-8), never re-serialise the request.
 */
export function encodeChannelRequest(request: ChannelRequest, key: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(request);
  return signedJsonRequest(body, { [SIGNATURE_HEADER]: signChannelBody(key, body) });
}
