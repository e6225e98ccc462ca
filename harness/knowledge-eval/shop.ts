/**
 * The knowledge evaluation's shop (docs/performance.md, "Knowledge answers"): six pages of a small bicycle and outdoor
 * shop (shipping, returns, opening hours, payment, warranty, gift cards), each in English and in Dutch, and customer
 * questions worded the way customers write: other words than the page ("send something back" for returns, "postage"
 * for shipping costs), typos, no capitals. Each answerable question names its page and the words that carry the
 * answer (`answer`: the reply must contain one of them); the unanswerable ones must get "I don't know".
 *
 * Written for the evaluation and kept apart from the search's own fixtures (test/knowledge/fixtures.ts), so tuning on
 * one is checked on the other. Never tune on a question by adding its words to a page: change the search.
 */
import type { SyncUpsertItem } from '../../src/knowledge/knowledge-service.ts';

export type EvalLanguage = 'en' | 'nl';

export interface EvalQuestion {
  language: EvalLanguage;
  text: string;
  /** The page that answers it (external_id), or null when no page does. */
  page: string | null;
  /** The reply carries the answer when it contains one of these (case and spaces folded). */
  answer: string[];
}

const page = (external_id: string, language: EvalLanguage, title: string, paragraphs: string[]): SyncUpsertItem => ({
  kind: 'page',
  external_id,
  language,
  title,
  url: `https://trailshop.example/${external_id}`,
  body: paragraphs.join('\n\n'),
});

export const evalPages: SyncUpsertItem[] = [
  page('en/shipping', 'en', 'Shipping and delivery', [
    'Orders placed on a working day before 4 pm are shipped the same day with PostNL. Delivery in the Netherlands takes one to two working days; delivery to Belgium and Germany takes two to four working days. We do not ship outside the European Union.',
    'Shipping costs are €4.95 per order within the Netherlands and €7.95 to Belgium and Germany. Orders of €50 or more are shipped free of charge within the Netherlands. As soon as your parcel leaves our warehouse you receive an email with a track and trace link.',
  ]),
  page('en/returns', 'en', 'Returns and refunds', [
    'You can return any item within 30 days of receiving it, unused and in its original packaging. To start a return, fill in the return form in your account; we email you a prepaid return label.',
    'We refund the purchase price within 14 days after we receive the item, to the account you paid with. Return shipping is free for orders within the Netherlands. Sale items can be exchanged but not refunded.',
  ]),
  page('en/opening-hours', 'en', 'Opening hours', [
    'Our shop in Utrecht is open Tuesday to Friday from 9:00 to 18:00 and on Saturday from 10:00 to 17:00. On Thursday evening we are open until 21:00.',
    'The shop is closed on Sunday and Monday and on public holidays. Customer service answers the phone on weekdays from 9:00 to 17:00.',
  ]),
  page('en/payment', 'en', 'Payment methods', [
    'You can pay with iDEAL, credit card (Visa and Mastercard), PayPal and Bancontact. Business customers can also pay by invoice within 30 days.',
    'You pay at checkout, and your order is only shipped after the payment has been received. In the shop you can pay by debit card or in cash. Paying in instalments with Klarna is possible for orders above €100.',
  ]),
  page('en/warranty', 'en', 'Warranty', [
    'All our products come with a two-year warranty against manufacturing defects. On bicycle frames the warranty is ten years.',
    'Wear and tear, such as worn tyres, brake pads and chains, is not covered by the warranty, and neither is damage caused by an accident or misuse. To make a warranty claim, send us a photo of the defect together with your order number; keep your receipt, because you need it for every claim.',
  ]),
  page('en/gift-cards', 'en', 'Gift cards', [
    'Gift cards are available from €10 to €250 and can be bought online or in the shop. A gift card is valid for two years from the date of purchase.',
    'You can use a gift card for purchases in our webshop and in the shop, also in combination with another payment method. A gift card cannot be exchanged for cash. Check the balance of your gift card on the gift card page with its code.',
  ]),
  page('nl/verzending', 'nl', 'Verzending en levering', [
    'Bestellingen die je op een werkdag vóór 16:00 plaatst, versturen we dezelfde dag nog met PostNL. De levering binnen Nederland duurt een tot twee werkdagen; naar België en Duitsland duurt het twee tot vier werkdagen. Buiten de Europese Unie verzenden we niet.',
    'De verzendkosten zijn € 4,95 per bestelling binnen Nederland en € 7,95 naar België en Duitsland. Bestellingen vanaf € 50 verzenden we gratis binnen Nederland. Zodra je pakket ons magazijn verlaat, krijg je een e-mail met een track-and-tracelink.',
  ]),
  page('nl/retourneren', 'nl', 'Retourneren en terugbetalen', [
    'Je kunt elk artikel binnen 30 dagen na ontvangst retourneren, ongebruikt en in de originele verpakking. Vul het retourformulier in je account in; we mailen je dan een gratis retourlabel.',
    'We betalen het aankoopbedrag binnen 14 dagen na ontvangst van het artikel terug op de rekening waarmee je hebt betaald. Het terugsturen is gratis binnen Nederland. Uitverkoopartikelen kun je ruilen, maar die betalen we niet terug.',
  ]),
  page('nl/openingstijden', 'nl', 'Openingstijden', [
    'Onze winkel in Utrecht is open van dinsdag tot en met vrijdag van 9:00 tot 18:00 en op zaterdag van 10:00 tot 17:00. Op donderdagavond zijn we open tot 21:00.',
    'Op zondag, maandag en feestdagen is de winkel gesloten. De klantenservice is op werkdagen telefonisch bereikbaar van 9:00 tot 17:00.',
  ]),
  page('nl/betalen', 'nl', 'Betaalmethoden', [
    'Je kunt betalen met iDEAL, creditcard (Visa en Mastercard), PayPal en Bancontact. Zakelijke klanten kunnen ook op rekening betalen, binnen 30 dagen.',
    'Je betaalt bij het afrekenen, en we versturen je bestelling pas als de betaling binnen is. In de winkel kun je pinnen of contant betalen. Achteraf betalen in termijnen met Klarna kan bij bestellingen boven € 100.',
  ]),
  page('nl/garantie', 'nl', 'Garantie', [
    'Op al onze producten zit twee jaar garantie op fabricagefouten. Op fietsframes is de garantie tien jaar.',
    'Slijtage, zoals versleten banden, remblokken en kettingen, valt niet onder de garantie, net als schade door een ongeluk of verkeerd gebruik. Wil je een beroep doen op de garantie, stuur ons dan een foto van het defect met je bestelnummer; bewaar je aankoopbewijs, want dat heb je bij elke claim nodig.',
  ]),
  page('nl/cadeaubonnen', 'nl', 'Cadeaubonnen', [
    'Cadeaubonnen zijn er van € 10 tot € 250 en koop je online of in de winkel. Een cadeaubon is twee jaar geldig vanaf de aankoopdatum.',
    'Je kunt een cadeaubon gebruiken in onze webshop en in de winkel, ook samen met een andere betaalmethode. Een cadeaubon kun je niet inwisselen voor geld. Het saldo van je cadeaubon bekijk je op de cadeaubonpagina met de code.',
  ]),
];

const q = (language: EvalLanguage, pageId: string | null, text: string, ...answer: string[]): EvalQuestion => ({ language, text, page: pageId, answer });

export const evalQuestions: EvalQuestion[] = [
  // ── English ──
  q('en', 'en/shipping', 'how long does delivery take?', 'one to two working days'),
  q('en', 'en/shipping', 'when will my order arrive', 'one to two working days', 'shipped the same day'),
  q('en', 'en/shipping', 'what does postage cost', '€4.95'),
  q('en', 'en/shipping', 'how much is shipping to belgium', '€7.95'),
  q('en', 'en/shipping', 'is shipping free?', 'free of charge'),
  q('en', 'en/shipping', 'do you deliver to the usa', 'outside the European Union'),
  q('en', 'en/shipping', 'how fast do you ship orders', 'shipped the same day', 'one to two working days'),
  q('en', 'en/shipping', 'do i get a tracking code for my parcel', 'track and trace'),
  q('en', 'en/shipping', 'delivery costs germany?', '€7.95'),
  q('en', 'en/shipping', 'shiping time netherlands', 'one to two working days'),

  q('en', 'en/returns', 'Can I send something back?', 'within 30 days'),
  q('en', 'en/returns', 'how do i return an item', 'return form', 'return label'),
  q('en', 'en/returns', 'when do i get my money back', 'within 14 days'),
  q('en', 'en/returns', 'how long do i have to return my order', '30 days'),
  q('en', 'en/returns', 'is returning free', 'return shipping is free'),
  q('en', 'en/returns', 'refund for sale items?', 'exchanged but not refunded'),
  q('en', 'en/returns', 'i want a refund', 'refund the purchase price'),
  q('en', 'en/returns', 'do you send a return label', 'return label'),
  q('en', 'en/returns', 'can i exchange something i bought in the sale', 'exchanged but not refunded'),
  q('en', 'en/returns', 'retrun policy', 'within 30 days'),

  q('en', 'en/opening-hours', 'when are you open', 'Tuesday to Friday'),
  q('en', 'en/opening-hours', 'are you open on sunday', 'closed on Sunday'),
  q('en', 'en/opening-hours', 'what time do you close on saturday', '10:00 to 17:00'),
  q('en', 'en/opening-hours', 'opening times of the store', 'Tuesday to Friday'),
  q('en', 'en/opening-hours', 'are you open late on thursday', '21:00'),
  q('en', 'en/opening-hours', 'can i visit the store on monday', 'closed on Sunday and Monday'),
  q('en', 'en/opening-hours', 'when can i call customer service', 'weekdays from 9:00 to 17:00'),
  q('en', 'en/opening-hours', 'business hours?', 'Tuesday to Friday'),
  q('en', 'en/opening-hours', 'is the shop open on public holidays', 'public holidays'),
  q('en', 'en/opening-hours', 'openng hours', 'Tuesday to Friday'),

  q('en', 'en/payment', 'can i pay with paypal', 'PayPal'),
  q('en', 'en/payment', 'which payment methods do you accept', 'iDEAL'),
  q('en', 'en/payment', 'do you take credit cards', 'credit card'),
  q('en', 'en/payment', 'can i pay later', 'invoice', 'Klarna'),
  q('en', 'en/payment', 'can i pay in instalments', 'Klarna'),
  q('en', 'en/payment', 'can i pay cash in the shop', 'in cash'),
  q('en', 'en/payment', 'how do i pay for my order', 'at checkout', 'iDEAL'),
  q('en', 'en/payment', 'do you accept mastercard', 'Mastercard'),
  q('en', 'en/payment', 'can my company pay by invoice', 'invoice'),
  q('en', 'en/payment', 'paymnet options', 'iDEAL'),

  q('en', 'en/warranty', 'what guarantee do i get', 'two-year warranty'),
  q('en', 'en/warranty', 'how long is the warranty on a frame', 'ten years'),
  q('en', 'en/warranty', 'my product broke, is that covered?', 'two-year warranty', 'manufacturing defects', 'photo of the defect'),
  q('en', 'en/warranty', 'are worn tyres covered by the guarantee', 'not covered'),
  q('en', 'en/warranty', 'how do i make a warranty claim', 'photo of the defect'),
  q('en', 'en/warranty', 'do i need my receipt for a claim', 'keep your receipt'),
  q('en', 'en/warranty', 'is damage from an accident covered', 'accident'),
  q('en', 'en/warranty', 'guarantee period', 'two-year warranty'),
  q('en', 'en/warranty', 'warrenty on brake pads', 'brake pads'),
  q('en', 'en/warranty', 'what if my bike frame breaks', 'ten years'),

  q('en', 'en/gift-cards', 'do you sell gift cards', '€10 to €250'),
  q('en', 'en/gift-cards', 'how long is a gift card valid', 'two years'),
  q('en', 'en/gift-cards', 'can i use a gift voucher online', 'webshop'),
  q('en', 'en/gift-cards', 'can i get cash for my gift card', 'cannot be exchanged for cash'),
  q('en', 'en/gift-cards', 'how do i check my gift card balance', 'balance'),
  q('en', 'en/gift-cards', 'what amounts do gift cards come in', '€10 to €250'),
  q('en', 'en/gift-cards', 'does a giftcard expire', 'two years'),
  q('en', 'en/gift-cards', 'can i combine a gift card with another payment method', 'another payment method'),
  q('en', 'en/gift-cards', 'where can i buy a gift card', 'online or in the shop'),
  q('en', 'en/gift-cards', 'voucher valid how long', 'two years'),

  q('en', null, 'do you sell pizza'),
  q('en', null, 'can i park my car near the shop'),
  q('en', null, 'do you have a loyalty program'),
  q('en', null, 'is there a student discount'),
  q('en', null, 'do you repair laptops'),
  q('en', null, 'what will the weather be tomorrow'),
  q('en', null, 'who is the owner'),
  q('en', null, 'do you have job vacancies'),
  q('en', null, 'can i bring my dog'),
  q('en', null, 'do you rent out bikes'),
  q('en', null, 'how much does a bike repair cost'),
  q('en', null, 'can i pay with bitcoin'),
  q('en', null, 'is the warranty valid in spain'),

  // ── Nederlands ──
  q('nl', 'nl/verzending', 'hoe lang duurt de bezorging', 'een tot twee werkdagen'),
  q('nl', 'nl/verzending', 'wanneer komt mijn pakketje', 'een tot twee werkdagen', 'dezelfde dag nog'),
  q('nl', 'nl/verzending', 'wat zijn de verzendkosten', '€ 4,95'),
  q('nl', 'nl/verzending', 'wat kost verzenden naar belgie', '€ 7,95'),
  q('nl', 'nl/verzending', 'is de verzending gratis', 'verzenden we gratis'),
  q('nl', 'nl/verzending', 'leveren jullie ook in amerika', 'Buiten de Europese Unie'),
  q('nl', 'nl/verzending', 'krijg ik een track en trace', 'track-and-tracelink'),
  q('nl', 'nl/verzending', 'hoeveel kost de levering naar duitsland', '€ 7,95'),
  q('nl', 'nl/verzending', 'hoe snel versturen jullie een bestelling', 'dezelfde dag nog', 'een tot twee werkdagen'),
  q('nl', 'nl/verzending', 'bezorgtijd nederland', 'een tot twee werkdagen'),

  q('nl', 'nl/retourneren', 'kan ik iets terugsturen', 'binnen 30 dagen'),
  q('nl', 'nl/retourneren', 'hoe retourneer ik een artikel', 'retourformulier', 'retourlabel'),
  q('nl', 'nl/retourneren', 'wanneer krijg ik mijn geld terug', 'binnen 14 dagen'),
  q('nl', 'nl/retourneren', 'hoe lang heb ik om te retourneren', '30 dagen'),
  q('nl', 'nl/retourneren', 'is retourneren gratis', 'terugsturen is gratis', 'gratis retourlabel'),
  q('nl', 'nl/retourneren', 'krijg ik geld terug voor uitverkoop artikelen', 'niet terug'),
  q('nl', 'nl/retourneren', 'ik wil mijn geld terug', 'binnen 14 dagen'),
  q('nl', 'nl/retourneren', 'sturen jullie een retourlabel', 'retourlabel'),
  q('nl', 'nl/retourneren', 'kan ik een artikel uit de uitverkoop ruilen', 'ruilen'),
  q('nl', 'nl/retourneren', 'retoruneren', 'binnen 30 dagen'),

  q('nl', 'nl/openingstijden', 'wanneer zijn jullie open', 'dinsdag tot en met vrijdag'),
  q('nl', 'nl/openingstijden', 'zijn jullie op zondag open', 'zondag, maandag en feestdagen'),
  q('nl', 'nl/openingstijden', 'hoe laat gaan jullie dicht op zaterdag', '10:00 tot 17:00'),
  q('nl', 'nl/openingstijden', 'openingstijden winkel', 'dinsdag tot en met vrijdag'),
  q('nl', 'nl/openingstijden', 'hebben jullie koopavond', 'donderdagavond'),
  q('nl', 'nl/openingstijden', 'kan ik maandag langskomen', 'zondag, maandag en feestdagen'),
  q('nl', 'nl/openingstijden', 'wanneer is de klantenservice bereikbaar', '9:00 tot 17:00'),
  q('nl', 'nl/openingstijden', 'zijn jullie open op feestdagen', 'feestdagen'),
  q('nl', 'nl/openingstijden', 'tot hoe laat open op donderdag', '21:00'),
  q('nl', 'nl/openingstijden', 'openingstyden', 'dinsdag tot en met vrijdag'),

  q('nl', 'nl/betalen', 'kan ik met paypal betalen', 'PayPal'),
  q('nl', 'nl/betalen', 'welke betaalmethoden zijn er', 'iDEAL'),
  q('nl', 'nl/betalen', 'kan ik afrekenen met een creditcard', 'creditcard'),
  q('nl', 'nl/betalen', 'kan ik achteraf betalen', 'Klarna', 'op rekening'),
  q('nl', 'nl/betalen', 'betalen in termijnen', 'Klarna'),
  q('nl', 'nl/betalen', 'kan ik in de winkel pinnen', 'pinnen'),
  q('nl', 'nl/betalen', 'hoe betaal ik mijn bestelling', 'afrekenen', 'iDEAL'),
  q('nl', 'nl/betalen', 'accepteren jullie mastercard', 'Mastercard'),
  q('nl', 'nl/betalen', 'kan mijn bedrijf op factuur betalen', 'op rekening'),
  q('nl', 'nl/betalen', 'betaalmogelijkheden', 'iDEAL'),

  q('nl', 'nl/garantie', 'hoeveel garantie krijg ik', 'twee jaar garantie'),
  q('nl', 'nl/garantie', 'hoe lang garantie op het frame', 'tien jaar'),
  q('nl', 'nl/garantie', 'mijn product is kapot, valt dat onder de garantie', 'twee jaar garantie', 'fabricagefouten', 'foto van het defect'),
  q('nl', 'nl/garantie', 'vallen versleten banden onder de garantie', 'niet onder de garantie'),
  q('nl', 'nl/garantie', 'hoe dien ik een garantieclaim in', 'foto van het defect'),
  q('nl', 'nl/garantie', 'heb ik mijn bon nodig voor de garantie', 'aankoopbewijs'),
  q('nl', 'nl/garantie', 'is schade door een ongeluk gedekt', 'ongeluk'),
  q('nl', 'nl/garantie', 'garantietermijn', 'twee jaar garantie'),
  q('nl', 'nl/garantie', 'garanite op remblokken', 'remblokken'),
  q('nl', 'nl/garantie', 'mijn fietsframe is gebroken', 'tien jaar'),

  q('nl', 'nl/cadeaubonnen', 'verkopen jullie cadeaubonnen', '€ 10 tot € 250'),
  q('nl', 'nl/cadeaubonnen', 'hoe lang is een cadeaubon geldig', 'twee jaar geldig'),
  q('nl', 'nl/cadeaubonnen', 'kan ik een cadeaukaart online gebruiken', 'webshop'),
  q('nl', 'nl/cadeaubonnen', 'kan ik mijn cadeaubon omruilen voor geld', 'niet inwisselen'),
  q('nl', 'nl/cadeaubonnen', 'hoe check ik het saldo van mijn cadeaubon', 'saldo'),
  q('nl', 'nl/cadeaubonnen', 'welke bedragen hebben cadeaubonnen', '€ 10 tot € 250'),
  q('nl', 'nl/cadeaubonnen', 'verloopt een cadeaubon', 'twee jaar geldig'),
  q('nl', 'nl/cadeaubonnen', 'cadeaubon combineren met een andere betaalmethode', 'andere betaalmethode'),
  q('nl', 'nl/cadeaubonnen', 'waar koop ik een cadeaubon', 'online of in de winkel'),
  q('nl', 'nl/cadeaubonnen', 'kadobon kopen', 'online of in de winkel'),

  q('nl', null, 'verkopen jullie pizza'),
  q('nl', null, 'kan ik parkeren bij de winkel'),
  q('nl', null, 'hebben jullie een spaarprogramma'),
  q('nl', null, 'is er studentenkorting'),
  q('nl', null, 'repareren jullie laptops'),
  q('nl', null, 'wat voor weer wordt het morgen'),
  q('nl', null, 'wie is de eigenaar'),
  q('nl', null, 'hebben jullie vacatures'),
  q('nl', null, 'mag mijn hond mee'),
  q('nl', null, 'verhuren jullie fietsen'),
  q('nl', null, 'wat kost een fietsreparatie'),
  q('nl', null, 'kan ik met bitcoin betalen'),
  q('nl', null, 'geldt de garantie ook in spanje'),
];
