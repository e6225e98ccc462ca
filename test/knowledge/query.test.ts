/** What a customer's question asks the knowledge base (src/knowledge/query.ts, src/knowledge/vocabulary.ts, src/text/words.ts). */
import { describe, expect, it } from 'vitest';
import { anyWords, groupWeight, PROPER_NOUN_SHARE, relevance, toTsquery, understandQuery, type Lexicon } from '../../src/knowledge/query.ts';
import { Vocabulary } from '../../src/knowledge/vocabulary.ts';
import { editDistance, wordFound } from '../../src/text/words.ts';

const said = (text: string, language: string, vocabulary?: Vocabulary) => understandQuery(text, language, vocabulary).map((g) => g.said);
const alternatives = (text: string, language: string, vocabulary?: Vocabulary) =>
  understandQuery(text, language, vocabulary).map((g) => g.alternatives.map((a) => a.join(' ')));

describe('a question becomes groups, one per thing it asks about', () => {
  it('drops stopwords and the words that frame a question', () => {
    expect(said('How long does delivery take?', 'en')).toEqual(['delivery']);
    expect(said('Hoe lang duurt de bezorging?', 'nl')).toEqual(['bezorging']);
    expect(said('Do you accept Mastercard?', 'en')).toEqual(['mastercard']);
  });

  it('a group holds the words of one meaning: postage finds shipping, guarantee finds warranty', () => {
    const [postage] = alternatives('postage', 'en');
    expect(postage).toEqual(expect.arrayContaining(['postage', 'shipping', 'delivery']));
    expect(alternatives('guarantee', 'en')[0]).toContain('warranty');
    expect(alternatives('kadobon', 'nl')[0]).toContain('cadeaubon');
  });

  it('finds phrases, also with words between: "send something back" is a return', () => {
    expect(said('Can I send something back?', 'en')).toEqual(['send back']);
    expect(alternatives('Can I send something back?', 'en')[0]).toContain('return');
    expect(said('when do i get my money back', 'en')).toEqual(['money back']);
  });

  it('skips the scene: "vorige week" and "last week" are not what is asked', () => {
    expect(said('ik heb vorige week een fiets besteld', 'nl')).toEqual(['fiets', 'besteld']);
    expect(said('I ordered last week', 'en')).toEqual(['ordered']);
  });

  it('function words and framing words are no groups: "into", "man", "selbst", "work", "hoch"', () => {
    expect(said('can i bring my dog into the shop', 'en')).toEqual(['bring', 'dog', 'shop']);
    expect(said('kann man selbst parken', 'de')).toEqual(['parken']);
    // "How does … work", "how high is": the framing of a question, not what it asks about.
    expect(said('how does the rewards card work pls', 'en')).toEqual(['rewards', 'card']);
    expect(said('hoe werkt de klantenkaart', 'nl')).toEqual(['klantenkaart']);
    expect(said('wie hoch ist die Kurtaxe, wie funktioniert das', 'de')).toEqual(['kurtaxe']);
  });

  it('one group per meaning, however often it is said', () => {
    expect(said('shipping shipping postage', 'en')).toEqual(['shipping']);
  });

  it('a language without a thesaurus keeps its words as they are', () => {
    expect(alternatives('Expédition coûts', 'fr')).toEqual([['expedition'], ['couts']]);
  });

  it("German has the thesaurus's meanings too, and its framing words are stopwords", () => {
    expect(said('Wie lange dauert der Versand?', 'de')).toEqual(['versand']);
    expect(alternatives('Versand', 'de')[0]).toEqual(expect.arrayContaining(['versand', 'lieferung', 'porto']));
    expect(alternatives('Gutschein', 'de')[0]).toContain('geschenkkarte');
  });
});

describe('the vocabulary reads typos and compounds as the words the shop uses', () => {
  const vocabulary = new Vocabulary(
    [
      { word: 'return', chunks: 3 },
      { word: 'openingstijden', chunks: 2 },
      { word: 'garantie', chunks: 4 },
      { word: 'payment', chunks: 5 },
      { word: 'Café', chunks: 1 },
    ],
    20,
  );

  it('corrects an unknown word to the nearest known one with the same first letter', () => {
    expect(vocabulary.corrections('retrun')).toEqual(['return']);
    expect(vocabulary.corrections('paymnet')).toEqual(['payment']);
    expect(vocabulary.corrections('openingstyden')).toEqual(['openingstijden']);
    // A typo in the first letter, or too many for the word's length, is not corrected.
    expect(vocabulary.corrections('eeturn')).toEqual([]);
    expect(vocabulary.corrections('rtrn')).toEqual([]);
  });

  it('finds an unknown compound by the known word it begins with', () => {
    expect(vocabulary.compoundHead('garantieclaim')).toBe('garantie');
    expect(alternatives('hoe dien ik een garantieclaim in', 'nl', vocabulary)[0]).toContain('garantie');
  });

  it('a function word is no compound head: "selbstbedienung" is not about "selbst"', () => {
    const withSelbst = new Vocabulary([{ word: 'selbst', chunks: 2 }, { word: 'hunde', chunks: 3 }], 20);
    expect(withSelbst.compoundHead('selbstbedienung')).toBeNull();
    expect(withSelbst.compoundHead('hundewaschanlage')).toBe('hunde');
  });

  it("an unknown compound's known last part counts as a related word: \"treuekarte\" is a karte, but not this shop's", () => {
    const cards = new Vocabulary([{ word: 'Kundenkarte', chunks: 1 }, { word: 'Karte', chunks: 2 }], 20);
    expect(cards.compoundTail('treuekarte')).toBe('karte');
    const [group] = understandQuery('treuekarte', 'de', cards);
    expect(group).toMatchObject({ said: 'treuekarte', alternatives: [['treuekarte'], ['karte']], relatedFrom: 1 });
    // Found only by its last part, it never makes a passage an answer on its own.
    expect(relevance([group!], 'Karte', 'Die Karte ist kostenlos.', cards, 'de')).toBeLessThan(0.45);
  });

  it('German umlauts written out ("ue", "oe") are read as the knowledge base spells them, when it holds that spelling', () => {
    const hours = new Vocabulary([{ word: 'Öffnungszeiten', chunks: 1 }, { word: 'Hunde', chunks: 2 }], 20);
    expect(said('oeffnungszeiten?', 'de', hours)).toEqual(['offnungszeiten']);
    // "fuer" is the stopword für; "treue" is a word of its own and stays.
    expect(said('preis fuer hunde', 'de', hours)).toEqual(['preis', 'hunde']);
    expect(said('treue', 'de', hours)).toEqual(['treue']);
  });

  it('folds accents as questions are folded, and weighs rare words more', () => {
    expect(vocabulary.has('cafe')).toBe(true);
    expect(vocabulary.weight('cafe')).toBeGreaterThan(vocabulary.weight('payment'));
    expect(vocabulary.weight('pizza')).toBeGreaterThan(vocabulary.weight('cafe'));
  });

  it('a hyphenated word of the knowledge base is found written as one: "ebike" is e-bike', () => {
    const hyphens = new Vocabulary([{ word: 'e-bike', chunks: 1 }, { word: 'e', chunks: 1 }, { word: 'bike', chunks: 2 }, { word: 'rent', chunks: 1 }], 4);
    const groups = understandQuery('can I rent an ebike', 'en', hyphens);
    expect(groups.map((g) => g.alternatives.map((a) => a.join(' ')))).toEqual([['rent'], ['ebike', 'e bike']]);
    expect(groups[1]!.unknown).toBeUndefined();
    expect(relevance(groups, 'Prices', 'Rent an e-bike for 29 euro a day.', hyphens)).toBeCloseTo(0.8);
  });

  it('a corrected word joins the group of the word it stands for', () => {
    expect(alternatives('retrun', 'en', vocabulary)[0]).toEqual(expect.arrayContaining(['retrun', 'return', 'send back']));
  });
});

describe('the search is given tsquery input that is only quoted words', () => {
  it('every group, each by any of its words; a phrase by all of its words', () => {
    const groups = understandQuery("gift card o'reilly & | ! <->", 'en');
    const query = toTsquery(groups);
    expect(query).toMatch(/^\(('[\p{L}\p{N}]+'( & '[\p{L}\p{N}]+')*)( \| '[\p{L}\p{N}]+'( & '[\p{L}\p{N}]+')*)*\)( & \(.*\))*$/u);
    expect(query).toContain("('gift' & 'card' | ");
    expect(anyWords(groups).split(' ')).toEqual(expect.arrayContaining(['gift', 'card', 'voucher', 'reilly']));
  });
});

describe('relevance: the weighted share of the groups a passage holds', () => {
  const groups = understandQuery('is the warranty valid in spain', 'en');
  it('a passage that holds every group scores high, a title holding them more', () => {
    const all = understandQuery('warranty frame', 'en');
    expect(relevance(all, 'Warranty on frames', 'Frames have ten years of warranty.')).toBe(1);
    expect(relevance(all, 'Warranty', 'Frames have ten years of warranty.')).toBeCloseTo(0.9);
    expect(relevance(all, 'Other', 'Frames have ten years of warranty.')).toBeCloseTo(0.8);
  });
  it('a word the passage lacks keeps the score below the threshold', () => {
    expect(relevance(groups, 'Warranty', 'All products have a two-year warranty, valid for two years.')).toBeLessThan(0.8);
    expect(relevance([], 'Warranty', 'text')).toBe(0);
  });
});

describe('words the knowledge base does not hold never stop the search', () => {
  const vocabulary = new Vocabulary(
    [
      { word: 'delivery', chunks: 2 },
      { word: 'netherlands', chunks: 1 },
      { word: 'payment', chunks: 3 },
      { word: 'refund', chunks: 1 },
      { word: 'rent', chunks: 1 },
      { word: 'bike', chunks: 4 },
      { word: 'versand', chunks: 1 },
    ],
    10,
  );

  it.each([
    ["Hi, I'm Jan. How long does delivery take?", 'en'],
    ['how long does delivery take? thanks a lot, Marieke', 'en'],
    ['Hello! Quick question: how long does delivery take? Kind regards. Marieke de Vries', 'en'],
    ['hi im jan, how long does delivery take', 'en'],
    ['Goedemorgen, ik ben Sanne. Hoe lang duurt de delivery? Alvast bedankt!', 'nl'],
    ['Hallo, ich bin Jonas. Wie lange dauert die Delivery? Danke und viele Grüße', 'de'],
    ['Where is my order 884213? How long does delivery take?', 'en'],
  ])('greetings, names, thanks and order numbers are not what is asked: %s', (text, language) => {
    expect(said(text, language, vocabulary).filter((w) => w !== 'order')).toEqual(['delivery']);
  });

  it('in a message written in capitals or Title Case a capital marks no name', () => {
    for (const text of ['CAN I PAY WITH BITCOIN', 'Can I Pay With Bitcoin?']) {
      const coin = understandQuery(text, 'en', vocabulary).find((g) => g.said === 'bitcoin');
      expect(coin).toMatchObject({ unknown: true });
      expect(coin!.share).toBeUndefined();
    }
  });

  it('without a vocabulary nothing is dropped as a name: it cannot tell a name from a word', () => {
    expect(said('Hi, I am Jan', 'en')).toEqual(['jan']);
  });

  it('a place or brand the knowledge base does not hold weighs little; an unknown lowercase word weighs fully', () => {
    const [delivery, place] = understandQuery('how long does delivery take to Amersfoort', 'en', vocabulary);
    expect(place).toMatchObject({ said: 'amersfoort', unknown: true, share: PROPER_NOUN_SHARE });
    expect(groupWeight(place!, vocabulary)).toBeLessThan(groupWeight(delivery!, vocabulary));
    const [, coin] = understandQuery('can i pay with bitcoin', 'en', vocabulary);
    expect(coin).toMatchObject({ said: 'bitcoin', unknown: true });
    expect(coin!.share).toBeUndefined();
    expect(relevance(understandQuery('can i pay with bitcoin', 'en', vocabulary), 'Payment', 'Payment by iDEAL or card.', vocabulary)).toBeLessThan(0.45);
  });

  it('the precise search does not require a group the knowledge base cannot hold; a known word is required', () => {
    const groups = understandQuery('delivery Amersfoort bitcoin', 'en', vocabulary);
    expect(toTsquery(groups)).toBe("('delivery' | 'shipping' | 'ship' | 'ships' | 'shipped' | 'shipment' | 'deliver' | 'delivers' | 'delivered' | 'postage' | 'dispatch' | 'dispatched' | 'arrive' | 'arrives' | 'arrival')");
    // A word that shares its stem with a known word may be there ("deliveries" in a page that says "delivery").
    expect(understandQuery('netherland', 'en', vocabulary)[0]!.unknown).toBeUndefined();
    // Nothing known: every group is required, as before (the recall search then finds what it can).
    expect(toTsquery(understandQuery('bitcoin zeppelin', 'en', vocabulary))).toBe("('bitcoin') & ('zeppelin')");
  });

  it('a vocabulary cut at its limit knows every word: a word it lacks may still be in a page', () => {
    const cut = new Vocabulary([{ word: 'delivery', chunks: 2 }], 10, false);
    expect(understandQuery('bitcoin', 'en', cut)[0]!.unknown).toBeUndefined();
  });
});

describe("a lexicon's related words join a group and count less than the customer's own word", () => {
  const lexicon: Lexicon = {
    relatedWords: (_language, word) => (word === 'hire' ? ['rent', 'lease', 'charter'] : word === 'cycle' ? ['bike'] : []),
    translations: () => [],
  };
  const vocabulary = new Vocabulary([{ word: 'rent', chunks: 1 }, { word: 'bike', chunks: 3 }, { word: 'bikes', chunks: 1 }], 6);

  it('only the related words the knowledge base holds are searched', () => {
    const [hire] = understandQuery('hire', 'en', vocabulary, lexicon);
    expect(hire!.alternatives.map((a) => a.join(' '))).toEqual(['hire', 'rent']);
    expect(hire!.relatedFrom).toBe(1);
    expect(hire!.unknown).toBeUndefined();
    expect(toTsquery([hire!])).toBe("('hire' | 'rent')");
  });

  it("a passage holding only the related word scores less than one in the customer's words, and is never a full match", () => {
    const groups = understandQuery('can I hire an electric bike', 'en', vocabulary, lexicon);
    const related = relevance(groups, 'Rental', 'You can rent an electric bike for 29 euro a day.', vocabulary);
    const own = relevance(groups, 'Rental', 'You can hire an electric bike for 29 euro a day.', vocabulary);
    expect(related).toBeGreaterThan(0);
    expect(related).toBeLessThan(own);
    expect(related).toBeLessThan(0.8);
  });
});

describe("a word no page holds is found by the lexicon's related word, which stands for it", () => {
  const lexicon: Lexicon = {
    relatedWords: (_language, word) => (word === 'fahrstuhl' ? ['aufzug', 'lift'] : word === 'schwimmbad' ? ['bad'] : []),
    translations: () => [],
  };
  const vocabulary = new Vocabulary([{ word: 'Aufzug', chunks: 1 }, { word: 'Bad', chunks: 1 }, { word: 'Zimmer', chunks: 3 }], 8);

  it('"gibt es einen Fahrstuhl" on a page that says "Aufzug" is answered, though less than in its own word', () => {
    const groups = understandQuery('gibt es einen Fahrstuhl', 'de', vocabulary, lexicon);
    const bridged = relevance(groups, 'Zimmer', 'Ein Aufzug fährt in alle Etagen.', vocabulary, 'de');
    expect(bridged).toBeGreaterThanOrEqual(0.45);
    expect(bridged).toBeLessThan(0.8);
  });

  it('a related word that is part of the customer\'s word is a broader one: "Schwimmbad" is not the room\'s "Bad"', () => {
    const groups = understandQuery('haben Sie ein Schwimmbad', 'de', vocabulary, lexicon);
    expect(relevance(groups, 'Zimmer', 'Alle Zimmer haben ein eigenes Bad.', vocabulary, 'de')).toBeLessThan(0.45);
  });
});

describe('a related word never makes a passage that holds half of the question an answer', () => {
  const lexicon: Lexicon = { relatedWords: (_l, word) => (word === 'phone' ? ['telephone', 'ring'] : word === 'car' ? ['motorcar'] : []), translations: () => [] };
  const vocabulary = new Vocabulary([{ word: 'ring', chunks: 1 }, { word: 'number', chunks: 1 }, { word: 'lock', chunks: 1 }, { word: 'motor', chunks: 1 }, { word: 'tyres', chunks: 1 }], 8);

  it('"phone" is not the "ring" of a ring lock', () => {
    const groups = understandQuery('what is your phone number', 'en', vocabulary, lexicon);
    expect(relevance(groups, 'Locks', 'Buy a good ring lock; we register the frame number of every bike.', vocabulary)).toBeLessThan(0.45);
  });

  it('a related word must be held as it is: "motorcar" is not "motor"', () => {
    const [car] = understandQuery('car tyres', 'en', vocabulary, lexicon);
    expect(car!.alternatives).toEqual([['car']]);
  });
});

describe("words are compared by their stems in the question's language", () => {
  it('taxes finds tax, Fahrräder finds Fahrrad', () => {
    expect(relevance(understandQuery('taxes', 'en'), 'Other', 'All prices include tax.', undefined, 'en')).toBeCloseTo(0.8);
    // Without the language the words are too short for the comparison by common beginning.
    expect(relevance(understandQuery('taxes', 'en'), 'Other', 'All prices include tax.')).toBe(0);
    expect(relevance(understandQuery('Fahrräder', 'de'), 'Andere', 'Jedes Fahrrad wird geprüft.', undefined, 'de')).toBeCloseTo(0.8);
  });
});

describe('words', () => {
  it.each([
    ['retrun', 'return', 1],
    ['openingstyden', 'openingstijden', 2],
    ['abc', 'xyz', 3],
  ])('edit distance %s ~ %s = %i', (a, b, d) => expect(editDistance(a, b, 3)).toBe(d));

  it.each([
    ['kosten', 'verzendkosten', false, true],
    ['garantieclaim', 'garantie', false, true],
    ['terugsturen', 'terug', false, false],
    ['paymnet', 'payment', true, true],
    ['paymnet', 'payment', false, false],
    ['ship', 'shop', true, false],
  ])('%s found in %s (typos %s): %s', (wanted, present, typos, expected) => expect(wordFound(wanted, present, typos)).toBe(expected));
});
