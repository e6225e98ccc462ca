/**
 * Words as the knowledge search and the embedded answerer compare them (docs/architecture.md, "Knowledge answers"):
 * lowercase, accents folded, letters and digits only; stopwords of English, Dutch, German and French (customers mix
 * languages, so every list always applies), including the words that frame a question rather than say what it is about
 * ("how long does … take", "hoe lang duurt …", "wie lange dauert …") and greetings, thanks and sign-offs.
 */

/** Latin script, punctuation and currency only: the fast path of `words` (a phone turn ranks ten passages with it). */
// eslint-disable-next-line no-control-regex -- every character below U+0250 is Latin-script text, control ones too
const LATIN_TEXT = /^[\u0000-\u024f\u2000-\u206f\u20a0-\u20cf]*$/;
/** A letter with an accent, or a combining mark on its own (a decomposed accent): the text needs folding. */
const HAS_ACCENT = /[\u00c0-\u024f]|\p{M}/u;
/** Letters of the Latin script after folding (ß, ø, æ stay: they have no accent to drop), and digits. */
const LATIN_WORD = /[a-z0-9\u00df-\u00f6\u00f8-\u00ff\u0100-\u024f]+/g;

/** Lowercase, accents folded, split into words of letters and digits. */
export function words(text: string): string[] {
  if (LATIN_TEXT.test(text)) {
    // The same words as below, four times faster: no Unicode property classes over the whole text.
    const folded = HAS_ACCENT.test(text) ? text.normalize('NFD').replace(/[\u0300-\u036f]+/g, '') : text;
    return folded.toLowerCase().match(LATIN_WORD) ?? [];
  }
  return (
    text
      .normalize('NFD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/**
 * Greetings, thanks and sign-offs (English, Dutch, German, French): stopwords, and a clause that opens with one is
 * politeness, with the name it may carry ("Hi Jan", "groetjes Marieke"), not the question (src/knowledge/query.ts).
 */
export const GREETINGS: ReadonlySet<string> = new Set(
  (
    'hi hello hey hiya dear thanks thank thx cheers regards greetings bye goodbye ' +
    'hoi hallo hee hey groetjes groeten groet gegroet mvg bedankt dank dankjewel dankuwel alvast goedemorgen ' +
    'goedemiddag goedenavond goedendag doei vriendelijke hartelijke hartelijk ' +
    'moin servus tschuss danke dankeschon vielen herzlichen herzlich gruss grusse gruß gruße liebe lieber freundlichen mfg ' +
    'bonjour bonsoir salut merci cordialement'
  ).split(' '),
);

export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    // English: function words, then the words that frame a question.
    'a an the and or but if then of to in on at by for with from about as is are was were be been being am do does did ' +
    'have has had i me my we our us you your he she it its they them their this that these those what which who whom ' +
    'when where why how can could would should will shall may might must not no yes please thanks thank hi hello hey ' +
    'there here so too very just also any some all more most much many get got want need like know tell ' +
    'long take takes taking accept accepted offer sell possible still really anything something someone way ways ' +
    'okay ok else does doing done let lets ask question questions info information policy policies option options ' +
    'rule rules visit come comes coming fast quick quickly soon amount amounts kind kinds sort type types exactly lot ' +
    'into onto out up than pls plz work works ' +
    // The tails of contractions (we're, I've, you'll) and pronouns and adverbs that say nothing of a topic.
    've re ll her hers his him only around cannot' +
    // Dutch: function words, then the words that frame a question.
    ' de het een en of maar als dan van naar in op aan bij met voor over om uit te is zijn was waren ben bent wordt ' +
    'worden heb hebt heeft hebben had ik mij me mijn wij we ons onze jij je jou jouw u uw hij zij ze haar hem het ' +
    'dit dat deze die wat welke wie waar wanneer waarom hoe kan kunt kunnen zou zouden wil wilt willen moet moeten ' +
    'mag mogen niet geen ja nee graag dank bedankt hoi hallo er hier daar zo ook nog al alle meer veel even weten ' +
    'lang duurt duren krijg krijgt krijgen jullie kun doen doet iets iemand mogelijk vraag vragen info informatie hebt ' +
    'hoeveel laat gaan gaat komen komt kom langs langskomen dien indienen snel gauw bedrag bedragen soort soorten ' +
    'regels beleid mogelijkheid mogelijkheden precies verkopen verkoop accepteren werkt nu dus wel toch' +
    // German: function words, then the words that frame a question (not "hat", "bin", "gift": English shop words).
    ' der die das den dem des ein eine einen einem einer eines und oder aber wenn dann von zu zum zur im am an auf aus ' +
    'bei mit nach fur uber um vor ist sind war waren bist sein wird werden habe haben hast hatte mich mir mein meine ' +
    'meinen meinem meiner ich wir uns unser unsere du dich dir dein ihr euch euer sie ihnen ihre ihren er es sich dies ' +
    'diese dieser dieses welche welcher welches wer wen wem wo wann warum wie kann kannst konnen konnte wurde wurden ' +
    'mochte mochten wollen muss mussen darf durfen soll sollen nicht kein keine keinen nein bitte auch noch schon mal ' +
    'sehr viel viele mehr alle etwas jemand gibt geben lange dauert dauern bekomme bekommen frage fragen informationen ' +
    'moglich gerne gern ihr wieviel wie viel man selbst ins ims beim vom doch denn nur hoch funktioniert funktionieren ' +
    'habt nun erst jetzt aufs furs ums meines deines seines welchem welchen' +
    // French (a stretch): function words and the framing of a question.
    ' le la les un une des du et ou mais si est sont je tu il elle nous vous ils elles mon ma mes votre vos notre nos ' +
    'ce cette ces que qui quoi quand comment pourquoi combien peux peut pouvez puis avez ai au aux par sur dans avec ' +
    'sans pas ne oui non plait svp' +
    // Greetings, thanks and sign-offs in the four languages: politeness says nothing about what is asked.
    ' ' + [...GREETINGS].join(' ')
  ).split(' '),
);

/** The distinct meaningful words of a text (stopwords and one-letter words dropped), in order of appearance. */
export function keywords(text: string): string[] {
  return [...new Set(words(text).filter((w) => (w.length > 1 || /\p{N}/u.test(w)) && !STOPWORDS.has(w)))];
}

/**
 * Two words match when equal, or when they share a stem: a common prefix of at least 4 characters that leaves at
 * most 2 characters of the shorter word and at most 4 of the longer (open/opening, order/orders, bezorgen/bezorging,
 * deliver/delivered; not terug/terugsturen, a word of its own). A crude stemmer for both languages at once, and
 * deterministic.
 */
export function wordsMatch(a: string, b: string): boolean {
  if (a === b) return true;
  const shorter = Math.min(a.length, b.length);
  if (shorter < 4) return false;
  let common = 0;
  while (common < shorter && a[common] === b[common]) common++;
  return common >= 4 && common >= shorter - 2 && common >= Math.max(a.length, b.length) - 4;
}

/**
 * Optimal string alignment distance (Damerau–Levenshtein without repeated edits of one substring), or `max + 1` as soon
 * as it is certainly above `max`: a swapped pair of letters ("retrun") is one edit, as people mistype.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (a === b) return 0;
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prevPrev[j - 2]! + 1);
      row.push(d);
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    prevPrev = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/** The typos a word of this length may carry and still be recognised: none under 5 letters, one, two from 9. */
export function typoBudget(length: number): number {
  return length < 5 ? 0 : length < 9 ? 1 : 2;
}

/**
 * A customer's word found in a text's word: the same stem (wordsMatch), a Dutch compound that ends or begins with it
 * (kosten in verzendkosten: 5+ letters), the head of the customer's compound (garantie for garantieclaim: 6+ letters,
 * so "terug" is not found for "terugsturen"), or, with `typos`, a typo within the budget that keeps the first letter
 * (people rarely mistype the first letter, and comparing only words that share it keeps this cheap).
 */
export function wordFound(wanted: string, present: string, typos = false): boolean {
  if (wordsMatch(wanted, present)) return true;
  if (wanted.length >= 5 && present.length > wanted.length && (present.endsWith(wanted) || present.startsWith(wanted))) return true;
  if (present.length >= 6 && wanted.length > present.length + 2 && wanted.startsWith(present)) return true;
  if (!typos || wanted[0] !== present[0]) return false;
  const budget = typoBudget(Math.min(wanted.length, present.length));
  return budget > 0 && editDistance(wanted, present, budget) <= budget;
}
