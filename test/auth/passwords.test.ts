/** Passwords and the slowing of failed sign-ins, without a server (src/auth/passwords.ts, src/auth/login-throttle.ts). */
import { describe, expect, it } from 'vitest';
import { hashPassword, passwordProblem, verifyPassword } from '../../src/auth/passwords.ts';

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
