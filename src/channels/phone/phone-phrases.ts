/**
 * The sentences only the phone channel says, by language, with English as the fallback sentence by sentence (the
 * same rule as src/ai/phrases.ts, whose sentences the channel uses for everything else).
 */
import { primaryLanguage } from '../../text/language.ts';

export type PhonePhraseKey = 'unknown_number' | 'goodbye' | 'busy';

const phonePhrases = {
  en: {
    /** The called number belongs to no workspace. */
    unknown_number: 'Sorry, this number cannot take calls right now. Goodbye.',
    /** After a handoff that ends the call without a person (docs/phone.md, TwiML action). */
    goodbye: 'Thank you for calling. Goodbye.',
    /** The engine is at its bound and takes no new call now (docs/operations.md, "Overload"). */
    busy: 'Sorry, we are very busy right now and cannot take your call. Please call again in a few minutes. Goodbye.',
  },
  nl: {
    unknown_number: 'Sorry, dit nummer kan op dit moment geen gesprekken aannemen. Tot ziens.',
    goodbye: 'Bedankt voor uw telefoontje. Tot ziens.',
    busy: 'Sorry, het is op dit moment erg druk en we kunnen uw gesprek niet aannemen. Belt u over een paar minuten nog eens? Tot ziens.',
  },
} as const satisfies { en: Record<PhonePhraseKey, string> } & Record<string, Partial<Record<PhonePhraseKey, string>>>;

export function phonePhrase(key: PhonePhraseKey, language: string): string {
  const table = (phonePhrases as Record<string, Partial<Record<PhonePhraseKey, string>> | undefined>)[primaryLanguage(language)];
  return table?.[key] ?? phonePhrases.en[key];
}

/** A <Say> language for a two-letter code; the voice of the workspace's own language when the primary matches. */
export function sayLanguage(language: string, workspaceLanguage: string): string {
  const primary = primaryLanguage(language);
  if (primaryLanguage(workspaceLanguage) === primary) return workspaceLanguage;
  return ({ en: 'en-US', nl: 'nl-NL', de: 'de-DE', fr: 'fr-FR', es: 'es-ES', it: 'it-IT', pt: 'pt-PT' } as Record<string, string>)[primary] ?? workspaceLanguage;
}
