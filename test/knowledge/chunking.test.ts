import { describe, expect, it } from 'vitest';
import { chunkText, countWords, productText, searchConfigFor } from '../../src/knowledge/chunking.ts';
import { CHUNK_MAX_WORDS, CHUNK_MIN_WORDS, CHUNK_OVERLAP_WORDS } from '../../src/knowledge/limits.ts';

/** A paragraph of `sentences` sentences of 10 distinct words each, numbered so every word can be traced. */
function paragraph(id: string, sentences: number): string {
  return Array.from({ length: sentences }, (_, s) => Array.from({ length: 10 }, (_, w) => `${id}s${s}w${w}`).join(' ') + '.').join(' ');
}

describe('chunking a page', () => {
  it('a short page is one chunk, its paragraphs kept', () => {
    expect(chunkText('Eerste alinea.\n\nTweede alinea.')).toEqual(['Eerste alinea.\n\nTweede alinea.']);
  });

  it('empty text gives no chunks', () => {
    expect(chunkText('  \n\n ')).toEqual([]);
  });

  it('keeps paragraphs whole where they fit, about 120–250 words per chunk', () => {
    // Eight paragraphs of 80 words: three per chunk would be 240 words.
    const text = Array.from({ length: 8 }, (_, i) => paragraph(`p${i}`, 8)).join('\n\n');
    const chunks = chunkText(text);
    expect(chunks.map(countWords)).toEqual([240, 240, 160]);
    for (const chunk of chunks) for (const part of chunk.split('\n\n')) expect(countWords(part)).toBe(80);
  });

  it('cuts a paragraph longer than a chunk between sentences, and repeats the last sentences before the cut', () => {
    const chunks = chunkText(paragraph('long', 60));
    expect(chunks.length).toBeGreaterThan(2);
    for (const [i, chunk] of chunks.entries()) {
      expect(countWords(chunk)).toBeLessThanOrEqual(CHUNK_MAX_WORDS + CHUNK_OVERLAP_WORDS);
      expect(chunk).toMatch(/\.$/);
      if (i > 0) {
        // The overlap: the next chunk starts with the whole sentences (at most 30 words) that ended the previous one.
        const overlap = chunk.split('. ').slice(0, CHUNK_OVERLAP_WORDS / 10).join('. ') + '.';
        expect(chunks[i - 1]!.endsWith(overlap)).toBe(true);
      }
    }
  });

  it('loses no word: every word of the page is in some chunk, in order', () => {
    const text = [paragraph('a', 3), paragraph('b', 40), paragraph('c', 2), paragraph('d', 30)].join('\n\n');
    const words = text.split(/\s+/);
    const chunked = new Set(chunkText(text).flatMap((c) => c.split(/\s+/)));
    for (const word of words) expect(chunked.has(word)).toBe(true);
  });

  it('fills a chunk that would stay small with sentences of the next paragraph', () => {
    const chunks = chunkText([paragraph('a', 5), paragraph('b', 30)].join('\n\n'));
    expect(countWords(chunks[0]!)).toBeGreaterThanOrEqual(CHUNK_MIN_WORDS);
  });

  it('cuts a sentence without punctuation longer than a chunk into runs of words', () => {
    const text = Array.from({ length: 600 }, (_, i) => `w${i}`).join(' ');
    const chunks = chunkText(text);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    for (const chunk of chunks) expect(countWords(chunk)).toBeLessThanOrEqual(CHUNK_MAX_WORDS + CHUNK_OVERLAP_WORDS);
  });
});

describe('a product', () => {
  it('is one text of its title, facts and description, in its language', () => {
    expect(
      productText({ title: 'Ringslot ART-2', description: 'Goedgekeurd slot.', price: '39.9500', currency: 'EUR', sku: 'TR-1003', availability: 'in_stock', language: 'nl' }),
    ).toBe('Ringslot ART-2. Prijs: € 39,95. Op voorraad. Artikelnummer: TR-1003.\n\nGoedgekeurd slot.');
    expect(productText({ title: 'Poncho!', description: '', price: 19.95, currency: 'EUR', sku: null, availability: 'preorder', language: 'en' })).toBe(
      'Poncho. Price: €19.95. Available for pre-order.',
    );
    expect(productText({ title: 'Bel', description: 'Ring ring.', price: null, currency: null, sku: null, availability: null, language: null })).toBe('Bel.\n\nRing ring.');
  });
});

describe('the text-search configuration', () => {
  it('nl → dutch, en → english, de → german, fr → french, anything else → simple', () => {
    expect(searchConfigFor('nl')).toBe('dutch');
    expect(searchConfigFor('en')).toBe('english');
    expect(searchConfigFor('de')).toBe('german');
    expect(searchConfigFor('fr')).toBe('french');
    expect(searchConfigFor('es')).toBe('simple');
    expect(searchConfigFor(null)).toBe('simple');
  });
});
