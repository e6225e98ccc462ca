/**
 * The lexicon (docs/lexicon.md): general words of one meaning per language, British and American spellings, and
 * translations to and from English, read from the data files scripts/build-lexicon.ts writes.
 */
import { describe, expect, it } from 'vitest';
import { relatedWords, translations } from '../../src/knowledge/lexicon/index.ts';
import { STOPWORDS } from '../../src/text/words.ts';

describe('words of the same meaning', () => {
  it.each([
    ['en', 'repair', 'fix'],
    ['en', 'fix', 'repair'],
    ['en', 'hire', 'rent'],
    ['en', 'bike', 'bicycle'],
    ['en', 'shop', 'store'],
    ['en', 'invoice', 'bill'],
    ['nl', 'fiets', 'rijwiel'],
    ['nl', 'rijwiel', 'fiets'],
    ['nl', 'herstellen', 'repareren'],
    ['nl', 'repareren', 'herstellen'],
    ['de', 'fahrrad', 'rad'],
    ['de', 'rad', 'fahrrad'],
    ['de', 'reparieren', 'instandsetzen'],
    ['de', 'instandsetzen', 'reparieren'],
  ])('in %s, "%s" relates to "%s"', (language, word, related) => {
    expect(relatedWords(language, word)).toContain(related);
  });

  it.each([
    ['tyre', 'tire'],
    ['tire', 'tyre'],
    ['tyres', 'tires'],
    ['colour', 'color'],
    ['color', 'colour'],
    ['organise', 'organize'],
    ['centre', 'center'],
  ])('British and American spellings are one word: "%s" relates to "%s"', (word, other) => {
    expect(relatedWords('en', word)[0]).toBe(other);
  });

  it('reads words as the search folds them: capitals and accents do not matter, nor a region in the language tag', () => {
    expect(relatedWords('de', 'Fahrrad')).toContain('rad');
    expect(relatedWords('de-AT', 'FAHRRAD')).toEqual(relatedWords('de', 'fahrrad'));
    expect(relatedWords('en-GB', 'Repair')).toContain('fix');
    // Zurückgabe, folded: zuruckgabe; its words are folded too (Rücksendung → rucksendung).
    expect(relatedWords('de', 'Rückgabe')).toContain('rucksendung');
    expect(relatedWords('de', 'Rückgabe').every((w) => w === w.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase())).toBe(true);
  });

  it('keeps unrelated words apart: a discount is not a sale, a return is not a tax return, a bike is not a car', () => {
    expect(relatedWords('en', 'discount')).not.toContain('sale');
    expect(relatedWords('en', 'sale')).not.toContain('discount');
    expect(relatedWords('en', 'return')).not.toContain('tax return');
    expect(relatedWords('en', 'return')).not.toContain('income tax return');
    expect(relatedWords('en', 'delivery')).not.toContain('obstetrical delivery');
    expect(relatedWords('en', 'repair')).not.toContain('bushel');
    expect(relatedWords('nl', 'fiets')).not.toContain('auto');
    expect(relatedWords('nl', 'repareren')).not.toContain('jam');
    expect(relatedWords('de', 'fahrrad')).not.toContain('auto');
    expect(relatedWords('de', 'fahrrad')).not.toContain('fahrzeug');
    expect(relatedWords('de', 'fahrrad')).not.toContain('drahtesel');
  });

  it('never gives the word itself, a stopword or a single letter, and at most eight words', () => {
    const samples: [string, string][] = [
      ['en', 'repair'], ['en', 'store'], ['en', 'help'], ['en', 'try'], ['en', 'cheap'], ['en', 'order'],
      ['nl', 'fiets'], ['nl', 'bezorging'], ['nl', 'korting'], ['nl', 'winkel'], ['nl', 'betalen'],
      ['de', 'rad'], ['de', 'reparieren'], ['de', 'lieferung'], ['de', 'rabatt'], ['de', 'kosten'],
    ];
    for (const [language, word] of samples) {
      const related = relatedWords(language, word);
      expect(related.length, `${language} ${word}`).toBeGreaterThan(0);
      expect(related.length).toBeLessThanOrEqual(8);
      expect(related).not.toContain(word);
      for (const other of related) {
        expect(other.length, other).toBeGreaterThan(1);
        expect(STOPWORDS.has(other), other).toBe(false);
      }
    }
  });

  it('knows nothing of an unknown word, an empty one or a language it has no data for', () => {
    expect(relatedWords('en', 'qwxzvb')).toEqual([]);
    expect(relatedWords('en', '')).toEqual([]);
    expect(relatedWords('en', 'the')).toEqual([]);
    expect(relatedWords('xx', 'repair')).toEqual([]);
    expect(relatedWords('', 'repair')).toEqual([]);
  });

  it('answers the same list again without reading the data again', () => {
    const first = relatedWords('en', 'repair');
    expect(relatedWords('en', 'repair')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });
});

describe('translations', () => {
  it.each([
    ['nl', 'en', 'fiets', 'bicycle'],
    ['nl', 'en', 'fiets', 'bike'],
    ['nl', 'en', 'bezorging', 'delivery'],
    ['nl', 'en', 'repareren', 'repair'],
    ['nl', 'en', 'factuur', 'invoice'],
    ['en', 'nl', 'bicycle', 'fiets'],
    ['en', 'nl', 'repair', 'repareren'],
    ['de', 'en', 'Lieferung', 'delivery'],
    ['de', 'en', 'Fahrrad', 'bicycle'],
    ['de', 'en', 'reparieren', 'repair'],
    ['de', 'en', 'mieten', 'rent'],
    ['en', 'de', 'bicycle', 'fahrrad'],
    ['en', 'de', 'repair', 'instandsetzen'],
  ])('%s → %s: "%s" is "%s"', (from, to, word, translated) => {
    expect(translations(from, to, word)).toContain(translated);
  });

  it('gives at most five, folded, and nothing for a pair of languages without data or an unknown word', () => {
    for (const [from, to, word] of [['nl', 'en', 'prijs'], ['de', 'en', 'Preis'], ['en', 'de', 'delivery'], ['en', 'nl', 'delivery']] as const) {
      const found = translations(from, to, word);
      expect(found.length).toBeGreaterThan(0);
      expect(found.length).toBeLessThanOrEqual(5);
      expect(found.every((w) => w === w.toLowerCase())).toBe(true);
    }
    expect(translations('nl', 'de', 'fiets')).toEqual([]);
    expect(translations('en', 'en', 'bike')).toEqual([]);
    expect(translations('nl', 'en', 'qwxzvb')).toEqual([]);
  });

  it('keeps a translation to its common meanings: a Dutch delivery is not a childbirth', () => {
    expect(translations('nl', 'en', 'bezorging')).not.toContain('childbirth');
    expect(translations('nl', 'en', 'fiets')).not.toContain('wheel');
    expect(translations('de', 'en', 'Fahrrad')).not.toContain('vehicle');
  });
});
