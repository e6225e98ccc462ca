import { describe, expect, it } from 'vitest';
import { detectLanguage } from '../../src/text/detect-language.ts';

describe('the language a customer writes in', () => {
  it.each([
    ['Waar is mijn bestelling?', 'nl'],
    ['Ik wil mijn bestelling annuleren', 'nl'],
    ['Hoi, kan ik iemand spreken?', 'nl'],
    ['Where is my order?', 'en'],
    ['Can I talk to someone please', 'en'],
    ['Wo ist meine Bestellung?', 'de'],
  ])('%j is %s', (text, language) => {
    expect(detectLanguage(text)).toBe(language);
  });

  it.each([['ok'], ['Hallo'], ['12345'], [''], ['   ']])('%j cannot be told: null, the conversation keeps its language', (text) => {
    expect(detectLanguage(text)).toBeNull();
  });

  it('looks at the start of a very long message only', () => {
    expect(detectLanguage(`${'Waar is mijn bestelling? '.repeat(4_000)}`)).toBe('nl');
    expect(detectLanguage(`Where is my order? ${'x'.repeat(100_000)}`)).toBeNull();
  });
});
