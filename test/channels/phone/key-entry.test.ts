import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createKeyEntry } from '../../../src/channels/phone/key-entry.ts';
import { PHONE_MAX_DTMF_DIGITS } from '../../../src/channels/phone/limits.ts';

describe('a caller’s key entry', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('ends with # or after the pause, and * starts it over', () => {
    const entries: string[] = [];
    const keys = createKeyEntry({ entryMs: 100, onEntry: (digits) => entries.push(digits) });
    for (const digit of ['1', '2', '#']) keys.press(digit);
    for (const digit of ['9', '*', '4', '5']) keys.press(digit);
    vi.advanceTimersByTime(99);
    expect(entries).toEqual(['12']);
    vi.advanceTimersByTime(1);
    expect(entries).toEqual(['12', '45']);
  });

  it('keeps at most PHONE_MAX_DTMF_DIGITS keys, reports no empty entry, and drops a pending one when cancelled', () => {
    const entries: string[] = [];
    const keys = createKeyEntry({ entryMs: 100, onEntry: (digits) => entries.push(digits) });
    keys.press('#');
    for (let i = 0; i < PHONE_MAX_DTMF_DIGITS + 5; i++) keys.press('7');
    keys.press('#');
    keys.press('3');
    keys.cancel();
    vi.advanceTimersByTime(1_000);
    expect(entries).toEqual(['7'.repeat(PHONE_MAX_DTMF_DIGITS)]);
  });
});
