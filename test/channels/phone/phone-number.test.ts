import { describe, expect, it } from 'vitest';
import { normaliseE164 } from '../../../src/channels/phone/phone-number.ts';

describe('E.164 numbers', () => {
  it('keeps E.164 and removes the separators people write', () => {
    expect(normaliseE164('+31201234567')).toBe('+31201234567');
    expect(normaliseE164(' +31 (0)20 123 4567')).toBe('+31201234567'); // "(0)": only dialled inside the country
    expect(normaliseE164('+31 20-123.4567')).toBe('+31201234567');
    expect(normaliseE164('tel:+1-800-555-0100')).toBe('+18005550100');
  });

  it('refuses national numbers, letters, too long numbers and non-strings', () => {
    for (const bad of ['0201234567', '+0201234567', '+3120abc', '+1234567890123456', '', 'anonymous', 'client:alice', 42, null]) {
      expect(normaliseE164(bad)).toBeNull();
    }
  });
});
