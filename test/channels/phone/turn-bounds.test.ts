import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PHONE_MAX_TURNS_IN_FLIGHT, PHONE_TURN_BURST, PHONE_TURNS_PER_SECOND } from '../../../src/channels/phone/limits.ts';
import { createTurnBounds } from '../../../src/channels/phone/turn-bounds.ts';

describe('a call’s turn bounds', () => {
  let clock = 0;
  beforeEach(() => {
    clock = 0;
    vi.useFakeTimers();
  });
  afterEach(() => vi.useRealTimers());

  function bounded() {
    const started: string[] = [];
    let merged = 0;
    const bounds = createTurnBounds({
      start: (message) => {
        started.push(message);
        bounds.started();
      },
      open: () => true,
      now: () => clock,
    });
    return { bounds, started, offer: (m: string) => bounds.offer(m, () => merged++), merged: () => merged };
  }

  it('starts at most PHONE_MAX_TURNS_IN_FLIGHT turns at once; the rest wait merged and start when a turn settles', () => {
    const { bounds, started, offer, merged } = bounded();
    for (let i = 0; i < PHONE_MAX_TURNS_IN_FLIGHT + 2; i++) offer(`m${i}`);
    expect(started).toHaveLength(PHONE_MAX_TURNS_IN_FLIGHT);
    expect(merged()).toBe(2);
    bounds.settled();
    expect(started.at(-1)).toBe(`m${PHONE_MAX_TURNS_IN_FLIGHT} m${PHONE_MAX_TURNS_IN_FLIGHT + 1}`);
  });

  it('starts PHONE_TURN_BURST turns in a row, then the waiting words when the bucket refills', () => {
    const { bounds, started, offer } = bounded();
    for (let i = 0; i < PHONE_TURN_BURST; i++) {
      offer(`m${i}`);
      bounds.settled();
    }
    expect(started).toHaveLength(PHONE_TURN_BURST);
    offer('late');
    expect(started).toHaveLength(PHONE_TURN_BURST);
    clock += 1000 / PHONE_TURNS_PER_SECOND;
    vi.advanceTimersByTime(1000 / PHONE_TURNS_PER_SECOND);
    expect(started.at(-1)).toBe('late');
  });
});
