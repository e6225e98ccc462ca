/**
 * What the WhatsApp channel says itself: the answer to a message we cannot read (docs/whatsapp.md, "Messages that are
 * not text"). In the customer's language when the conversation has one, else English.
 */
import { primaryLanguage } from '../../text/language.ts';

export const TEXT_ONLY_NOTICE: Readonly<Record<string, string>> = {
  en: 'I can only read text messages. Could you type your question?',
  nl: 'Ik kan alleen tekstberichten lezen. Kunt u uw vraag typen?',
  de: 'Ich kann nur Textnachrichten lesen. Könnten Sie Ihre Frage bitte eintippen?',
  fr: 'Je ne peux lire que les messages texte. Pourriez-vous écrire votre question ?',
  es: 'Solo puedo leer mensajes de texto. ¿Podría escribir su pregunta?',
};

/**
 * Types that get no answer at all: a reaction (👍 on our reply) is not a question, `system` notes that the customer
 * changed number, `request_welcome` is an empty chat being opened. Answering them "I can only read text" is noise.
 * Every other non-text type (image, audio, video, document, sticker, location, contacts, interactive, button, order,
 * unsupported, and types Meta adds later) gets {@link TEXT_ONLY_NOTICE}.
 */
export const SILENT_TYPES: ReadonlySet<string> = new Set(['reaction', 'system', 'request_welcome']);

export function textOnlyNotice(language: string | null | undefined): string {
  return TEXT_ONLY_NOTICE[primaryLanguage(language ?? 'en')] ?? TEXT_ONLY_NOTICE.en!;
}
