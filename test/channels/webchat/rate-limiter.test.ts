/** The website chat's pure parts: the escalation phrases, the origin rules and the token bucket. */
import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../../src/channels/webchat/rate-limiter.ts';

describe('the token bucket per widget key', () => {
  it('allows the burst, then refuses with the seconds until the next token, refilling evenly', () => {
    let t = 0;
    const limiter = createRateLimiter({ burst: 30, windowMs: 10_000, now: () => t });
    for (let i = 0; i < 30; i++) expect(limiter.take('k').allowed).toBe(true);
    expect(limiter.take('k')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    t += 333;
    expect(limiter.take('k').allowed).toBe(false);
    t += 1;
    expect(limiter.take('k').allowed).toBe(true); // 334 ms = one token at 3 per second
    expect(limiter.take('other').allowed).toBe(true);
  });

  it('rounds Retry-After up to whole seconds for slow refills', () => {
    const limiter = createRateLimiter({ burst: 1, windowMs: 5_500, now: () => 0 });
    limiter.take('k');
    expect(limiter.take('k')).toEqual({ allowed: false, retryAfterSeconds: 6 });
  });

  it('drops full (idle) buckets once it holds the most it may, never a bucket in use', () => {
    let t = 0;
    const limiter = createRateLimiter({ burst: 2, windowMs: 1_000, maxBuckets: 2, now: () => t });
    limiter.take('a');
    limiter.take('b');
    limiter.take('b');
    t += 500; // a is full again, b has one token
    limiter.take('c');
    expect(limiter.size()).toBe(2);
    expect(limiter.take('b').allowed).toBe(true);
    expect(limiter.take('b').allowed).toBe(false);
  });
});
