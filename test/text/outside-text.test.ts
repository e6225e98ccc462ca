import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cleanJson, cleanText, isCleanText, REPLACEMENT_CHARACTER } from '../../src/text/outside-text.ts';

describe('outside text: U+0000 and lone surrogates become U+FFFD, nothing else changes', () => {
  it('replaces U+0000 and lone surrogates, keeps pairs, emoji and other control characters', () => {
    expect(cleanText('a\u0000b')).toBe(`a${REPLACEMENT_CHARACTER}b`);
    expect(cleanText('x\uD800y')).toBe(`x${REPLACEMENT_CHARACTER}y`);
    expect(cleanText('\uDC00')).toBe(REPLACEMENT_CHARACTER);
    expect(cleanText('😀 \u0001\u200f')).toBe('😀 \u0001\u200f');
  });

  it('property: the result is always clean, as long as the input, and unchanged when the input was clean', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const cleaned = cleanText(s);
        expect(isCleanText(cleaned)).toBe(true);
        expect(cleaned.length).toBe(s.length);
        if (isCleanText(s)) expect(cleaned).toBe(s);
        // What PostgreSQL's jsonb needs: JSON.stringify escapes no lone surrogate and no U+0000.
        expect(JSON.stringify(cleaned)).not.toMatch(/\\u(0000|d[89a-f])/i);
      }),
    );
  });

  it('property: cleanJson cleans every string and property name at any depth', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, bad) => {
        const doc = JSON.parse(JSON.stringify({ [bad]: [value, bad], nested: { deep: bad } })) as unknown;
        const cleaned = cleanJson(doc);
        expect(JSON.stringify(cleaned)).not.toMatch(/\\u(0000|d[89a-f])/i);
      }),
    );
  });

  it('keeps __proto__ an own property instead of changing the prototype', () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":"a\\u0000"}}') as Record<string, unknown>;
    const cleaned = cleanJson(parsed);
    expect(Object.getPrototypeOf(cleaned)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(cleaned, '__proto__')?.value).toEqual({ polluted: `a${REPLACEMENT_CHARACTER}` });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
