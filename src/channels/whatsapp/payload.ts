/**
 * Reading Meta's webhook payload (WhatsApp Cloud API, `object: whatsapp_business_account`):
 *
 *   entry[].changes[] with field 'messages' and value {
 *     metadata: { display_phone_number, phone_number_id },   ← which business number: which workspace
 *     contacts?: [{ profile: { name }, wa_id }],              ← the customer's profile name (may be absent)
 *     messages?: [{ from, id, timestamp, type, text?: { body } | interactive?: { type: 'button_reply',
 *                   button_reply: { id, title } } | image | audio | location | …, context?: { from, id } }],
 *     statuses?: [{ id, status: sent|delivered|read|failed, timestamp, recipient_id, errors?: [{ code, title }] }],
 *   }
 *
 * The reader is tolerant: one malformed message or status is skipped (and counted), never the whole body, because
 * Meta will not send a corrected one. Fields we do not use are ignored, so new ones Meta adds do not break us. What is
 * read must also be storable, or the write of the whole event fails at every retry: the text follows the outside-text
 * rule (src/text/outside-text.ts), a time is one both databases can hold, an error code one an `integer` can.
 */
import { MAX_NAME_CHARS } from '../../limits.ts';
import { cleanJson } from '../../text/outside-text.ts';
import { describeValue, isObject } from '../../json-value.ts';
import { BotlinkError } from '../../errors.ts';

export interface InboundMessage {
  /** Meta's message id (`wamid.…`): the key that deduplicates Meta's retries. */
  id: string;
  /** The customer's WhatsApp id: their phone number's digits. */
  waId: string;
  /** When the customer sent it (Meta's timestamp). */
  sentAt: Date;
  /** text, image, audio, video, document, sticker, location, contacts, interactive, button, reaction, … */
  type: string;
  /** The text of a `text` message, the title of a tapped reply button; null for every other type. */
  text: string | null;
  /**
   * The id of the reply button the customer tapped (`interactive` of type `button_reply`: the satisfaction question's,
   * src/channels/whatsapp/satisfaction.ts, or any other); null for every other message.
   */
  replyId: string | null;
  /** `contacts[].profile.name` of the sender, cut to protocol §8's 120 characters; null when Meta sent none. */
  profileName: string | null;
}

export type DeliveryStatus = 'sent' | 'delivered' | 'read' | 'failed';

export interface StatusUpdate {
  /** The id of the message we sent (`messages[0].id` of the send answer). */
  messageId: string;
  status: DeliveryStatus;
  at: Date;
  /** For `failed`: Meta's first error. */
  error: { code: number | null; title: string | null } | null;
}

export interface WebhookChange {
  /** The business number the change belongs to (PUT /v1/whatsapp names it). */
  phoneNumberId: string;
  messages: InboundMessage[];
  statuses: StatusUpdate[];
}

export interface ParsedWebhook {
  changes: WebhookChange[];
  /** Parts that could not be read (a message without id, an unknown status, …); logged by the caller. */
  skipped: number;
}

export class WebhookPayloadError extends BotlinkError {
  constructor(message: string) {
    super('webhook_payload', message);
  }
}

const statuses = new Set<string>(['sent', 'delivered', 'read', 'failed']);

function array(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function nonEmptyString(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

/**
 * The last time a timestamp may stand for: the end of year 9999. Past it a Date is written with a six-digit year
 * ('+275760-09-13T…'), which PGlite reads as a time zone and refuses; past year 275760 it is an Invalid Date.
 */
const LATEST_TIMESTAMP_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Meta's timestamps are Unix seconds as a string; a missing or odd one is "now" rather than a lost message. */
function timestamp(value: unknown, now: Date): Date {
  const seconds = typeof value === 'string' ? Number(value) : typeof value === 'number' ? value : Number.NaN;
  return Number.isFinite(seconds) && seconds > 0 && seconds * 1000 <= LATEST_TIMESTAMP_MS ? new Date(seconds * 1000) : now;
}

/** Meta's error codes are small integers; anything else (1.5, 1e400 read as Infinity, past 32 bits) is no code. */
function errorCode(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31 ? value : null;
}

function profileName(value: unknown): string | null {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name === '') return null;
  const chars = Array.from(name);
  return chars.length > MAX_NAME_CHARS ? chars.slice(0, MAX_NAME_CHARS).join('') : name;
}

/** Parses a raw webhook body (UTF-8 JSON). Throws {@link WebhookPayloadError} when it is not Meta's shape at all. */
export function parseWebhook(body: string, now: Date = new Date()): ParsedWebhook {
  let json: unknown;
  try {
    json = cleanJson(JSON.parse(body) as unknown);
  } catch {
    throw new WebhookPayloadError('The body is not JSON.');
  }
  if (!isObject(json)) throw new WebhookPayloadError('The body is not a JSON object.');
  if (json.object !== 'whatsapp_business_account') throw new WebhookPayloadError(`The object is ${describeValue(json.object)}, not whatsapp_business_account.`);

  const changes: WebhookChange[] = [];
  let skipped = 0;
  for (const entry of array(json.entry)) {
    if (!isObject(entry)) {
      skipped++;
      continue;
    }
    for (const change of array(entry.changes)) {
      // Other fields (account_update, message_template_status_update, …) are not conversations.
      if (!isObject(change) || change.field !== 'messages' || !isObject(change.value)) {
        skipped++;
        continue;
      }
      const value = change.value;
      const phoneNumberId = isObject(value.metadata) ? nonEmptyString(value.metadata.phone_number_id) : null;
      if (phoneNumberId === null) {
        skipped++;
        continue;
      }
      const names = new Map<string, string | null>();
      for (const contact of array(value.contacts)) {
        if (!isObject(contact)) continue;
        const waId = nonEmptyString(contact.wa_id);
        if (waId !== null) names.set(waId, profileName(isObject(contact.profile) ? contact.profile.name : undefined));
      }

      const messages: InboundMessage[] = [];
      for (const m of array(value.messages)) {
        const id = isObject(m) ? nonEmptyString(m.id) : null;
        const waId = isObject(m) ? nonEmptyString(m.from) : null;
        const type = isObject(m) ? nonEmptyString(m.type) : null;
        if (!isObject(m) || id === null || waId === null || type === null) {
          skipped++;
          continue;
        }
        const reply = type === 'interactive' && isObject(m.interactive) && m.interactive.type === 'button_reply' && isObject(m.interactive.button_reply) ? m.interactive.button_reply : null;
        const replyId = reply ? nonEmptyString(reply.id) : null;
        const text =
          type === 'text' && isObject(m.text) && typeof m.text.body === 'string' ? m.text.body : replyId !== null && typeof reply?.title === 'string' ? reply.title : null;
        messages.push({ id, waId, sentAt: timestamp(m.timestamp, now), type, text, replyId, profileName: names.get(waId) ?? null });
      }

      const updates: StatusUpdate[] = [];
      for (const s of array(value.statuses)) {
        const messageId = isObject(s) ? nonEmptyString(s.id) : null;
        const status = isObject(s) && typeof s.status === 'string' && statuses.has(s.status) ? (s.status as DeliveryStatus) : null;
        if (!isObject(s) || messageId === null || status === null) {
          skipped++;
          continue;
        }
        const first = array(s.errors)[0];
        const error = status === 'failed'
          ? {
              code: isObject(first) ? errorCode(first.code) : null,
              title: isObject(first) ? nonEmptyString(first.title) ?? nonEmptyString(first.message) : null,
            }
          : null;
        updates.push({ messageId, status, at: timestamp(s.timestamp, now), error });
      }
      changes.push({ phoneNumberId, messages, statuses: updates });
    }
  }
  return { changes, skipped };
}

/** protocol §2.1 customer.phone in E.164: `+` and the wa_id's digits; null when there are none. */
export function e164(waId: string): string | null {
  const digits = waId.replace(/\D/g, '');
  return digits.length === 0 ? null : `+${digits}`;
}
