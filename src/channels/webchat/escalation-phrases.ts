/**
 * Detecting that a visitor asks for a person in their own words (protocol §6 escalation, type `detected`). A small,
 * fixed phrase list per language, matched as whole words: "human" matches "a human please" but not "humane", and
 * "medewerker" matches "een medewerker spreken" but not "medewerkerstevredenheid".
 *
 * The list favours recall over precision on purpose: a missed request leaves a visitor who wanted a person alone with
 * the bot, while a false hit costs one webhook, and at most one per conversation (docs/webchat.md). Every list is
 * tried whatever the conversation's language, because visitors switch languages freely.
 */

/** The phrases, lowercase and without accents (the text is normalised the same way before matching). */
export const ESCALATION_PHRASES = {
  en: [
    'human',
    'humans',
    'real person',
    'live person',
    'actual person',
    'live agent',
    'human agent',
    'real agent',
    'speak to a person',
    'talk to a person',
    'speak with a person',
    'talk with a person',
    'chat with a person',
    'speak to someone',
    'talk to someone',
    'speak with someone',
    'talk with someone',
    'speak to somebody',
    'talk to somebody',
    'speak to an agent',
    'talk to an agent',
    'speak to a representative',
    'talk to a representative',
    'speak to the team',
    'talk to the team',
  ],
  nl: [
    'medewerker',
    'medewerkers',
    'mens spreken',
    'met een mens',
    'echt mens',
    'echte mens',
    'echt persoon',
    'echte persoon',
    'persoon spreken',
    'iemand spreken',
    'iemand te spreken',
    'met iemand praten',
    'met iemand spreken',
    'met een persoon',
    'collega spreken',
    'iemand aan de lijn',
    'iemand van het team',
    'iemand van de klantenservice',
    'doorverbinden',
    'doorverbonden',
  ],
} as const satisfies Record<string, readonly string[]>;

/** Lowercase, accents removed, typographic apostrophes made plain, runs of white space made one space. */
export function normaliseForMatching(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[\u2018\u2019\u0060\u00b4]/g, "'")
    .replace(/\s+/g, ' ');
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * One expression for every phrase. JavaScript's `\b` knows ASCII letters only, so the word boundary is written as
 * "no letter or digit of any script" on either side; a space inside a phrase stands for any white space.
 */
const PATTERN = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:${Object.values(ESCALATION_PHRASES)
    .flat()
    .map((p) => escape(normaliseForMatching(p)).replaceAll(' ', '\\s+'))
    .join('|')})(?![\\p{L}\\p{N}])`,
  'u',
);

/** Whether the visitor's text asks for a person (any language of {@link ESCALATION_PHRASES}). */
export function asksForPerson(text: string): boolean {
  return PATTERN.test(normaliseForMatching(text));
}
