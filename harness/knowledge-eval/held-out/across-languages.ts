/**
 * HELD OUT. Questions across languages for the knowledge evaluation (issue 36, step 3; docs/performance.md,
 * "Knowledge answers"): the second trade's English pages alone (./second-trade.ts, without their Dutch twins), asked
 * in Dutch and in German. The only answer is on an English page, so the passage must be found across languages;
 * a model is expected to answer in the question's language, and without one the reply carries the English page's fact
 * (`answer` holds the fact as the English page writes it). A few questions no page answers must get "I don't know".
 *
 * Written on 2026-11-28 by a helper session of issue 36, before any change to the search's rules, without reading the
 * search's word lists (thesaurus, query, vocabulary, words) or the tuning set's questions (../shop.ts).
 * Held out: it must never be used to tune the search. Never add a question's words to the search's lists or to these
 * pages to make it pass; a miss here is a figure, not a bug report against this file.
 * Changing a question after a search change voids the figure.
 */
import { question as q, type EvalSet } from '../eval-set.ts';
import { secondTradePages } from './second-trade.ts';

export const acrossLanguagesQuestions = [
  // Dutch questions, English pages.
  q('nl', 'en/phone-repair', 'wat kost een nieuw scherm voor mijn iphone 11', '€89'),
  q('nl', 'en/phone-repair', 'hoeveel kost een nieuwe batterij voor een iphone?', '€69'),
  q('nl', 'en/laptop-repair', 'wat kost een diagnose van mijn laptop', '€35'),
  q('nl', 'en/warranty', 'hoe lang garantie krijg ik op een reparatie?', '6-month', '6 months'),
  q('nl', 'en/shipping', 'wat zijn de verzendkosten naar België?', '€6.95'),
  q('nl', 'en/opening-hours', 'openingstijden donderdag', '21:00'),
  q('nl', 'en/opening-hours', 'waar is jullie winkel in Arnhem', 'Steenstraat 42'),
  q('nl', 'en/payment', 'kan ik met Klarna achteraf betalen', 'pay afterwards'),
  q('nl', 'en/accessories', 'wat kost een screenprotector van gehard glas', '€14.95'),
  q('nl', 'en/data', 'wat kost dataherstel van een kapotte telefoon', '€79'),
  q('nl', null, 'wat kost een nieuw scherm voor een ipad'),
  q('nl', null, 'hebben jullie studentenkorting'),
  q('nl', null, 'repareren jullie ook spelcomputers?'),

  // German questions, English pages.
  q('de', 'en/phone-repair', 'Was kostet ein neues Display für das iPhone 11?', '€89'),
  q('de', 'en/phone-repair', 'Was kostet ein Akkutausch beim iPhone?', '€69'),
  q('de', 'en/laptop-repair', 'Wie viel kostet die Diagnose für meinen Laptop?', '€35'),
  q('de', 'en/warranty', 'Wie lange Garantie gibt es auf eine Reparatur?', '6-month', '6 months'),
  q('de', 'en/shipping', 'Versandkosten nach Belgien?', '€6.95'),
  q('de', 'en/opening-hours', 'Wie lange habt ihr am Donnerstag offen?', '21:00'),
  q('de', 'en/opening-hours', 'Wo ist euer Geschäft in Arnhem?', 'Steenstraat 42'),
  q('de', 'en/payment', 'Kann ich mit PayPal bezahlen?', 'iDEAL'),
  q('de', 'en/accessories', 'Was kostet eine Panzerglas-Schutzfolie?', '€14.95'),
  q('de', 'en/data', 'Was kostet eine Datenrettung?', '€79'),
  q('de', null, 'Was kostet ein neues iPad-Display?'),
  q('de', null, 'Gibt es Studentenrabatt?'),
  q('de', null, 'Repariert ihr auch Spielkonsolen?'),
];

export const acrossLanguagesSet: EvalSet = {
  name: 'across_languages',
  title: 'across languages (Dutch and German questions, English pages only)',
  heldOut: true,
  pages: secondTradePages.filter((p) => p.language === 'en'),
  questions: acrossLanguagesQuestions,
};
