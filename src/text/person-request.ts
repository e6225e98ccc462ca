/**
 * A customer asking for a person, in their own words, on every channel (docs/architecture.md, "Decisions worth
 * knowing": asking for a person). The one owner of these phrases and their languages (en, nl, de, fr; every table is
 * tried whatever the conversation's language, because customers switch languages and integrators answer in their own):
 *
 * - {@link asksForPerson}: the message itself asks ("Can I speak to a real person please?", "Ik wil een medewerker
 *   spreken", "a human please").
 * - {@link acceptsOffer}: the message is only a yes ("yes please", "ja graag", "ok"). It counts only as the answer to
 *   a reply that offered a person: the session remembers that offer (machines/session.machine.ts), nothing here does.
 * - {@link offersPerson}: a reply offers a person ("I don't know that, shall I connect you with the team?").
 *
 * A hit hands the conversation over (on the phone a person may be connected at once), so precision comes first: a
 * person word counts only inside a request ("speak to …", "… spreken", "I want a human") or standing alone ("Agent!",
 * "een mens graag"), never in a statement ("I'm a real person", "Is the agent for DHL?"), and not when denied ("I don't
 * want to talk to a human"). The text is matched lowercase, without accents, clause by clause.
 */

/** Lowercase, accents removed, typographic apostrophes made plain, runs of white space made one space. */
export function normaliseForMatching(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[\u2018\u2019\u0060\u00b4]/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
}

/** Alternatives of a group; a space stands for any white space. */
const any = (...alternatives: string[]): string => `(?:${alternatives.join('|')})`;

// ── The words for a person ──────────────────────────────────────────────────────────────────────────────────────────

const EN_NOUN = any(
  'person', 'people', 'human', 'human being', 'humans', 'agent', 'live agent', 'human agent', 'representative', 'rep', 'operator',
  'employee', 'colleague', 'staff', 'staff member', 'member of staff', 'team member', 'customer service', 'customer support',
  'support team', 'manager', 'supervisor', 'team',
);
/** Someone, for "speak to someone"; not for "I need someone (to fix my bike)". */
const EN_ANYONE = any('someone', 'somebody', 'anyone', 'anybody');
const EN_PERSON = `(?:${any('a', 'an', 'the', 'some', 'your', 'one of your', 'any')} )?(?:${any('real', 'live', 'actual', 'proper', 'human')} )?${EN_NOUN}`;

const NL_NOUN = any('mens', 'mensen', 'persoon', 'medewerker', 'medewerkster', 'collega', 'werknemer', 'klantenservice', 'klantendienst', 'team');
const NL_PERSON = `(?:${any('een', 'de', 'het', 'uw', 'jullie')} )?(?:${any('echte', 'echt', 'levende')} )?${NL_NOUN}`;

const DE_NOUN = any('mensch', 'menschen', 'mitarbeiter', 'mitarbeiterin', 'person', 'berater', 'beraterin', 'kollegen', 'kollegin', 'kundendienst', 'kundenservice', 'team');
const DE_PERSON = `(?:${any('einen', 'einem', 'einer', 'eine', 'den', 'dem', 'der', 'ihrem', 'ihrer', 'ihren')} )?(?:${any('echten', 'echte', 'echtem', 'menschlichen')} )?${DE_NOUN}`;

const FR_NOUN = any('humain', 'etre humain', 'personne', 'conseiller', 'conseillere', 'agent', 'operateur', 'operatrice', 'collegue', 'service client', 'equipe');
const FR_PERSON = `(?:${any('un', 'une', 'le', 'la', 'l\'', 'votre', 'un de vos', 'une de vos')} ?)?(?:${any('vrai', 'vraie', 'veritable')} )?${FR_NOUN}`;

// ── Requests: a person word inside a request, anywhere in a clause ───────────────────────────────────────────────────

const REQUESTS: Record<string, readonly string[]> = {
  en: [
    `${any('speak', 'talk', 'chat')} ${any('to', 'with')} ${any(EN_PERSON, EN_ANYONE)}`,
    `${any('connect', 'transfer', 'put', 'pass')} me ${any('through to', 'through', 'over to', 'to', 'with')}(?: ${any(EN_PERSON, EN_ANYONE)})?`,
    `${any('get', 'give', 'find')} me ${EN_PERSON}`,
    `${any('i want', 'i need', "i'd like", 'i would like', 'i wanna', 'can i have', 'could i have', 'can i get', 'could i get', 'may i have')} ${EN_PERSON}`,
    `is there ${any('a', 'an', 'any')} (?:${any('real', 'live', 'actual')} )?${any('person', 'human', 'agent', 'someone', 'somebody', 'anyone', 'anybody')} (?:i|we) ${any('can', 'could')} ${any('speak', 'talk', 'chat')} ${any('to', 'with')}`,
  ],
  nl: [
    `${any('spreken', 'praten', 'chatten', 'bellen')} met ${any(NL_PERSON, 'iemand')}`,
    `${any(NL_PERSON, 'iemand')} (?:${any('van', 'bij')} [\\p{L} ]{1,30} )?(?:te )?${any('spreken', 'aan de lijn', 'aan de telefoon')}`,
    `met ${any(NL_PERSON, 'iemand')} (?:[\\p{L}]+ ){0,3}${any('spreken', 'praten', 'chatten', 'bellen')}`,
    `${any('ik wil', 'ik wil graag', 'ik zou graag', 'mag ik', 'kunt u mij', 'kun je mij')} ${NL_PERSON}`,
    `${any('verbind', 'verbindt')} ${any('me', 'mij')} door`,
    `${any('doorverbinden', 'doorverbonden', 'doorschakelen', 'doorgeschakeld')}`,
  ],
  de: [
    `mit ${any(DE_PERSON, 'jemandem')} (?:[\\p{L}]+ ){0,3}${any('sprechen', 'reden', 'verbunden', 'verbinden', 'chatten')}`,
    `${any('verbinden sie mich', 'verbinde mich', 'stellen sie mich durch')}`,
    `${any(DE_PERSON, 'jemanden')} (?:[\\p{L}]+ )?sprechen`,
    `${any('ich mochte', 'ich will', 'ich hatte gerne', 'ich hatte gern')} ${DE_PERSON}`,
  ],
  fr: [
    `parler ${any('a', 'avec')} ${any(FR_PERSON, "quelqu'un")}`,
    `${any('mettez-moi', 'mettez moi', 'me mettre', 'mettre')} en relation`,
    `${any('passez-moi', 'passez moi', 'me passer')} ${FR_PERSON}`,
    `${any('je veux', 'je voudrais', "j'aimerais", 'je souhaite')} ${FR_PERSON}`,
  ],
};

/**
 * A clause that is nothing but a person, maybe with please: "Agent!", "a real person please", "een mens graag". The
 * words that are also interjections or mean something else alone ("Mens, wat duurt dat lang", "Mensch!", French
 * "personne": nobody) count only with an article.
 */
const ALONE = [
  `(?:please )?(?:${EN_PERSON}|${any('connect', 'transfer')} me)(?: please| now| please now)?`,
  `(?:(?:${any('een', 'de', 'het', 'uw')} )?(?:${any('echte', 'echt')} )?${any('medewerker', 'medewerkster', 'collega', 'klantenservice', 'persoon')}|een (?:${any('echte', 'echt')} )?mens|iemand van ${any('het team', 'de klantenservice')})(?: ${any('graag', 'alsjeblieft', 'alstublieft', 'aub')})?`,
  `(?:(?:${any('einen', 'einem', 'eine', 'ihren')} )?(?:${any('echten', 'echte')} )?${any('mitarbeiter', 'mitarbeiterin', 'berater', 'beraterin', 'kundendienst', 'kundenservice')}|${any('einen', 'ein')} (?:${any('echten', 'echter')} )?${any('menschen', 'mensch')})(?: bitte)?`,
  `(?:${any('un', 'une')} (?:${any('vrai', 'vraie')} )?${any('humain', 'etre humain', 'personne', 'conseiller', 'conseillere', 'agent', 'operateur', 'operatrice')}|${any('conseiller', 'conseillere', 'humain')})(?: ${any("s'il vous plait", 'svp', "s'il te plait", 'stp')})?`,
];

/**
 * A denial just before the request (within {@link DENIAL_WORDS} words): "I don't want to talk to a human", "ik wil niet
 * met een mens praten"; but "This is not helpful, I want to talk to a human" asks.
 */
const DENIAL = new RegExp(
  `(?<![\\p{L}\\p{N}])${any("don't", 'dont', 'do not', "doesn't", 'does not', 'no need to', 'never', 'not', 'niet', 'geen', 'nooit', 'nicht', 'kein', 'keine', 'keinen', 'keinem', 'pas', 'jamais')}(?![\\p{L}\\p{N}])`,
  'u',
);

/** Whole words only: JavaScript's `\b` knows ASCII letters only, so "no letter or digit of any script" on either side. */
const words = (pattern: string): string => `(?<![\\p{L}\\p{N}])(?:${pattern})(?![\\p{L}\\p{N}])`;

const DENIAL_WORDS = 3;

const REQUEST = new RegExp(words(Object.values(REQUESTS).flat().join('|')), 'u');
const ALONE_PATTERN = new RegExp(`^(?:${ALONE.join('|')})$`, 'u');

/** A message's clauses, split at sentence and clause punctuation, each without its punctuation. */
function clauses(normalised: string): string[] {
  return normalised
    .replace(/(?<![\p{L}])a\.u\.b\.?/gu, 'aub')
    .split(/[.!?;:,()[\]\n…¿¡"“”]+/u)
    .map((c) => c.replace(/[^\p{L}\p{N}' -]/gu, ' ').replace(/\s+/g, ' ').trim())
    .filter((c) => c !== '');
}

/** Whether the customer's message asks for a person, in English, Dutch, German or French. */
export function asksForPerson(text: string): boolean {
  for (const clause of clauses(normaliseForMatching(text))) {
    if (ALONE_PATTERN.test(clause)) return true;
    const match = REQUEST.exec(clause);
    if (match && !DENIAL.test(clause.slice(0, match.index).split(' ').slice(-DENIAL_WORDS - 1).join(' '))) return true;
  }
  return false;
}

// ── Yes, after an offer ──────────────────────────────────────────────────────────────────────────────────────────────

/** Whole messages that say yes (punctuation and a closing thanks aside). */
const YES = new Set([
  // en
  'yes', 'yes please', 'yes pls', 'yeah', 'yeah please', 'yep', 'yup', 'y', 'ya', 'sure', 'sure please', 'sure thing', 'ok', 'okay', 'ok please',
  'okay please', 'please', 'please do', 'yes please do', 'yes do', 'go ahead', 'yes go ahead', 'do it', 'alright', 'all right', 'of course',
  'yes i would', "yes i'd like that", 'i would like that', "i'd like that", 'that would be great', 'yes that would be great',
  'yes please connect me', 'please connect me', 'connect me', 'yes connect me', 'yes i do', 'yes i want that', 'absolutely', 'definitely',
  // nl
  'ja', 'ja graag', 'graag', 'ja hoor', 'ja alsjeblieft', 'ja alstublieft', 'ja aub', 'ja a.u.b', 'ja zeker', 'jazeker', 'zeker', 'doe maar',
  'ja doe maar', 'prima', 'ja prima', 'goed', 'is goed', 'ja is goed', 'dat is goed', 'ja dat is goed', 'oke', 'ok graag', 'oke graag', 'ja graag hoor',
  'graag hoor', 'ja dat wil ik', 'dat wil ik graag', 'ja verbind me door', 'verbind me door',
  // de
  'ja bitte', 'gerne', 'gern', 'ja gerne', 'ja gern', 'bitte', 'jawohl', 'klar', 'ja klar', 'sicher', 'in ordnung', 'ja bitte verbinden',
  // fr
  'oui', 'oui merci', "oui s'il vous plait", 'oui svp', "d'accord", 'oui d\'accord', 'volontiers', 'oui volontiers', 'bien sur', 'oui bien sur',
  'avec plaisir', 'je veux bien', 'oui je veux bien',
]);
const THANKS = / (?:thanks|thank you|thx|dank je|dank je wel|dank u|dank u wel|bedankt|danke|danke schon|merci|merci beaucoup)$/u;
const YES_EMOJI = /^(?:\u{1F44D}[\u{1F3FB}-\u{1F3FF}]?|\u{1F44C}|\u2705|\u2714\uFE0F?)+$/u;

/** Whether the message is only a yes ("Yes, please!", "ja graag", "ok 👍"); it means something only after an offer. */
export function acceptsOffer(text: string): boolean {
  const trimmed = text.trim();
  if (YES_EMOJI.test(trimmed.replace(/\s+/g, ''))) return true;
  const plain = normaliseForMatching(trimmed)
    .replace(/[^\p{L}\p{N}'. ]/gu, ' ')
    .replace(/(?<![a-z])\.|\.(?![a-z])/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (plain === '') return false;
  return YES.has(plain) || YES.has(plain.replace(THANKS, ''));
}

// ── The bot offering a person ───────────────────────────────────────────────────────────────────────────────────────

const OFFERS = [
  // en: "shall I connect you with the team?", "would you like to speak to a colleague?", "I can put you through"
  `${any('shall', 'should', 'can', 'may', 'could')} i ${any('connect', 'transfer', 'put', 'pass')} you`,
  `i can ${any('connect', 'transfer', 'put', 'pass')} you`,
  `${any('would', 'do')} you ${any('like', 'want')} (?:me )?to ${any('connect', 'transfer', 'put')} you`,
  `${any('would', 'do')} you ${any('like', 'want')} to ${any('speak', 'talk', 'chat')} ${any('to', 'with')}`,
  `${any('would', 'do')} you ${any('like', 'want')} to be ${any('connected', 'transferred', 'put through')}`,
  `${any('would', 'do')} you ${any('like', 'want')} ${EN_PERSON}`,
  // nl: "zal ik u doorverbinden met het team?", "wilt u een medewerker spreken?"
  `${any('zal', 'kan', 'mag')} ik ${any('u', 'je', 'jou')} ${any('doorverbinden', 'verbinden', 'in contact brengen')}`,
  `ik kan ${any('u', 'je', 'jou')} ${any('doorverbinden', 'verbinden', 'in contact brengen')}`,
  `${any('wilt', 'wil')} ${any('u', 'je')} (?:graag )?(?:met )?(?:${any(NL_PERSON, 'iemand')} )?(?:${any('van', 'bij')} [\\p{L} ]{1,30} )?${any('spreken', 'praten', 'chatten', 'doorverbonden worden', 'worden doorverbonden')}`,
  // de: "soll ich Sie mit einem Mitarbeiter verbinden?", "möchten Sie mit jemandem sprechen?"
  `soll ich ${any('sie', 'dich')} (?:[\\p{L}]+ ){0,4}${any('verbinden', 'weiterleiten', 'durchstellen')}`,
  `${any('mochten', 'wollen', 'mochtest', 'willst')} ${any('sie', 'du')} mit (?:[\\p{L}]+ ){0,3}${any('sprechen', 'reden', 'verbunden werden')}`,
  // fr: "voulez-vous que je vous mette en relation avec l'équipe ?", "souhaitez-vous parler à un conseiller ?"
  `${any('voulez', 'souhaitez', 'veux', 'souhaites')}[- ]${any('vous', 'tu')} ${any('que je vous mette en relation', 'que je te mette en relation', 'parler a', 'parler avec', 'etre mis en relation', 'etre mise en relation')}`,
  `${any('dois', 'puis')}[- ]je vous ${any('mettre en relation', 'transferer', 'passer')}`,
];
const OFFER = new RegExp(words(OFFERS.join('|')), 'u');

/** Whether a reply offers the customer a person, so that a plain yes to it asks for one. */
export function offersPerson(reply: string): boolean {
  return OFFER.test(normaliseForMatching(reply));
}

/**
 * Whether this message asks for a person: in its own words, or as a yes when `offered` (the reply just before it
 * offered a person, {@link offersPerson}). A yes at any other time is just a yes.
 */
export function requestsPerson(text: string, offered: boolean): boolean {
  return asksForPerson(text) || (offered && acceptsOffer(text));
}
