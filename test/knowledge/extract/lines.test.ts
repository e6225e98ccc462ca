import { describe, expect, it } from 'vitest';
import { joinBrokenLines } from '../../../src/knowledge/extract/index.ts';
import { withoutTitleLine } from '../../../src/knowledge/extract/lines.ts';

describe('the paragraph rule: a line break is a space, a blank line a paragraph', () => {
  it('joins a sentence broken over lines into one sentence', () => {
    expect(joinBrokenLines('Shoes that have been worn outside\ncannot be returned.')).toBe('Shoes that have been worn outside cannot be returned.');
  });

  it('separates paragraphs by one blank line, however many blank or white lines there were', () => {
    expect(joinBrokenLines('\n\nFirst line\nstill first.\r\n \r\n\n\n\tSecond.  \n\n')).toBe('First line still first.\n\nSecond.');
  });

  it('joins a word hyphenated at a line end', () => {
    expect(joinBrokenLines('Unworn items can be re-\nturned within 30 days.')).toBe('Unworn items can be returned within 30 days.');
    expect(joinBrokenLines('Bestellingen worden ver-\nzonden met PostNL.')).toBe('Bestellingen worden verzonden met PostNL.');
  });

  it('keeps the hyphen of a compound: a known prefix, a capital or a number after it, a number before it', () => {
    expect(joinBrokenLines('Send us an e-\nmail or place a pre-\norder.')).toBe('Send us an e-mail or place a pre-order.');
    expect(joinBrokenLines('Shipping within the Benelux-\nRegion is free.')).toBe('Shipping within the Benelux-Region is free.');
    expect(joinBrokenLines('Returns have a 30-\nday window.')).toBe('Returns have a 30-day window.');
  });

  it('reads a dash after a space as a dash, and a soft hyphen as a place a word was broken', () => {
    expect(joinBrokenLines('Free returns -\nalways.')).toBe('Free returns - always.');
    expect(joinBrokenLines('Verzend\u00ad\nkosten')).toBe('Verzendkosten');
  });

  it('starts a paragraph at each list item, so a list does not become one sentence', () => {
    expect(joinBrokenLines('We ship to:\n- the Netherlands\n- Belgium and\n  Luxembourg\n1. Order\n2) Pay')).toBe(
      'We ship to:\n\n- the Netherlands\n\n- Belgium and Luxembourg\n\n1. Order\n\n2) Pay',
    );
  });

  it('does not take a year at a line start for a numbered item', () => {
    expect(joinBrokenLines('Founded in\n2024. We ship daily.')).toBe('Founded in 2024. We ship daily.');
  });

  it('joins a paragraph of 100,000 lines in time proportional to its length (a PDF whose lines never end a sentence)', () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => (i % 2 ? `line ${i} of a catalogue that goes on and re-` : `turned ${i} and on`));
    const started = performance.now();
    const joined = joinBrokenLines(lines.join('\n'));
    const ms = performance.now() - started;
    expect(joined.includes('\n')).toBe(false);
    expect(joined.startsWith('turned 0 and on line 1 of a catalogue that goes on and returned 2 and on')).toBe(true);
    // Generous for a shared machine: it takes tens of ms; in the square of its length it took minutes.
    expect(ms).toBeLessThan(3_000);
  });
});

describe('a first line that repeats the title is not part of the text', () => {
  it('drops it in any case and punctuation, and keeps a first line that says more', () => {
    expect(joinBrokenLines(withoutTitleLine('RETURNS POLICY:\nShoes that have been worn\noutside cannot be returned.', 'Returns policy'))).toBe(
      'Shoes that have been worn outside cannot be returned.',
    );
    expect(withoutTitleLine('Returns policy for shoes\nmore', 'Returns policy')).toBe('Returns policy for shoes\nmore');
  });
});
