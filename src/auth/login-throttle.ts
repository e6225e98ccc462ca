/**
 * Failed sign-ins slow down (docs/reliability.md, "Sign-in under attack"): per client address and per account, counted
 * in the database every engine shares.
 *
 * - An attempt is reserved before its password is hashed: it counts as a failure at once, under the counts' row locks,
 *   and is refunded when the hash proves the password right. Parallel attempts therefore see each other, on one engine
 *   or several: after the threshold, further attempts are refused (429) without hashing, however many arrive at once.
 * - After the threshold of failures within the window, attempts are refused until a wait has passed; the wait doubles
 *   with each further failure, up to the window. Refused attempts are not counted and not checked.
 * - Accounts are the users the email names (`user:<id>`, one per workspace), or the email itself when it names none
 *   (`email:<email>`, so the answers are the same and tell nothing). A success clears the count of the account that
 *   signed in only: never another workspace's user with the same email, never the address's.
 * - The lock-out rule: an account's failures hold up only attempts from addresses without a sign-in to that account
 *   within LOGIN_KNOWN_ADDRESS_MS. Its user, from where they signed in before, is not locked out by someone else's
 *   guesses (attempts from there count only toward the address); a guesser elsewhere is.
 *
 * This process also remembers, until it ends, what the database refused (per address, and per address and email), so
 * a burst after the refusal costs no database work; it only ever refuses with it, never admits.
 */
import type { FailureCount, SignInThrottleRepository } from '../../db/repositories/sign-in-throttle.repository.ts';
import {
  LOGIN_FAILURE_WINDOW_MS,
  LOGIN_FAILURES_PER_ACCOUNT,
  LOGIN_FAILURES_PER_ADDRESS,
  LOGIN_FIRST_WAIT_MS,
  LOGIN_KNOWN_ADDRESS_MS,
} from '../limits.ts';

/** One account an attempt is checked against: `key` is counted unless the attempt's address is known to it. */
export interface AccountKey {
  key: string;
  /** The address signed in to this account recently: its failures do not hold the attempt up, nor count. */
  known: boolean;
}

export type Reservation =
  | {
      reserved: true;
      address: string;
      addressKey: string;
      accounts: AccountKey[];
      /** Keys this attempt brought to (or kept at) the threshold: their wait starts again when the attempt fails. */
      waiting: string[];
    }
  | { reserved: false; retryAfterSeconds: number };

const MAX_REMEMBERED_REFUSALS = 100_000;
/** How often one process deletes counts and addresses nobody needs any more. */
const SWEEP_EVERY_MS = 60_000;

export const accountKeyOfUser = (userId: string) => `user:${userId}`;
export const accountKeyOfEmail = (email: string) => `email:${email.trim().toLowerCase()}`;
const addressKey = (address: string) => `address:${address}`;

export interface LoginThrottleOptions {
  repository: SignInThrottleRepository;
  /** The wait after the threshold's failure, in ms, doubling with each further one; default LOGIN_FIRST_WAIT_MS. */
  firstWaitMs?: number;
  now?: () => Date;
  onSweepError?: (err: unknown) => void;
}

export function createLoginThrottle(deps: LoginThrottleOptions) {
  const { repository } = deps;
  const firstWaitMs = deps.firstWaitMs ?? LOGIN_FIRST_WAIT_MS;
  const now = deps.now ?? (() => new Date());
  const refusedUntil = new Map<string, number>();
  let sweptAt = 0;

  const remember = (key: string, until: number): void => {
    refusedUntil.delete(key);
    refusedUntil.set(key, until);
    while (refusedUntil.size > MAX_REMEMBERED_REFUSALS) refusedUntil.delete(refusedUntil.keys().next().value!);
  };
  const rememberedWait = (key: string, at: number): number => {
    const until = refusedUntil.get(key);
    if (until === undefined) return 0;
    if (until <= at) refusedUntil.delete(key);
    return Math.max(0, until - at);
  };

  /** The count as it stands at `at`: a count whose window passed without a failure starts again. */
  const current = (count: FailureCount | undefined, key: string, at: Date): FailureCount => {
    if (!count || at.getTime() - count.lastAt.getTime() > LOGIN_FAILURE_WINDOW_MS) return { key, failures: 0, lastAt: at, blockedUntil: null };
    return count;
  };
  const waitMs = (count: FailureCount, at: Date): number => (count.blockedUntil ? Math.max(0, count.blockedUntil.getTime() - at.getTime()) : 0);
  const failed = (count: FailureCount, threshold: number, at: Date): FailureCount => {
    const failures = count.failures + 1;
    const wait = failures >= threshold ? Math.min(firstWaitMs * 2 ** Math.min(failures - threshold, 30), LOGIN_FAILURE_WINDOW_MS) : 0;
    return { key: count.key, failures, lastAt: at, blockedUntil: wait > 0 ? new Date(at.getTime() + wait) : null };
  };
  /** One reserved failure taken back: below the threshold again, nothing is refused. */
  const refunded = (count: FailureCount, threshold: number): FailureCount => {
    const failures = Math.max(0, count.failures - 1);
    return { ...count, failures, blockedUntil: failures >= threshold ? count.blockedUntil : null };
  };
  const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

  function sweepNow(at: Date): void {
    if (at.getTime() - sweptAt < SWEEP_EVERY_MS) return;
    sweptAt = at.getTime();
    repository
      .sweep(at, new Date(at.getTime() - LOGIN_FAILURE_WINDOW_MS), new Date(at.getTime() - LOGIN_KNOWN_ADDRESS_MS))
      .catch((err: unknown) => deps.onSweepError?.(err));
  }

  return {
    /** Of these users, the ones `address` signed in to recently (the lock-out rule). */
    async knownAt(userIds: readonly string[], address: string): Promise<Set<string>> {
      return repository.knownAt(userIds, address, new Date(now().getTime() - LOGIN_KNOWN_ADDRESS_MS));
    },

    /**
     * Counts the attempt as a failure of the address and of each account it is checked against (unless known there),
     * or refuses it: the address waits, or every account does. `accounts` that wait are left out of the reservation:
     * only the ones it holds are checked. `refusalKey` names the attempt for this process's memory of refusals.
     */
    async reserve(input: { address: string; accounts: AccountKey[]; refusalKey: string }): Promise<Reservation> {
      const at = now();
      sweepNow(at);
      const address = addressKey(input.address);
      const remembered = Math.max(rememberedWait(address, at.getTime()), rememberedWait(input.refusalKey, at.getTime()));
      if (remembered > 0) return { reserved: false, retryAfterSeconds: seconds(remembered) };
      const counted = input.accounts.filter((a) => !a.known);
      const outcome = await repository.withCounts([address, ...counted.map((a) => a.key)], at, (counts) => {
        const byAddress = current(counts.get(address), address, at);
        const addressWait = waitMs(byAddress, at);
        if (addressWait > 0) return { write: [], result: { wait: addressWait, byAddress: true, open: [] as AccountKey[], waiting: [] as string[] } };
        const waits = new Map(counted.map((a) => [a.key, waitMs(current(counts.get(a.key), a.key, at), at)]));
        const open = input.accounts.filter((a) => a.known || waits.get(a.key) === 0);
        if (open.length === 0) return { write: [], result: { wait: Math.min(...waits.values()), byAddress: false, open, waiting: [] } };
        const write = [failed(byAddress, LOGIN_FAILURES_PER_ADDRESS, at)];
        for (const a of open) if (!a.known) write.push(failed(current(counts.get(a.key), a.key, at), LOGIN_FAILURES_PER_ACCOUNT, at));
        return { write, result: { wait: 0, byAddress: false, open, waiting: write.filter((c) => c.blockedUntil !== null).map((c) => c.key) } };
      });
      if (outcome.wait > 0) {
        remember(outcome.byAddress ? address : input.refusalKey, at.getTime() + outcome.wait);
        return { reserved: false, retryAfterSeconds: seconds(outcome.wait) };
      }
      return { reserved: true, address: input.address, addressKey: address, accounts: outcome.open, waiting: outcome.waiting };
    },

    /**
     * The hash said the password was right for `signedIn` (account keys): the reservation is refunded, the counts of
     * those accounts are cleared (theirs only), and the address is remembered as theirs. Wrong (`signedIn` empty): the
     * reservation was the failure; a wait it started starts again now, so the wait is counted from the failure's
     * answer, not from before its hash. Not checked at all (the attempt was turned away after reserving): `signedIn`
     * null refunds the reservation only.
     */
    async settle(reservation: Extract<Reservation, { reserved: true }>, signedIn: { key: string; userId: string }[] | null): Promise<void> {
      const at = now();
      if (signedIn !== null && signedIn.length === 0) {
        if (reservation.waiting.length === 0) return;
        await repository.withCounts(reservation.waiting, at, (counts) => {
          const write: FailureCount[] = [];
          for (const count of counts.values()) {
            if (count.blockedUntil === null) continue;
            const threshold = count.key === reservation.addressKey ? LOGIN_FAILURES_PER_ADDRESS : LOGIN_FAILURES_PER_ACCOUNT;
            const wait = Math.min(firstWaitMs * 2 ** Math.min(count.failures - threshold, 30), LOGIN_FAILURE_WINDOW_MS);
            write.push({ ...count, blockedUntil: new Date(Math.max(count.blockedUntil.getTime(), at.getTime() + wait)) });
          }
          return { write, result: undefined };
        });
        return;
      }
      const cleared = new Set((signedIn ?? []).map((s) => s.key));
      const refund = reservation.accounts.filter((a) => !a.known && !cleared.has(a.key)).map((a) => a.key);
      await repository.withCounts([reservation.addressKey, ...refund, ...cleared], at, (counts) => {
        const write: FailureCount[] = [];
        const addressCount = counts.get(reservation.addressKey);
        if (addressCount) write.push(refunded(addressCount, LOGIN_FAILURES_PER_ADDRESS));
        for (const key of refund) {
          const count = counts.get(key);
          if (count) write.push(refunded(count, LOGIN_FAILURES_PER_ACCOUNT));
        }
        // The account that signed in starts again, wherever its failures came from.
        for (const key of cleared) write.push({ key, failures: 0, lastAt: at, blockedUntil: null });
        return { write, result: undefined };
      });
      if (signedIn) await repository.recordSuccess(signedIn.map((s) => s.userId), reservation.address, at);
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
