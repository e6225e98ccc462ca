/**
 * A caller's key presses (DTMF) gathered into entries (docs/phone.md, DTMF): an entry ends with '#' or after
 * `entryMs` without another key; '*' starts it over; keys past PHONE_MAX_DTMF_DIGITS are ignored.
 */
import { PHONE_MAX_DTMF_DIGITS } from './limits.ts';

export interface KeyEntry {
  /** One key pressed. */
  press(digit: string): void;
  /** The call is over: a pending entry is dropped. */
  cancel(): void;
}

/** `onEntry` gets each finished, non-empty entry. */
export function createKeyEntry(options: { entryMs: number; onEntry: (digits: string) => void }): KeyEntry {
  let digits = '';
  let timer: NodeJS.Timeout | null = null;

  function stopTimer(): void {
    if (timer) clearTimeout(timer);
    timer = null;
  }

  function flush(): void {
    stopTimer();
    const entry = digits;
    digits = '';
    if (entry !== '') options.onEntry(entry);
  }

  return {
    press(digit) {
      stopTimer();
      if (digit === '#') return flush();
      if (digit === '*') {
        digits = '';
        return;
      }
      if (digits.length < PHONE_MAX_DTMF_DIGITS) digits += digit;
      timer = setTimeout(flush, options.entryMs);
    },
    cancel: stopTimer,
  };
}
