/**
 * Words customers use for what a shop's pages say in other words (docs/architecture.md, "Knowledge answers"): each
 * group is one meaning, a customer's word or phrase from a group also finds the others. English, Dutch and German (the
 * same meanings), the languages of the service's shops; folded as src/text/words.ts folds (lowercase, no accents).
 * General synonyms come from the lexicon (src/knowledge/lexicon/) and count less; this is shop talk only.
 *
 * A group holds words of one meaning in shop talk, not every related word: "discount" is not "sale" (a question about
 * a student discount must not be answered with the sale's return rule). Multi-word entries are phrases: "send back"
 * is found only as those words in that order, and finds a page that has both words.
 */

export type Thesaurus = readonly (readonly string[])[];

const english: Thesaurus = [
  ['return', 'returns', 'returning', 'send back', 'sent back', 'bring back', 'take back', 'returned'],
  ['refund', 'refunds', 'refunded', 'money back', 'reimburse', 'reimbursement', 'repay', 'pay back'],
  ['shipping', 'ship', 'ships', 'shipped', 'shipment', 'delivery', 'deliver', 'delivers', 'delivered', 'postage', 'dispatch', 'dispatched', 'arrive', 'arrives', 'arrival'],
  ['cost', 'costs', 'price', 'prices', 'fee', 'fees', 'charge', 'charges'],
  ['bike', 'bikes', 'bicycle', 'bicycles', 'cycle'],
  ['order', 'orders', 'ordered', 'ordering'],
  ['free', 'free of charge', 'no charge', 'nothing'],
  ['tracking', 'track', 'trace', 'track and trace', 'tracking code', 'tracking number', 'tracking link'],
  ['warranty', 'guarantee', 'guaranty', 'warrantee', 'covered'],
  ['gift card', 'gift cards', 'giftcard', 'giftcards', 'gift voucher', 'voucher', 'vouchers', 'gift certificate'],
  ['open', 'opening', 'opened', 'opening hours', 'opening times', 'business hours', 'hours', 'closed', 'close', 'closing'],
  ['shop', 'store', 'showroom'],
  ['pay', 'paying', 'payment', 'payments', 'paid', 'checkout'],
  ['instalments', 'installments', 'instalment', 'installment', 'pay later', 'pay afterwards', 'buy now pay later', 'klarna'],
  ['invoice', 'bill', 'billing', 'on account'],
  ['credit card', 'credit cards', 'creditcard', 'visa', 'mastercard'],
  ['debit card', 'pin', 'bank card'],
  ['receipt', 'proof of purchase'],
  ['broke', 'broken', 'break', 'breaks', 'defect', 'defects', 'defective', 'faulty', 'damaged'],
  ['tyres', 'tires', 'tyre', 'tire'],
  ['customer service', 'support', 'helpdesk', 'call', 'phone'],
  ['company', 'business', 'businesses'],
  ['expire', 'expires', 'expiry', 'valid', 'validity'],
  ['buy', 'buying', 'purchase', 'bought'],
  ['exchange', 'swap'],
  ['sale', 'sales'],
  ['late', 'evening', 'until'],
  ['weekday', 'weekdays', 'working day', 'working days'],
];

const dutch: Thesaurus = [
  ['retourneren', 'retour', 'retourneer', 'terugsturen', 'terug sturen', 'terugbrengen', 'terugzenden', 'retourzending', 'retourtje'],
  ['terugbetalen', 'terugbetaling', 'geld terug', 'betalen terug', 'terugkrijgen', 'terug krijgen'],
  ['verzending', 'verzenden', 'versturen', 'verstuurd', 'bezorging', 'bezorgen', 'bezorgd', 'bezorgtijd', 'levering', 'leveren', 'geleverd', 'levertijd', 'pakket', 'pakketje', 'verzendtijd'],
  ['kosten', 'kost', 'prijs', 'tarief'],
  ['fiets', 'fietsen', 'rijwiel'],
  ['bestelling', 'bestellingen', 'bestellen', 'besteld', 'bestel'],
  ['gratis', 'kosteloos', 'niets'],
  ['track en trace', 'track and trace', 'volgen', 'trackingcode', 'tracking'],
  ['garantie', 'waarborg', 'gedekt'],
  ['cadeaubon', 'cadeaubonnen', 'cadeaukaart', 'kadobon', 'kadokaart', 'waardebon', 'tegoedbon', 'giftcard'],
  ['open', 'geopend', 'openingstijden', 'openingstijd', 'openingsuren', 'dicht', 'gesloten', 'sluiten'],
  ['winkel', 'zaak'],
  ['betalen', 'betaal', 'betaling', 'betaalmethode', 'betaalmethoden', 'betaalmogelijkheden', 'afrekenen'],
  ['termijnen', 'achteraf betalen', 'gespreid betalen', 'klarna'],
  ['factuur', 'rekening'],
  ['creditcard', 'visa', 'mastercard'],
  ['pinnen', 'pinpas', 'betaalpas', 'pin'],
  ['contant', 'cash'],
  ['aankoopbewijs', 'bon', 'bonnetje', 'kassabon'],
  ['kapot', 'stuk', 'defect', 'gebroken', 'breekt', 'fabricagefout', 'fabricagefouten'],
  ['koopavond', 'donderdagavond'],
  ['klantenservice', 'bellen', 'telefonisch', 'bereikbaar'],
  ['bedrijf', 'zakelijk', 'zakelijke'],
  ['geldig', 'verloopt', 'verlopen', 'houdbaar', 'geldigheid'],
  ['saldo', 'tegoed'],
  ['kopen', 'koop', 'aanschaffen'],
  ['ruilen', 'omruilen'],
  ['uitverkoop', 'uitverkoopartikelen', 'sale'],
];

/** The same meanings in German shop talk (written with umlauts; folded as questions are). */
const german: Thesaurus = [
  ['rückgabe', 'zurückgeben', 'zurückschicken', 'zurücksenden', 'retoure', 'retournieren', 'rücksendung'],
  ['erstattung', 'erstatten', 'zurückerstatten', 'rückerstattung', 'geld zurück', 'zurückzahlen', 'rückzahlung'],
  ['versand', 'versenden', 'verschicken', 'lieferung', 'liefern', 'geliefert', 'lieferzeit', 'zustellung', 'zustellen', 'paket', 'päckchen', 'porto', 'ankommen', 'versandzeit'],
  ['kosten', 'kostet', 'preis', 'preise', 'gebühr', 'gebühren'],
  ['fahrrad', 'fahrräder', 'rad', 'räder', 'velo'],
  ['bestellung', 'bestellungen', 'bestellen', 'bestellt'],
  ['kostenlos', 'gratis', 'umsonst', 'versandkostenfrei'],
  ['sendungsverfolgung', 'sendungsnummer', 'trackingnummer', 'tracking', 'verfolgen', 'track and trace'],
  ['garantie', 'gewährleistung', 'abgedeckt'],
  ['gutschein', 'gutscheine', 'geschenkgutschein', 'geschenkkarte', 'giftcard'],
  ['öffnungszeiten', 'geöffnet', 'offen', 'öffnen', 'geschlossen', 'schließen', 'schliessen', 'ladenöffnungszeiten'],
  ['geschäft', 'laden', 'filiale', 'shop'],
  ['bezahlen', 'zahlen', 'zahlung', 'bezahlung', 'zahlungsarten', 'zahlungsmethoden', 'zahlungsmöglichkeiten', 'kasse'],
  ['ratenzahlung', 'raten', 'später bezahlen', 'klarna'],
  ['rechnung', 'auf rechnung'],
  ['kreditkarte', 'visa', 'mastercard'],
  ['ec karte', 'girocard', 'bankkarte'],
  ['bar', 'bargeld', 'cash'],
  ['kassenbon', 'kaufbeleg', 'quittung', 'beleg'],
  ['kaputt', 'defekt', 'gebrochen', 'beschädigt', 'schaden', 'mangel'],
  ['kundenservice', 'kundendienst', 'anrufen', 'telefonisch', 'erreichbar'],
  ['firma', 'unternehmen', 'geschäftskunden', 'gewerblich'],
  ['gültig', 'gültigkeit', 'verfällt', 'ablaufen', 'läuft ab'],
  ['kaufen', 'kauf', 'gekauft', 'erwerben'],
  ['umtauschen', 'umtausch', 'tauschen'],
  ['reparatur', 'reparieren', 'repariert', 'werkstatt'],
];

/**
 * Phrases that set the scene of a question rather than say what it asks ("I ordered last week, when …"): skipped like
 * stopwords. Any language's apply: customers mix English and Dutch.
 */
export const SCENE_PHRASES: readonly string[] = [
  'last week', 'last month', 'a week ago', 'days ago', 'a few days ago', 'yesterday', 'the day before yesterday',
  'vorige week', 'afgelopen week', 'vorige maand', 'een week geleden', 'dagen geleden', 'paar dagen geleden', 'gisteren', 'eergisteren',
  'letzte woche', 'letzten monat', 'vor einer woche', 'vor ein paar tagen', 'gestern', 'vorgestern',
  // Greetings of the time of day: politeness, not the question.
  'good morning', 'good afternoon', 'good evening', 'kind regards', 'best regards', 'many thanks', 'thank you',
  'dank je', 'dank je wel', 'dank u', 'dank u wel', 'met vriendelijke groet', 'fijne dag',
  'guten morgen', 'guten tag', 'guten abend', 'vielen dank', 'viele grüße', 'schöne grüße', 'mit freundlichen grüßen',
  'bonne journee',
];

/** The thesaurus of a primary language subtag; other languages have none (their words still find themselves). */
export function thesaurusFor(language: string): Thesaurus {
  if (language === 'nl') return dutch;
  if (language === 'en') return english;
  if (language === 'de') return german;
  return [];
}
