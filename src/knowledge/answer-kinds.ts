/**
 * What kind of fact a question asks for, and which texts hold one (docs/architecture.md, "Knowledge answers"): "when"
 * wants a time or a day, "how long" a duration, "how much" a price, "where" an address. General rules of English,
 * Dutch and German, the same for every shop; nothing here is a word of one trade.
 *
 * A tie-breaker only: it never makes a passage relevant or a search confident. Among passages of equal score the one
 * holding the kind asked for comes first, and among the sentences of the passages the answerer reads, one holding it is
 * preferred ("how long will the grooming take" is answered by "…usually after two to three hours", not by the prices).
 */
import { words } from '../text/words.ts';

export type AnswerKind = 'time' | 'duration' | 'price' | 'place';

/** Question framings per kind (folded words, src/text/words.ts), in any language: the kinds are asked the same way. */
const FRAMINGS: Readonly<Record<AnswerKind, readonly string[]>> = {
  duration: [
    'how long', 'how many days', 'how many hours', 'how many minutes', 'how many weeks',
    'hoe lang', 'hoelang', 'hoeveel dagen', 'hoeveel uur', 'hoeveel tijd', 'hoeveel weken',
    'wie lange', 'wie lang', 'wie viele tage', 'wie viele stunden', 'wie viel zeit',
  ],
  time: [
    'when', 'what time', 'till what time', 'until when', 'how late', 'what days', 'which days', 'what hours',
    'wanneer', 'hoe laat', 'welke dagen', 'welke dag', 'welke tijden',
    'wann', 'um wie viel uhr', 'wie spat', 'welche tage', 'welchen tagen', 'welche uhrzeit',
  ],
  price: [
    'how much', 'how expensive', 'price', 'prices', 'cost', 'costs', 'fee', 'fees', 'charge',
    'hoeveel kost', 'wat kost', 'hoe duur', 'prijs', 'prijzen', 'kost', 'kosten', 'tarief', 'tarieven',
    'wie viel kostet', 'was kostet', 'wie teuer', 'preis', 'preise', 'kostet', 'kosten', 'gebuhr', 'gebuhren',
  ],
  place: [
    'where', 'address', 'located', 'location', 'how far', 'how do i get',
    'waar', 'adres', 'hoe ver', 'hoe kom ik', 'hoe kom je', 'locatie',
    'wo', 'wohin', 'adresse', 'wie weit', 'wie komme ich', 'wie kommt man', 'standort',
  ],
};

const framings: readonly { kind: AnswerKind; phrase: readonly string[] }[] = Object.entries(FRAMINGS).flatMap(([kind, list]) =>
  list.map((p) => ({ kind: kind as AnswerKind, phrase: words(p) })),
);

/** The kinds of fact a question asks for (usually none or one): "when" also takes a duration ("in two days"). */
export function askedKinds(question: string): ReadonlySet<AnswerKind> {
  const tokens = words(question);
  const out = new Set<AnswerKind>();
  for (let i = 0; i < tokens.length; i++) {
    for (const { kind, phrase } of framings) if (phrase.every((w, k) => tokens[i + k] === w)) out.add(kind);
  }
  if (out.has('time')) out.add('duration');
  return out;
}

const WEEKDAYS = new Set(
  (
    'monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays saturdays sundays weekday weekdays weekend ' +
    'maandag dinsdag woensdag donderdag vrijdag zaterdag zondag maandags dinsdags woensdags donderdags vrijdags zaterdags zondags werkdag werkdagen weekend ' +
    'montag dienstag mittwoch donnerstag freitag samstag sonntag sonnabend montags dienstags mittwochs donnerstags freitags samstags sonntags werktag werktags wochenende'
  ).split(' '),
);
/** Units of a duration (a word ending in one also counts: "werktagen", "werkdagen", "business days"). */
const UNITS = (
  'minute minutes hour hours day days week weeks month months year years ' +
  'minuut minuten uur uren dag dagen week weken maand maanden jaar jaren ' +
  'minute minuten stunde stunden tag tage tagen woche wochen monat monate monaten jahr jahre jahren'
).split(' ');
const NUMBER_WORDS = new Set(
  (
    'one two three four five six seven eight nine ten eleven twelve fourteen fifteen twenty thirty half few couple ' +
    'een twee drie vier vijf zes zeven acht negen tien elf twaalf veertien vijftien twintig dertig half halve paar enkele ' +
    'ein eine einem einen einer zwei drei vier funf sechs sieben acht neun zehn elf zwolf vierzehn funfzehn zwanzig dreissig halbe halben paar wenigen'
  ).split(' '),
);
/** Words between a number and its unit: "two to three hours", "zwei bis drei Stunden", "24 uur van tevoren". */
const UNIT_REACH = 3;

const CLOCK = /\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?(?:am|pm|uhr|uur|h)\b/iu;
const MONEY = /[€$£]|\b(?:eur|euro|euros|cent|cents|dollar|dollars|pound|pounds|franken|chf)\b/iu;
/** A street and number ("Kaldenkerkerweg 212", "Hauptstraße 5", "12 Market Street") or a Dutch or German postcode. */
const ADDRESS =
  /\p{L}(?:straat|weg|laan|plein|gracht|kade|dijk|singel|markt|stra(?:ss|ß)e|str\.|allee|platz|gasse|ring)\s+\d+|\b\d+\s+\p{Lu}\p{L}*\s+(?:street|road|avenue|lane|square)\b|\b\d{4}\s?[A-Z]{2}\b|\b\d{5}\s+\p{Lu}/u;

/** The kinds of fact a text holds. */
export function heldKinds(text: string): ReadonlySet<AnswerKind> {
  const out = new Set<AnswerKind>();
  const tokens = words(text);
  if (CLOCK.test(text) || tokens.some((w) => WEEKDAYS.has(w))) out.add('time');
  if (MONEY.test(text)) out.add('price');
  if (ADDRESS.test(text)) out.add('place');
  for (let i = 0; i < tokens.length && !out.has('duration'); i++) {
    if (!UNITS.some((u) => tokens[i] === u || (tokens[i]!.length > u.length + 2 && tokens[i]!.endsWith(u)))) continue;
    for (let k = Math.max(0, i - UNIT_REACH); k < i; k++) {
      if (/^\d+$/u.test(tokens[k]!) || NUMBER_WORDS.has(tokens[k]!)) out.add('duration');
    }
  }
  return out;
}

/** Whether a text holds a kind of fact the question asks for (false when it asks for none). */
export function holdsAsked(asked: ReadonlySet<AnswerKind>, text: string): boolean {
  if (asked.size === 0) return false;
  for (const kind of heldKinds(text)) if (asked.has(kind)) return true;
  return false;
}
