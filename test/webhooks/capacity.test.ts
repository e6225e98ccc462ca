import { describe, expect, it } from 'vitest';
import { createCapacity } from '../../src/webhooks/capacity.ts';

describe('the delivery worker’s slots', () => {
  it('grants a claim only what the global cap leaves, and counts per endpoint and in all', () => {
    const capacity = createCapacity({ maxInFlight: 5, onFreed: () => {} });
    expect(capacity.claim('a', 3)).toBe(3);
    expect(capacity.claim('b', 3)).toBe(2);
    expect(capacity.claim('c', 1)).toBe(0);
    expect(capacity.heldBy('a')).toBe(3);
    expect(capacity.total()).toBe(5);
  });

  it('wakes the endpoints the cap cut short once slots come back, once each', () => {
    const woken: string[][] = [];
    const capacity = createCapacity({ maxInFlight: 2, onFreed: (ids) => woken.push(ids) });
    capacity.claim('a', 2);
    capacity.claim('b', 1);
    capacity.give('a', 1);
    capacity.give('a', 1);
    expect(woken).toEqual([['b']]);
    expect(capacity.total()).toBe(0);
  });

  it('never gives back more than an endpoint holds', () => {
    const capacity = createCapacity({ maxInFlight: 4, onFreed: () => {} });
    capacity.claim('a', 2);
    capacity.give('a', 5);
    expect(capacity.heldBy('a')).toBe(0);
    expect(capacity.total()).toBe(0);
  });
});
