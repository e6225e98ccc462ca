/** Passwords and the slowing of failed sign-ins, without a server (src/auth/passwords.ts, src/auth/login-throttle.ts). */
import { describe, expect, it } from 'vitest';
import { createLoginThrottle } from '../../src/auth/login-throttle.ts';
import { hashPassword, passwordProblem, verifyPassword } from '../../src/auth/passwords.ts';
import { LOGIN_FAILURE_WINDOW_MS, LOGIN_FAILURES_PER_ACCOUNT, LOGIN_FAILURES_PER_ADDRESS } from '../../src/limits.ts';

describe('passwords', () => {
  it('are stored as scrypt with their parameters and a salt of their own', async () => {
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery staple', a)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', a)).toBe(false);
  });

  it('match however the same letters were composed (NFC)', async () => {
    const stored = await hashPassword('caf\u00e9 au lait!');
    expect(await verifyPassword('cafe\u0301 au lait!', stored)).toBe(true);
  });

  it('a stored value that is not ours never matches', async () => {
    for (const stored of ['', 'plain', 'scrypt$0$8$1$AAAA$AAAA', 'bcrypt$2$8$1$a$b', 'scrypt$32768$8$1$AAAA$short']) {
      expect(await verifyPassword('anything at all', stored)).toBe(false);
    }
  });

  it('the rules, one sentence each', () => {
    expect(passwordProblem('short')).toBe('The password needs at least 10 characters (it has 5).');
    expect(passwordProblem('😀'.repeat(9))).toContain('at least 10');
    expect(passwordProblem('x'.repeat(201))).toBe('The password may have at most 200 characters (it has 201).');
    expect(passwordProblem(' \n\t'.repeat(4))).toBe('The password may not be only spaces or other whitespace.');
    expect(passwordProblem('ten chars!')).toBeNull();
  });
});

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
