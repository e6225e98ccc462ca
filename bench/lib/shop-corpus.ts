/**
 * Synthetic web-shop content for the knowledge-search benchmark: products and pages of a bike and outdoor shop in
 * English and Dutch, as a WooCommerce or Shopify plugin would sync them, and the questions customers ask about them.
 *
 * Deterministic (one seed): page `i` is the same in every run and every process. The word use follows a shop's:
 * a few words (bike/fiets, order/bestelling, delivery/levering) stand in most pages, brand and model names in a few,
 * so a query can match one chunk or thousands. Product texts are one chunk; guides and blog posts run to several.
 */
import type { SyncUpsertItem } from '../../src/knowledge/knowledge-service.ts';

type Lang = 'en' | 'nl';

/** mulberry32: a small seeded generator, enough for picking words. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const pick = <T>(rnd: () => number, list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
/** Skewed towards the start of the list (the common words first): index ~ n·u². */
const pickCommon = <T>(rnd: () => number, list: readonly T[]): T => list[Math.floor(rnd() * rnd() * list.length)]!;

const BRANDS = [
  'Veloria', 'Kalmar', 'Stadler', 'Brenta', 'Norvik', 'Altura', 'Corvo', 'Fjordy', 'Granvel', 'Helmo', 'Istra', 'Jorvik',
  'Lumeno', 'Marlo', 'Nebbia', 'Ortega', 'Pavo', 'Quarto', 'Rivano', 'Solano', 'Tervo', 'Ulvik', 'Varda', 'Wendel',
  'Zeno', 'Arbor', 'Bakko', 'Cimba', 'Dorsa', 'Elvo', 'Ferro', 'Gazza', 'Hollo', 'Ivalo', 'Kettla', 'Lindo',
];
const SERIES = ['Comfort', 'Urban', 'Trail', 'Tour', 'Sport', 'Classic', 'Cargo', 'Pro', 'Lite', 'Active', 'Metro', 'Ridge', 'Delta', 'Nova', 'Terra'];

interface Words {
  categories: readonly string[];
  common: readonly string[];
  nouns: readonly string[];
  adjectives: readonly string[];
  verbs: readonly string[];
  topics: readonly { title: string; words: readonly string[] }[];
  sentences: readonly string[];
  productSentences: readonly string[];
  questions: readonly string[];
  chatty: readonly string[];
  absent: readonly string[];
}

const WORDS: Record<Lang, Words> = {
  en: {
    categories: ['city bike', 'e-bike', 'cargo bike', 'kids bike', 'racing bike', 'mountain bike', 'bike light', 'bike lock', 'rain jacket', 'helmet', 'saddle bag', 'pannier', 'tyre', 'inner tube', 'chain', 'pump', 'child seat', 'bell', 'mudguard', 'kickstand'],
    common: ['bike', 'order', 'delivery', 'price', 'shop', 'store', 'frame', 'battery', 'warranty', 'return', 'size', 'day', 'week', 'customer', 'service', 'parts'],
    nouns: ['wheel', 'brake', 'gear', 'saddle', 'handlebar', 'pedal', 'tyre', 'chain', 'light', 'lock', 'motor', 'charger', 'rack', 'basket', 'bell', 'fork', 'rim', 'spoke', 'cable', 'bottle', 'glove', 'jacket', 'helmet', 'parcel', 'invoice', 'receipt', 'account', 'voucher', 'discount', 'workshop', 'mechanic', 'appointment', 'route', 'commute', 'rain', 'winter', 'summer', 'weekend', 'holiday', 'family', 'child', 'school', 'city', 'hill', 'road', 'gravel', 'forest', 'beach', 'station', 'office'],
    adjectives: ['light', 'strong', 'comfortable', 'fast', 'waterproof', 'reliable', 'adjustable', 'rechargeable', 'compact', 'sturdy', 'quiet', 'bright', 'durable', 'new', 'popular', 'affordable', 'premium', 'electric', 'foldable', 'reflective'],
    verbs: ['ride', 'charge', 'order', 'deliver', 'return', 'adjust', 'repair', 'replace', 'mount', 'fold', 'lock', 'ship', 'choose', 'test', 'clean', 'store', 'carry', 'pay', 'exchange', 'maintain'],
    topics: [
      { title: 'Shipping and delivery', words: ['shipping', 'delivery', 'parcel', 'courier', 'tracking', 'Belgium', 'Germany', 'weekend', 'costs'] },
      { title: 'Returns and refunds', words: ['return', 'refund', 'exchange', 'label', 'form', 'account', 'damaged', 'days'] },
      { title: 'Warranty', words: ['warranty', 'frame', 'fork', 'battery', 'motor', 'receipt', 'claim', 'years'] },
      { title: 'Payment methods', words: ['payment', 'iDEAL', 'PayPal', 'Klarna', 'credit card', 'instalments', 'invoice'] },
      { title: 'Workshop and maintenance', words: ['workshop', 'maintenance', 'service', 'brakes', 'gears', 'appointment', 'loan bike', 'tyres'] },
      { title: 'Choosing the right frame size', words: ['frame', 'size', 'height', 'inseam', 'centimetres', 'saddle', 'posture'] },
      { title: 'Caring for your e-bike battery', words: ['battery', 'charging', 'winter', 'cells', 'range', 'storage', 'charger'] },
      { title: 'Cycling in the rain', words: ['rain', 'jacket', 'poncho', 'mudguards', 'visibility', 'lights', 'brakes'] },
      { title: 'Opening hours', words: ['opening', 'hours', 'Saturday', 'Sunday', 'holidays', 'store', 'evening'] },
      { title: 'Bike leasing for employers', words: ['lease', 'employer', 'contract', 'monthly', 'insurance', 'tax', 'commute'] },
      { title: 'Insurance and theft', words: ['insurance', 'theft', 'lock', 'keys', 'police', 'report', 'frame number'] },
      { title: 'Riding with children', words: ['child', 'seat', 'cargo', 'helmet', 'school', 'balance', 'trailer'] },
    ],
    sentences: [
      'Our {noun} is {adj} and easy to {verb}.',
      'You can {verb} your {cnoun} at any of our stores or online.',
      'Most customers {verb} a {adj} {noun} for the {noun2}.',
      'We {verb} every {cnoun} within {num} days.',
      'Ask our mechanic how to {verb} the {noun} on your {cnoun}.',
      'The {topic} of a {adj} {cnoun} depends on the {noun} and the {noun2}.',
      'In {num} cases out of ten the {noun} needs no more than a quick check.',
      'Keep the {noun} {adj}: {verb} it after every {noun2}.',
      'For questions about {topic}, our customer service is there every day.',
      'A {adj} {noun} makes the {topic} on your {cnoun} much easier.',
    ],
    productSentences: [
      'The {model} is a {adj} {category} with a {adj2} {noun}.',
      'It comes with a {noun}, a {noun2} and {num} gears.',
      'Ideal for the {noun} to work and for long rides at the {noun2}.',
      'Weight {num} kg; frame sizes {size1}, {size2} and {size3} cm.',
      'Made by {brand} and tested in our own workshop.',
      'Easy to {verb}, and {adj} enough for every day.',
    ],
    questions: ['{category} price', 'how much does the {model} cost', 'is the {model} in stock', '{topicword} {topicword2}', 'what does {topicword} cost', '{brand} {category}'],
    chatty: [
      'Hi, I ordered a {category} last week, when will it be delivered to my holiday address in Portugal?',
      'Hello, can my grandmother ride the {model} with her hip replacement or should she pick another one?',
      'My {category} squeaks since yesterday after the thunderstorm, can your mechanic look at it tomorrow morning?',
    ],
    absent: ['quantum chromodynamics lecture notes', 'submarine periscope rental', 'violin lessons for beginners', 'tax advice for pensioners'],
  },
  nl: {
    categories: ['stadsfiets', 'e-bike', 'bakfiets', 'kinderfiets', 'racefiets', 'mountainbike', 'fietslamp', 'fietsslot', 'regenjas', 'helm', 'zadeltas', 'fietstas', 'buitenband', 'binnenband', 'ketting', 'fietspomp', 'kinderzitje', 'fietsbel', 'spatbord', 'standaard'],
    common: ['fiets', 'bestelling', 'levering', 'prijs', 'winkel', 'frame', 'accu', 'garantie', 'retour', 'maat', 'dag', 'week', 'klant', 'service', 'onderdelen', 'verzending'],
    nouns: ['wiel', 'rem', 'versnelling', 'zadel', 'stuur', 'pedaal', 'band', 'ketting', 'lamp', 'slot', 'motor', 'oplader', 'bagagedrager', 'mand', 'bel', 'voorvork', 'velg', 'spaak', 'kabel', 'bidon', 'handschoen', 'jas', 'helm', 'pakket', 'factuur', 'bon', 'account', 'cadeaubon', 'korting', 'werkplaats', 'monteur', 'afspraak', 'route', 'woon-werkverkeer', 'regen', 'winter', 'zomer', 'weekend', 'vakantie', 'gezin', 'kind', 'school', 'stad', 'heuvel', 'weg', 'grind', 'bos', 'strand', 'station', 'kantoor'],
    adjectives: ['licht', 'sterk', 'comfortabel', 'snel', 'waterdicht', 'betrouwbaar', 'verstelbaar', 'oplaadbaar', 'compact', 'stevig', 'stil', 'fel', 'duurzaam', 'nieuw', 'populair', 'betaalbaar', 'luxe', 'elektrisch', 'opvouwbaar', 'reflecterend'],
    verbs: ['fietsen', 'opladen', 'bestellen', 'bezorgen', 'retourneren', 'afstellen', 'repareren', 'vervangen', 'monteren', 'vouwen', 'afsluiten', 'verzenden', 'kiezen', 'testen', 'schoonmaken', 'stallen', 'vervoeren', 'betalen', 'ruilen', 'onderhouden'],
    topics: [
      { title: 'Verzending en levering', words: ['verzending', 'levering', 'pakket', 'bezorger', 'track-and-trace', 'België', 'Duitsland', 'weekend', 'verzendkosten'] },
      { title: 'Retourneren en ruilen', words: ['retourneren', 'terugbetaling', 'ruilen', 'retourlabel', 'formulier', 'account', 'beschadigd', 'dagen'] },
      { title: 'Garantie', words: ['garantie', 'frame', 'voorvork', 'accu', 'motor', 'aankoopbewijs', 'claim', 'jaar'] },
      { title: 'Betaalmethoden', words: ['betalen', 'iDEAL', 'PayPal', 'Klarna', 'creditcard', 'termijnen', 'factuur'] },
      { title: 'Werkplaats en onderhoud', words: ['werkplaats', 'onderhoud', 'beurt', 'remmen', 'versnellingen', 'afspraak', 'leenfiets', 'banden'] },
      { title: 'De juiste framemaat kiezen', words: ['framemaat', 'maat', 'lengte', 'binnenbeenlengte', 'centimeter', 'zadel', 'houding'] },
      { title: 'Zo blijft je e-bike-accu goed', words: ['accu', 'opladen', 'winter', 'cellen', 'actieradius', 'stallen', 'oplader'] },
      { title: 'Fietsen in de regen', words: ['regen', 'regenjas', 'poncho', 'spatborden', 'zichtbaarheid', 'verlichting', 'remmen'] },
      { title: 'Openingstijden', words: ['openingstijden', 'zaterdag', 'zondag', 'feestdagen', 'winkel', 'koopavond'] },
      { title: 'Fietsleasen via je werkgever', words: ['lease', 'werkgever', 'contract', 'maandelijks', 'verzekering', 'bijtelling', 'woon-werkverkeer'] },
      { title: 'Verzekering en diefstal', words: ['verzekering', 'diefstal', 'slot', 'sleutels', 'politie', 'aangifte', 'framenummer'] },
      { title: 'Fietsen met kinderen', words: ['kind', 'kinderzitje', 'bakfiets', 'helm', 'school', 'loopfiets', 'aanhanger'] },
    ],
    sentences: [
      'Onze {noun} is {adj} en makkelijk te {verb}.',
      'Je kunt je {cnoun} {verb} in al onze winkels of online.',
      'De meeste klanten kiezen een {adj} {noun} voor de {noun2}.',
      'We {verb} elke {cnoun} binnen {num} dagen.',
      'Vraag onze monteur hoe je de {noun} van je {cnoun} kunt {verb}.',
      'De {topic} van een {adj} {cnoun} hangt af van de {noun} en de {noun2}.',
      'In {num} van de tien gevallen heeft de {noun} alleen een korte controle nodig.',
      'Houd de {noun} {adj}: {verb} hem na elke {noun2}.',
      'Voor vragen over {topic} staat onze klantenservice elke dag klaar.',
      'Met een {adj} {noun} wordt {topic} op je {cnoun} veel makkelijker.',
    ],
    productSentences: [
      'De {model} is een {adj} {category} met een {adj2} {noun}.',
      'Geleverd met een {noun}, een {noun2} en {num} versnellingen.',
      'Ideaal voor de {noun} naar je werk en voor lange tochten in het {noun2}.',
      'Gewicht {num} kg; framematen {size1}, {size2} en {size3} cm.',
      'Gemaakt door {brand} en getest in onze eigen werkplaats.',
      'Makkelijk te {verb}, en {adj} genoeg voor elke dag.',
    ],
    questions: ['{category} prijs', 'wat kost de {model}', 'is de {model} op voorraad', '{topicword} {topicword2}', 'wat kost {topicword}', '{brand} {category}'],
    chatty: [
      'Hoi, ik heb vorige week een {category} besteld, wanneer wordt die bezorgd op mijn vakantieadres in Portugal?',
      'Goedemiddag, kan mijn oma met haar nieuwe heup op de {model} fietsen of moet ze een andere kiezen?',
      'Mijn {category} piept sinds het onweer van gisteren, kan jullie monteur er morgenochtend naar kijken?',
    ],
    absent: ['kwantumchromodynamica collegedictaat', 'onderzeeër periscoop huren', 'vioolles voor beginners', 'belastingadvies voor gepensioneerden'],
  },
};

const AVAILABILITY = ['in_stock', 'in_stock', 'in_stock', 'out_of_stock', 'preorder', 'backorder'] as const;

function languageOf(i: number): Lang {
  return random(i * 7 + 1)() < 0.55 ? 'nl' : 'en';
}

/** Whether item `i` is a product: the first draw of its own generator, as shopItem takes it. */
function isProduct(i: number): boolean {
  return random(i * 31 + 17)() < 0.7;
}

function modelOf(i: number): { brand: string; model: string } {
  const rnd = random(i * 13 + 5);
  const brand = pick(rnd, BRANDS);
  return { brand, model: `${brand} ${pick(rnd, SERIES)} ${100 + (i % 900)}` };
}

function fill(template: string, rnd: () => number, w: Words, extra: Record<string, string> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_m, slot: string) => {
    if (slot in extra) return extra[slot]!;
    switch (slot) {
      case 'noun':
      case 'noun2':
        return pickCommon(rnd, w.nouns);
      case 'cnoun':
        return pickCommon(rnd, w.common);
      case 'adj':
      case 'adj2':
        return pickCommon(rnd, w.adjectives);
      case 'verb':
        return pickCommon(rnd, w.verbs);
      case 'num':
        return String(2 + Math.floor(rnd() * 28));
      default:
        return slot;
    }
  });
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Item `i` of the corpus: about 70 % products (one chunk each), 30 % pages (guides and posts, 1–6 chunks). */
export function shopItem(i: number): SyncUpsertItem {
  const lang = languageOf(i);
  const w = WORDS[lang];
  const rnd = random(i * 31 + 17);
  if (rnd() < 0.7) {
    const { brand, model } = modelOf(i);
    const category = pick(rnd, w.categories);
    const sentences = Array.from({ length: 4 + Math.floor(rnd() * 5) }, () =>
      fill(pick(rnd, w.productSentences), rnd, w, { model, brand, category, size1: '49', size2: '53', size3: '57' }),
    );
    return {
      kind: 'product',
      external_id: `product-${i}`,
      language: lang,
      url: `https://shop.example/${lang}/p/${i}`,
      title: `${model} ${category}`,
      description: sentences.join(' '),
      price: Math.round((10 + rnd() * 3000) * 100) / 100,
      currency: 'EUR',
      sku: `${brand.slice(0, 3).toUpperCase()}-${10_000 + i}`,
      availability: pick(rnd, AVAILABILITY),
    };
  }
  const topic = pick(rnd, w.topics);
  const paragraphs = Array.from({ length: 1 + Math.floor(rnd() * rnd() * 16) }, () =>
    Array.from({ length: 3 + Math.floor(rnd() * 5) }, () => fill(pick(rnd, w.sentences), rnd, w, { topic: pick(rnd, topic.words) })).join(' '),
  );
  return {
    kind: 'page',
    external_id: `page-${i}`,
    language: lang,
    url: `https://shop.example/${lang}/${i}`,
    title: rnd() < 0.3 ? topic.title : `${topic.title}: ${pick(rnd, w.adjectives)} ${pick(rnd, w.nouns)} (${i})`,
    body: paragraphs.join('\n\n'),
  };
}

export type QueryKind = 'precise-rare' | 'precise-common' | 'no-hit' | 'recall';

export interface ShopQuery {
  kind: QueryKind;
  language: Lang;
  text: string;
}

/**
 * Query `j` over a corpus of `pages` items: a quarter each of precise questions about one product (its model name),
 * precise questions in common words (thousands of chunks match), questions about nothing in the shop, and chatty
 * questions not every word of which occurs (the recall path). Half in each language.
 */
export function shopQuery(j: number, pages: number): ShopQuery {
  const rnd = random(j * 101 + 3);
  const language: Lang = j % 2 === 0 ? 'nl' : 'en';
  const w = WORDS[language];
  const kinds: QueryKind[] = ['precise-rare', 'precise-common', 'no-hit', 'recall'];
  const kind = kinds[(j >> 1) % 4]!;
  // A product of the query's language, so its model name is there to be found.
  let item = Math.floor(rnd() * pages);
  while (languageOf(item) !== language || !isProduct(item)) item = (item + 1) % pages;
  const { brand, model } = modelOf(item);
  const topic = pick(rnd, w.topics);
  const extra = {
    model,
    brand,
    category: pick(rnd, w.categories),
    topicword: pick(rnd, topic.words),
    topicword2: pick(rnd, topic.words),
  };
  switch (kind) {
    case 'precise-rare':
      return { kind, language, text: language === 'nl' ? `${model} prijs` : `${model} price` };
    case 'precise-common':
      return { kind, language, text: fill(pick(rnd, w.questions.filter((q) => !q.includes('{model}'))), rnd, w, extra) };
    case 'no-hit':
      return { kind, language, text: pick(rnd, w.absent) };
    case 'recall':
      return { kind, language, text: capitalise(fill(pick(rnd, w.chatty), rnd, w, extra)) };
  }
}
