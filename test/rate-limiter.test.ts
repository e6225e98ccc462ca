/** The token bucket every budget of the service uses (src/rate-limiter.ts): the widget's, the inbox's, Try a question's. */
import { describe, expect, it } from 'vitest';
import { createRateLimiter, type RateLimit } from '../src/rate-limiter.ts';

const limit = (burst: number, windowMs: number, maxBuckets = 1_000): RateLimit => ({ burst, windowMs, maxBuckets });

describe('the token bucket per key', () => {
  it('allows the burst, then refuses with the seconds until the next token, refilling evenly', () => {
    let t = 0;
    const limiter = createRateLimiter(limit(30, 10_000), { now: () => t });
    for (let i = 0; i < 30; i++) expect(limiter.take('k').allowed).toBe(true);
    expect(limiter.take('k')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    t += 333;
    expect(limiter.take('k').allowed).toBe(false);
    t += 1;
    expect(limiter.take('k').allowed).toBe(true); // 334 ms = one token at 3 per second
    expect(limiter.take('other').allowed).toBe(true);
  });

  it('rounds Retry-After up to whole seconds for slow refills', () => {
    const limiter = createRateLimiter(limit(1, 5_500), { now: () => 0 });
    limiter.take('k');
    expect(limiter.take('k')).toEqual({ allowed: false, retryAfterSeconds: 6 });
  });

  it('drops full (idle) buckets once it holds the most it may, never a bucket in use', () => {
    let t = 0;
    const limiter = createRateLimiter(limit(2, 1_000, 2), { now: () => t });
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

describe('a refusal in the error format', () => {
  it('is 429 rate_limited with details.retry_after in whole seconds, and the message given those seconds', () => {
    const limiter = createRateLimiter(limit(1, 4_000), { now: () => 0 });
    expect(() => limiter.takeOrRefuse('k', (s) => `wait ${s} s`)).not.toThrow();
    let refused: unknown;
    try {
      limiter.takeOrRefuse('k', (s) => `wait ${s} s`);
    } catch (err) {
      refused = err;
    }
    expect(refused).toMatchObject({ code: 'rate_limited', status: 429, message: 'wait 4 s', details: { retry_after: 4 } });
  });
});
