/**
 * Sign-in under attack (docs/reliability.md, "Sign-in under attack"; README: Sign in), on both databases and with two
 * engines on one database: a parallel burst at one email gets no more than the allowance of checked attempts, a burst
 * from one address does not starve another user's sign-in, the account's own address is not locked out by someone
 * else's guesses, and another workspace's user with the same email cannot reset the victim's count.
 * Passwords are hashed with the configured cost (scrypt, N=2^15), as in production.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountKeyOfUser } from '../../src/auth/login-throttle.ts';
import { LOGIN_FAILURES_PER_ACCOUNT } from '../../src/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { postFrom, seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const PASSWORD = 'correct horse battery staple';
let serial = 0;
const uniqueEmail = (what: string) => `${what}-${++serial}-${Date.now().toString(36)}@acme.example`;

describeEachDatabase('sign-in under attack, two engines on one database', (get) => {
  let a: TestService;
  let b: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  const engines = () => [a, b];
  const login = (service: TestService, address: string, body: object) => postFrom(service, address, '/v1/auth/login', body);
  /**
   * Wrong passwords one after the other, alternating engines, until the first 429: how many were checked (401). A
   * burst may leave the count below the threshold (attempts beyond the hashing places are turned away uncounted).
   */
  async function guessUntilRefused(email: string, address: string): Promise<number> {
    for (let i = 0; i <= LOGIN_FAILURES_PER_ACCOUNT; i++) {
      const res = await login(engines()[i % 2]!, address, { email, password: `sequential guess ${i}` });
      if (res.status === 429) return i;
      expect(res.status).toBe(401);
    }
    throw new Error(`no 429 after ${LOGIN_FAILURES_PER_ACCOUNT + 1} failures`);
  }

  /** A new agent of `owner`'s workspace who set PASSWORD (or `password`) through their invite link. */
  async function userWithPassword(owner: string, email = uniqueEmail('user'), password = PASSWORD) {
    const made = await a.api('POST', '/v1/users', { token: owner, body: { email, role: 'agent' } });
    expect(made.status).toBe(201);
    const set = await a.api('POST', '/v1/auth/password', { body: { invite: (made.body.invite_url as string).split('#')[1], password } });
    expect(set.status).toBe(200);
    return { id: made.body.user.id as string, email };
  }

  beforeAll(async () => {
    // Waits of a minute, so that what the tests check during a wait is checked during it on a slow machine too.
    a = await startTestService(get(), {}, { sessions: { instanceId: 'engine-a' }, signIn: { firstWaitMs: 60_000 } });
    b = await startTestService(get(), {}, { sessions: { instanceId: 'engine-b' }, signIn: { firstWaitMs: 60_000 } });
    ws = await seedWorkspace(a);
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  /**
   * Sends a burst of sign-ins from another process (test/helpers/login-burst.ts), split over both engines; resolves
   * `started` once every request is out, and `statuses` when every answer is in.
   */
  function burstFrom(address: string, attempts: { email: string; password: string }[]) {
    const child = spawn(process.execPath, ['test/helpers/login-burst.ts', JSON.stringify({ urls: engines().map((e) => e.url), address, attempts })], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const started = lines.next();
    const statuses = started.then(async () => JSON.parse(((await lines.next()).value as string) ?? '[]') as number[]);
    return { started, statuses };
  }

  describe('a burst at one email', () => {
    it(`60 wrong passwords at once, over both engines: at most ${LOGIN_FAILURES_PER_ACCOUNT} are checked (401), every other is 429`, async () => {
      const victim = await userWithPassword(ws.owner);
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) => login(engines()[i % 2]!, '127.0.0.11', { email: victim.email, password: `guess number ${i}` })),
      );
      const statuses = answers.map((r) => r.status);
      const checked = statuses.filter((s) => s === 401).length;
      expect(checked).toBeGreaterThanOrEqual(1);
      expect(checked).toBeLessThanOrEqual(LOGIN_FAILURES_PER_ACCOUNT);
      expect(statuses.filter((s) => s === 429)).toHaveLength(60 - checked);
      for (const r of answers.filter((x) => x.status === 429)) expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      // Then one at a time: together with the burst, still no more than the allowance is checked.
      expect(checked + (await guessUntilRefused(victim.email, '127.0.0.11'))).toBeLessThanOrEqual(LOGIN_FAILURES_PER_ACCOUNT);
      // The right password from there now waits as well: the account's count holds on both engines.
      for (const service of engines()) expect((await login(service, '127.0.0.11', { email: victim.email, password: PASSWORD })).status).toBe(429);
    });

    it('with the right password among them, at most the allowance get an answer other than 429', async () => {
      const victim = await userWithPassword(ws.owner);
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) => login(engines()[i % 2]!, '127.0.0.12', { email: victim.email, password: i === 30 ? PASSWORD : `guess number ${i}` })),
      );
      const notRefused = answers.filter((r) => r.status !== 429);
      expect(notRefused.length).toBeLessThanOrEqual(LOGIN_FAILURES_PER_ACCOUNT);
      for (const r of notRefused) expect([200, 401]).toContain(r.status);
    });
  });

  /**
   * The bound of a sign-in during a burst: 1 s (the issue's), or eight times the slowest of three sign-ins without a
   * burst on this machine just before, whichever is more. A machine loaded by other suites can make one scrypt hash
   * alone take most of a second; a fair queue puts at most about three hashes before the user's, while starving behind
   * the burst (the defect: 17.4 s for 150) costs dozens, far beyond either bound.
   */
  async function boundMs(service: TestService, address: string, email: string): Promise<{ quietMs: number; boundMs: number }> {
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      expect((await login(service, address, { email, password: PASSWORD })).status).toBe(200);
      times.push(performance.now() - started);
    }
    const quietMs = Math.max(...times);
    return { quietMs, boundMs: Math.max(1_000, 8 * quietMs) };
  }

  describe('a burst from one address', () => {
    it('150 failed sign-ins at once, a third at the real user\'s email: the user\'s sign-in from their address answers within 1 s (or 8 quiet sign-ins on a loaded machine)', async () => {
      const user = await userWithPassword(ws.owner);
      expect((await login(b, '127.0.0.14', { email: user.email, password: PASSWORD })).status).toBe(200);
      const { quietMs, boundMs: bound } = await boundMs(a, '127.0.0.14', user.email);
      const burst = burstFrom('127.0.0.13', Array.from({ length: 150 }, (_, i) => ({ email: i % 3 === 0 ? user.email : uniqueEmail('spray'), password: `guess number ${i}` })));
      // Once the burst is out, and has reached the engines.
      await burst.started;
      await new Promise((resolve) => setTimeout(resolve, 30));
      const started = performance.now();
      const real = await login(a, '127.0.0.14', { email: user.email, password: PASSWORD });
      const ms = performance.now() - started;
      const statuses = await burst.statuses;
      const counts = `${statuses.filter((s) => s === 401).length}×401, ${statuses.filter((s) => s === 429).length}×429`;
      console.info(`[sign-in under attack, ${get().kind}] a real sign-in during a burst of 150: ${Math.round(ms)} ms (without a burst: ${Math.round(quietMs)} ms); burst: ${counts}`);
      expect(real.status).toBe(200);
      expect(ms).toBeLessThan(bound);
      expect(statuses).toHaveLength(150);
      expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    });

    it('150 failed sign-ins at once at other emails: a first sign-in from a new address answers within 1 s (or 8 quiet sign-ins on a loaded machine)', async () => {
      const user = await userWithPassword(ws.owner);
      const { quietMs, boundMs: bound } = await boundMs(b, '127.0.0.23', user.email);
      const burst = burstFrom('127.0.0.21', Array.from({ length: 150 }, (_, i) => ({ email: uniqueEmail('spray'), password: `guess number ${i}` })));
      await burst.started;
      await new Promise((resolve) => setTimeout(resolve, 30));
      const started = performance.now();
      const real = await login(b, '127.0.0.22', { email: user.email, password: PASSWORD });
      const ms = performance.now() - started;
      const statuses = await burst.statuses;
      console.info(`[sign-in under attack, ${get().kind}] a first sign-in from a new address during a burst of 150: ${Math.round(ms)} ms (without a burst: ${Math.round(quietMs)} ms)`);
      expect(real.status).toBe(200);
      expect(ms).toBeLessThan(bound);
      expect(statuses).toHaveLength(150);
      expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
      expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(20);
    });
  });

  describe('the lock-out rule', () => {
    it("someone else's guesses do not lock the user out where they signed in before; elsewhere they wait", async () => {
      const user = await userWithPassword(ws.owner);
      expect((await login(a, '127.0.0.15', { email: user.email, password: PASSWORD })).status).toBe(200);
      // 16 wrong passwords in one burst (the lock-out of a real user in 2 s, before), then one at a time until refused.
      const guesses = await Promise.all(Array.from({ length: 16 }, (_, i) => login(engines()[i % 2]!, '127.0.0.16', { email: user.email, password: `guess number ${i}` })));
      const checked = guesses.filter((r) => r.status === 401).length + (await guessUntilRefused(user.email, '127.0.0.16'));
      expect(checked).toBeLessThanOrEqual(LOGIN_FAILURES_PER_ACCOUNT);
      // From an address that never signed in to the account: it waits, with the right password too.
      expect((await login(a, '127.0.0.17', { email: user.email, password: PASSWORD })).status).toBe(429);
      // The user, from their own address, on either engine: signed in.
      expect((await login(b, '127.0.0.15', { email: user.email, password: PASSWORD })).status).toBe(200);
      expect((await login(a, '127.0.0.15', { email: user.email, password: PASSWORD })).status).toBe(200);
    });
  });

  describe('another workspace with the same email', () => {
    it("signing in as one's own copy of the victim's email does not clear the victim's count", async () => {
      const email = uniqueEmail('victim');
      const victim = await userWithPassword(ws.owner, email);
      expect((await login(a, '127.0.0.18', { email, password: PASSWORD })).status).toBe(200);
      // The attacker owns another workspace and adds a user with the victim's email, with a password of their own.
      const mallory = await seedWorkspace(a, `Mallory${serial++}`);
      const copy = await userWithPassword(mallory.owner, email, 'the copy password of mallory');
      // Mallory signs in as her copy from her usual address, so the guesses below do not hold her copy up there.
      expect((await login(a, '127.0.0.20', { email, password: 'the copy password of mallory' })).status).toBe(200);
      for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT; i++) expect((await login(b, '127.0.0.19', { email, password: `guess number ${i}` })).status).toBe(401);
      expect((await login(b, '127.0.0.19', { email, password: PASSWORD })).status).toBe(429);
      // The copy signs in (before: that success cleared the email's count in every workspace).
      const asCopy = await login(a, '127.0.0.20', { email, password: 'the copy password of mallory' });
      expect(asCopy.status).toBe(200);
      expect(asCopy.body.token).toMatch(/^blt_/);
      // The victim's count stands: the victim's right password from the guesser's address signs nobody in.
      expect((await login(b, '127.0.0.19', { email, password: PASSWORD })).status).not.toBe(200);
      const counts = await get().db.selectFrom('sign_in_failures').select(['key', 'failures']).where('key', 'in', [accountKeyOfUser(victim.id), accountKeyOfUser(copy.id)]).execute();
      expect(Object.fromEntries(counts.map((c) => [c.key, c.failures]))).toEqual({ [accountKeyOfUser(victim.id)]: LOGIN_FAILURES_PER_ACCOUNT, [accountKeyOfUser(copy.id)]: expect.any(Number) });
      expect(counts.find((c) => c.key === accountKeyOfUser(copy.id))!.failures).toBeLessThan(LOGIN_FAILURES_PER_ACCOUNT);
      // The victim, from their own address: signed in.
      expect((await login(a, '127.0.0.18', { email, password: PASSWORD, workspace_id: ws.workspaceId })).status).toBe(200);
    }, 60_000); // fifteen sign-ins, each a real scrypt hash: on a loaded machine more than the default 20 s
  });
});
