/**
 * Which WhatsApp message types get no answer at all (docs/whatsapp.md, "Messages that are not text").
 */

/**
 * Types that get no answer at all: a reaction (👍 on our reply) is not a question, `system` notes that the customer
 * changed number, `request_welcome` is an empty chat being opened. Answering them "I can only read text" is noise.
 * Every other non-text type (image, audio, video, document, sticker, location, contacts, interactive, button, order,
 * unsupported, and types Meta adds later) gets the `text_only` sentence (src/ai/phrases.ts), but a tap on a reply
 * button, which is the satisfaction question's answer or nothing (src/channels/whatsapp/satisfaction.ts).
 */
export const SILENT_TYPES: ReadonlySet<string> = new Set(['reaction', 'system', 'request_welcome']);
