/** Words as the knowledge search and the embedded answerer compare them (src/text/words.ts). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { words } from '../../src/text/words.ts';

/** The general rule `words` follows: NFD, marks dropped, lowercase, runs of letters and digits. */
const byTheRule = (text: string) =>
  text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];

describe('words', () => {
  it.each([
    ['Café Crème, Straße — ø æ Ærø! €4,95 × 3 ÷ 2', ['cafe', 'creme', 'straße', 'ø', 'æ', 'ærø', '4', '95', '3', '2']],
    ['Verzending naar België: € 7,95', ['verzending', 'naar', 'belgie', '7', '95']],
    ['naïve coöperatie', ['naive', 'cooperatie']],
  ])('%s → %j', (text, expected) => expect(words(text)).toEqual(expected));

  it('the fast path for Latin text gives exactly the words of the general rule, whatever the text', () => {
    const unit = fc.constantFrom(...'aZéÉßøæÆ İıŁłĞ€×÷.,-09ÿŸ'.split(''), '\u0301', '\u2019', 'ж', '中', '😀');
    fc.assert(
      fc.property(fc.string({ unit }), (text) => {
        expect(words(text)).toEqual(byTheRule(text));
      }),
      { numRuns: 3_000, seed: 7 },
    );
  });
});
