/**
 * The language Twilio's <Say> speaks a sentence in (the sentences themselves are src/ai/phrases.ts, one table for
 * every channel).
 */
import { primaryLanguage } from '../../text/language.ts';

/** A <Say> language for a two-letter code; the voice of the workspace's own language when the primary matches. */
export function sayLanguage(language: string, workspaceLanguage: string): string {
  const primary = primaryLanguage(language);
  if (primaryLanguage(workspaceLanguage) === primary) return workspaceLanguage;
  return ({ en: 'en-US', nl: 'nl-NL', de: 'de-DE', fr: 'fr-FR', es: 'es-ES', it: 'it-IT', pt: 'pt-PT' } as Record<string, string>)[primary] ?? workspaceLanguage;
}
