/** Language tags as the Bot Link sends them: a two-letter code, whatever tag a channel heard (docs/integrators.md). */

/**
 * The language sent when the one given is unusable. English, because it is the language an integrator is most likely
 * to answer in when it cannot tell; protocol §2.1 only asks for a two-letter code and names nl and en.
 */
export const DEFAULT_LANGUAGE = 'en';

/**
 * The primary subtag, lowercase, when it looks like a language code (two or three letters): 'nl-NL', 'NL', 'nl_BE',
 * 'nl_NL.UTF-8' → 'nl'; '' when there is none ('', '*', '12'). Unlike {@link normaliseLanguage} it keeps codes without
 * a two-letter form and does not default: it picks a phrase table or a search configuration, each with its own fallback.
 */
export function primaryLanguage(tag: string | null | undefined): string {
  const primary = tag?.trim().split(/[-_.@]/, 1)[0]?.toLowerCase() ?? '';
  return /^[a-z]{2,3}$/.test(primary) ? primary : '';
}

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/**
 * A two-letter ISO 639-1 code, lowercase (protocol §2.1, §2.4: "two-letter language code").
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
