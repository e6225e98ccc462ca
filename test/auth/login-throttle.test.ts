/** Passwords and the slowing of failed sign-ins, without a server (src/auth/passwords.ts, src/auth/login-throttle.ts). */
import { describe, expect, it } from 'vitest';
import { createLoginThrottle } from '../../src/auth/login-throttle.ts';
import { LOGIN_FAILURE_WINDOW_MS, LOGIN_FAILURES_PER_ACCOUNT, LOGIN_FAILURES_PER_ADDRESS } from '../../src/limits.ts';

describe('failed sign-ins', () => {
  const clock = () => {
    let t = 1_000_000;
    return { now: () => t, advance: (ms: number) => (t += ms) };
  };

  it(`wait after ${LOGIN_FAILURES_PER_ACCOUNT} for one email, twice as long after each further failure, up to the window`, () => {
    const c = clock();
    const throttle = createLoginThrottle({ now: c.now });
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT - 1; i++) throttle.failed('Ann@Example.com', `10.0.0.${i}`);
    expect(throttle.retryAfterSeconds('ann@example.com', '10.0.0.9')).toBe(0);
    throttle.failed(' ann@example.com', '10.0.0.9');
    const waits = [];
    for (let i = 0; i < 14; i++) {
      const wait = throttle.retryAfterSeconds('ANN@example.com', '10.1.0.1');
      waits.push(wait);
      c.advance(wait * 1000);
      throttle.failed('ann@example.com', `10.2.0.${i}`);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900, 900]);
  });

  it(`wait after ${LOGIN_FAILURES_PER_ADDRESS} from one address, for every email`, () => {
    const c = clock();
    const throttle = createLoginThrottle({ now: c.now });
    for (let i = 0; i < LOGIN_FAILURES_PER_ADDRESS; i++) throttle.failed(`user${i}@example.com`, '192.0.2.7');
    expect(throttle.retryAfterSeconds('someone@example.com', '192.0.2.7')).toBe(1);
    expect(throttle.retryAfterSeconds('someone@example.com', '192.0.2.8')).toBe(0);
  });

  it("a success clears the email's count but not the address's", () => {
    const c = clock();
    const throttle = createLoginThrottle({ now: c.now });
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT; i++) throttle.failed('ann@example.com', '192.0.2.7');
    throttle.succeeded('ann@example.com');
    expect(throttle.retryAfterSeconds('ann@example.com', '192.0.2.1')).toBe(0);
    for (let i = LOGIN_FAILURES_PER_ACCOUNT; i < LOGIN_FAILURES_PER_ADDRESS; i++) throttle.failed(`other${i}@example.com`, '192.0.2.7');
    expect(throttle.retryAfterSeconds('ann@example.com', '192.0.2.7')).toBeGreaterThan(0);
  });

  it('are forgotten after the window without a failure', () => {
    const c = clock();
    const throttle = createLoginThrottle({ now: c.now });
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT; i++) throttle.failed('ann@example.com', '192.0.2.7');
    c.advance(LOGIN_FAILURE_WINDOW_MS + 1);
    throttle.failed('ann@example.com', '192.0.2.7');
    expect(throttle.retryAfterSeconds('ann@example.com', '192.0.2.7')).toBe(0);
  });
});
