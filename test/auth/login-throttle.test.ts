/**
 * The sign-in throttle on its database, without a server (src/auth/login-throttle.ts; docs/reliability.md, "Sign-in
 * under attack"): attempts reserved before hashing, waits that double, the account's own addresses kept in, and two
 * throttles (two engines) on one database sharing one allowance.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { signInThrottleRepository } from '../../db/repositories/sign-in-throttle.repository.ts';
import { accountKeyOfEmail, accountKeyOfUser, createLoginThrottle, type Reservation } from '../../src/auth/login-throttle.ts';
import { LOGIN_FAILURE_WINDOW_MS, LOGIN_FAILURES_PER_ACCOUNT, LOGIN_FAILURES_PER_ADDRESS } from '../../src/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';

describeEachDatabase('failed sign-ins', (get) => {
  const clock = () => {
    let t = Date.parse('2026-01-01T00:00:00Z');
    return { now: () => new Date(t), advance: (ms: number) => (t += ms) };
  };
  const throttleAt = (c: ReturnType<typeof clock>) => createLoginThrottle({ repository: signInThrottleRepository(get().db), now: c.now });
  const fresh = (what: string) => `${what}-${randomUUID()}`;
  /** A user in a workspace of their own (the addresses users signed in from name real users). */
  const newUser = async (): Promise<string> => {
    const workspaceId = randomUUID();
    const userId = randomUUID();
    await get().db.insertInto('workspaces').values({ id: workspaceId, name: 'Throttled' }).execute();
    await get().db.insertInto('users').values({ id: userId, workspace_id: workspaceId, email: 'same@example.com', role: 'agent', revoked_at: null }).execute();
    return userId;
  };
  /** One attempt at `key` from `address` that turns out wrong: reserved, hashed (not here), and left counted. */
  const attempt = (throttle: ReturnType<typeof throttleAt>, address: string, key: string, known = false): Promise<Reservation> =>
    throttle.reserve({ address, accounts: [{ key, known }], refusalKey: `${address}\n${key}` });

  it(`waits after ${LOGIN_FAILURES_PER_ACCOUNT} failures of one account, twice as long after each further one, up to the window`, async () => {
    const c = clock();
    const throttle = throttleAt(c);
    const account = accountKeyOfEmail(`${fresh('ann')}@example.com`);
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT; i++) expect((await attempt(throttle, fresh('10.0.0'), account)).reserved).toBe(true);
    const waits = [];
    for (let i = 0; i < 14; i++) {
      const refused = await attempt(throttle, fresh('10.1.0'), account);
      if (refused.reserved) throw new Error('expected a refusal');
      waits.push(refused.retryAfterSeconds);
      c.advance(refused.retryAfterSeconds * 1000);
      expect((await attempt(throttle, fresh('10.2.0'), account)).reserved).toBe(true);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900, 900, 900]);
  });

  it('a wait counts from the failure\'s answer, not from before its hash', async () => {
    const c = clock();
    const throttle = throttleAt(c);
    const account = accountKeyOfEmail(`${fresh('slow')}@example.com`);
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT - 1; i++) await attempt(throttle, fresh('10.3.0'), account);
    const last = await attempt(throttle, fresh('10.3.0'), account);
    if (!last.reserved) throw new Error('expected a reservation');
    expect(last.waiting).toEqual([account]);
    c.advance(900); // a slow hash
    await throttle.settle(last, []);
    c.advance(300);
    expect(await attempt(throttle, fresh('10.4.0'), account)).toEqual({ reserved: false, retryAfterSeconds: 1 });
    c.advance(700);
    expect((await attempt(throttle, fresh('10.4.0'), account)).reserved).toBe(true);
  });

  it(`waits after ${LOGIN_FAILURES_PER_ADDRESS} failures from one address, for every account, there only`, async () => {
    const throttle = throttleAt(clock());
    const address = fresh('192.0.2.7');
    for (let i = 0; i < LOGIN_FAILURES_PER_ADDRESS; i++) expect((await attempt(throttle, address, accountKeyOfEmail(`${fresh('u')}@example.com`))).reserved).toBe(true);
    expect(await attempt(throttle, address, accountKeyOfEmail(`${fresh('someone')}@example.com`))).toEqual({ reserved: false, retryAfterSeconds: 1 });
    expect((await attempt(throttle, fresh('192.0.2.8'), accountKeyOfEmail(`${fresh('someone')}@example.com`))).reserved).toBe(true);
  });

  it('60 attempts at once at one account get exactly the allowance reserved, the rest refused', async () => {
    const throttle = throttleAt(clock());
    const account = accountKeyOfEmail(`${fresh('burst')}@example.com`);
    const answers = await Promise.all(Array.from({ length: 60 }, () => attempt(throttle, fresh('198.51.100'), account)));
    expect(answers.filter((a) => a.reserved)).toHaveLength(LOGIN_FAILURES_PER_ACCOUNT);
  });

  it('two engines (two throttles on one database) share one allowance', async () => {
    const c = clock();
    const engines = [throttleAt(c), throttleAt(c)];
    const account = accountKeyOfEmail(`${fresh('shared')}@example.com`);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => attempt(engines[i % 2]!, fresh('203.0.113'), account)));
    expect(answers.filter((a) => a.reserved)).toHaveLength(LOGIN_FAILURES_PER_ACCOUNT);
  });

  it('a right password refunds its reservation and clears the count of the account that signed in, and only that one', async () => {
    const throttle = throttleAt(clock());
    const address = fresh('192.0.2.9');
    const copyId = await newUser();
    const mine = accountKeyOfUser(await newUser());
    const sameEmailElsewhere = accountKeyOfUser(copyId);
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT - 1; i++) {
      await throttle.reserve({ address: fresh('a'), accounts: [{ key: mine, known: false }, { key: sameEmailElsewhere, known: false }], refusalKey: fresh('r') });
    }
    // The other workspace's copy signs in: the victim's count stays as it was.
    const copy = await throttle.reserve({ address, accounts: [{ key: mine, known: false }, { key: sameEmailElsewhere, known: false }], refusalKey: fresh('r') });
    if (!copy.reserved) throw new Error('expected a reservation');
    await throttle.settle(copy, [{ key: sameEmailElsewhere, userId: copyId }]);
    expect(await throttle.knownAt([copyId], address)).toEqual(new Set([copyId]));
    expect((await attempt(throttle, fresh('b'), mine)).reserved).toBe(true);
    expect((await attempt(throttle, fresh('c'), mine)).reserved).toBe(false);
    expect((await attempt(throttle, fresh('d'), sameEmailElsewhere)).reserved).toBe(true);
  });

  it("the account's own recent address is not held up by others' failures, and its own failures count only toward the address", async () => {
    const throttle = throttleAt(clock());
    const account = accountKeyOfUser(randomUUID());
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT; i++) await attempt(throttle, fresh('guesser'), account);
    expect((await attempt(throttle, fresh('guesser'), account)).reserved).toBe(false);
    const home = fresh('home');
    for (let i = 0; i < LOGIN_FAILURES_PER_ADDRESS; i++) expect((await attempt(throttle, home, account, true)).reserved).toBe(true);
    // The address's own allowance still holds there.
    expect((await attempt(throttle, home, account, true)).reserved).toBe(false);
  });

  it('are forgotten after the window without a failure', async () => {
    const c = clock();
    const throttle = throttleAt(c);
    const address = fresh('192.0.2.10');
    const account = accountKeyOfEmail(`${fresh('later')}@example.com`);
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT; i++) await attempt(throttle, address, account);
    c.advance(LOGIN_FAILURE_WINDOW_MS + 1);
    expect((await attempt(throttle, address, account)).reserved).toBe(true);
    expect((await attempt(throttle, address, account)).reserved).toBe(true);
  });

  // Last: its sweep deletes the rows the tests above left behind.
  it('deletes counts past the window and sign-in addresses past 30 days, swept by an engine handling an attempt', async () => {
    const c = clock();
    const throttle = throttleAt(c);
    const userId = await newUser();
    const old = accountKeyOfUser(userId);
    const first = await throttle.reserve({ address: '192.0.2.50', accounts: [{ key: old, known: false }], refusalKey: fresh('r') });
    if (!first.reserved) throw new Error('expected a reservation');
    await throttle.settle(first, [{ key: old, userId }]);
    const rows = () => get().db.selectFrom('sign_in_failures').select('key').where('key', 'in', [old, 'address:192.0.2.50']).execute();
    const addresses = () => get().db.selectFrom('sign_in_addresses').select('address').where('user_id', '=', userId).execute();
    expect(await rows()).toHaveLength(2);
    expect(await addresses()).toHaveLength(1);
    c.advance(31 * 24 * 3600_000);
    await attempt(throttle, fresh('192.0.2.51'), accountKeyOfEmail(`${fresh('later')}@example.com`));
    const deadline = Date.now() + 5_000;
    while (((await rows()).length > 0 || (await addresses()).length > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await rows()).toEqual([]);
    expect(await addresses()).toEqual([]);
  });
});
