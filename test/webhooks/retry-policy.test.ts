/**
 * Our Standard Webhooks signer against the specification's published test vector and the official library, and the
 * retry policy (Svix's schedule, jitter, Retry-After, status handling) as pure functions.
 */
import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, RETRY_SCHEDULE_MS } from '../../src/webhooks/limits.ts';
import { parseRetryAfter } from '../../src/net/retry-schedule.ts';
import { decideAttempt, scheduledDelay, type AttemptResult } from '../../src/webhooks/retry-policy.ts';

describe('the retry schedule (Svix): immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
  const failure: AttemptResult = { kind: 'response', status: 500, retryAfter: null };
  const at = 1_700_000_000_000;

  it('waits the scheduled delay after each failure and gives up after the eighth attempt', () => {
    expect(RETRY_SCHEDULE_MS).toEqual([0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    const delays = [1, 2, 3, 4, 5, 6, 7].map((n) => decideAttempt({ result: failure, attemptNumber: n, kind: 'event', attemptedAt: at, jitterSample: 0.5 }));
    expect(delays).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000].map((d) => ({ outcome: 'retry', delayMs: d, nextAttemptAt: at + d })));
    expect(decideAttempt({ result: failure, attemptNumber: 8, kind: 'event', attemptedAt: at, jitterSample: 0.5 })).toEqual({ outcome: 'exhausted' });
  });

  it('jitters each delay by at most ±20 %', () => {
    expect(scheduledDelay(1, 0)).toBe(4_000);
    expect(scheduledDelay(1, 1)).toBe(6_000);
    expect(scheduledDelay(7, 0)).toBe(28_800_000);
    for (let i = 0; i < 1_000; i++) {
      const d = scheduledDelay(2, Math.random())!;
      expect(d).toBeGreaterThanOrEqual(240_000);
      expect(d).toBeLessThanOrEqual(360_000);
    }
  });

  it('counts 2xx as success and every other status as failure, 3xx included', () => {
    for (const status of [200, 201, 204, 299]) expect(decideAttempt({ result: { kind: 'response', status, retryAfter: null }, attemptNumber: 1, kind: 'event', attemptedAt: at, jitterSample: 0.5 }).outcome).toBe('succeeded');
    for (const status of [301, 302, 307, 308, 400, 401, 404, 429, 500, 502, 504]) {
      expect(decideAttempt({ result: { kind: 'response', status, retryAfter: null }, attemptNumber: 1, kind: 'event', attemptedAt: at, jitterSample: 0.5 }).outcome).toBe('retry');
    }
    expect(decideAttempt({ result: { kind: 'error', reason: 'timeout', message: 'x' }, attemptNumber: 1, kind: 'event', attemptedAt: at, jitterSample: 0.5 }).outcome).toBe('retry');
  });

  it('gives up at once on 410 Gone (the endpoint is disabled)', () => {
    expect(decideAttempt({ result: { kind: 'response', status: 410, retryAfter: null }, attemptNumber: 1, kind: 'event', attemptedAt: at, jitterSample: 0.5 })).toEqual({ outcome: 'gone' });
  });

  it('gives a test delivery one attempt, and a 410 there does not disable anything', () => {
    expect(decideAttempt({ result: failure, attemptNumber: 1, kind: 'test', attemptedAt: at, jitterSample: 0.5 })).toEqual({ outcome: 'exhausted' });
    expect(decideAttempt({ result: { kind: 'response', status: 410, retryAfter: null }, attemptNumber: 1, kind: 'test', attemptedAt: at, jitterSample: 0.5 })).toEqual({ outcome: 'exhausted' });
  });

  describe('Retry-After', () => {
    const after = (retryAfter: string, attemptNumber = 1) =>
      decideAttempt({ result: { kind: 'response', status: 503, retryAfter }, attemptNumber, kind: 'event', attemptedAt: at, jitterSample: 0.5 });

    it('postpones the next attempt when it asks for longer than the schedule', () => {
      expect(after('120')).toMatchObject({ outcome: 'retry', delayMs: 120_000 });
      expect(after(new Date(at + 3_600_000).toUTCString())).toMatchObject({ outcome: 'retry', delayMs: 3_600_000 });
    });
    it('never brings an attempt forward (the schedule is the floor)', () => {
      expect(after('1', 2)).toMatchObject({ delayMs: 300_000 });
      expect(after('0')).toMatchObject({ delayMs: 5_000 });
    });
    it('is capped at the longest step of the schedule', () => {
      expect(after('999999')).toMatchObject({ delayMs: MAX_RETRY_AFTER_MS });
    });
    it('is ignored when it cannot be read', () => {
      expect(after('soon')).toMatchObject({ delayMs: 5_000 });
      expect(parseRetryAfter('-5', at)).toBeNull();
      expect(parseRetryAfter('Tue, 32 Foo 2026', at)).toBeNull();
      expect(parseRetryAfter(null, at)).toBeNull();
    });
  });
});
