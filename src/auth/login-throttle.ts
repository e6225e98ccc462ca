/**
 * Failed sign-ins slow down (docs/reliability.md, "Limits per token"): per account (the email, whether or not it
 * exists, so the answer tells nothing) and per client address. After the threshold of failures within the window,
 * every further attempt is refused with 429 until a wait has passed; the wait doubles with each further failure, up to
 * the window. Attempts during a wait are not checked at all (so they cost no hashing and reveal nothing). A success
 * clears the account's count, never the address's (else signing in to one's own account would reset a guesser's).
 *
 * Counts live in this process's memory: several processes each count their own (a guesser gets at most that many
 * times the attempts), and a restart forgets them. The maps are bounded; the oldest entries go first.
 */
import {
  LOGIN_FAILURE_WINDOW_MS,
  LOGIN_FAILURES_PER_ACCOUNT,
  LOGIN_FAILURES_PER_ADDRESS,
  LOGIN_FIRST_WAIT_MS,
} from '../limits.ts';

interface Failures {
  count: number;
  lastAt: number;
  /** Attempts are refused until then (ms since the epoch); 0: none refused. */
  blockedUntil: number;
}

const MAX_ENTRIES = 100_000;

function counter(threshold: number, now: () => number) {
  const entries = new Map<string, Failures>();
  const current = (key: string): Failures | undefined => {
    const entry = entries.get(key);
    if (entry && now() - entry.lastAt > LOGIN_FAILURE_WINDOW_MS) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };
  return {
    /** Milliseconds until the next attempt is allowed; 0: now. */
    waitMs(key: string): number {
      const entry = current(key);
      return entry ? Math.max(0, entry.blockedUntil - now()) : 0;
    },
    fail(key: string): void {
      const entry = current(key) ?? { count: 0, lastAt: 0, blockedUntil: 0 };
      entry.count++;
      entry.lastAt = now();
      if (entry.count >= threshold) {
        const wait = Math.min(LOGIN_FIRST_WAIT_MS * 2 ** Math.min(entry.count - threshold, 30), LOGIN_FAILURE_WINDOW_MS);
        entry.blockedUntil = entry.lastAt + wait;
      }
      entries.delete(key);
      entries.set(key, entry);
      while (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    },
    clear(key: string): void {
      entries.delete(key);
    },
  };
}

export function createLoginThrottle(options: { now?: () => number } = {}) {
  const now = options.now ?? Date.now;
  const accounts = counter(LOGIN_FAILURES_PER_ACCOUNT, now);
  const addresses = counter(LOGIN_FAILURES_PER_ADDRESS, now);
  const accountKey = (email: string) => email.trim().toLowerCase();
  return {
    /** Whole seconds to wait before this email may be tried from this address; 0: go ahead. */
    retryAfterSeconds(email: string, address: string): number {
      const wait = Math.max(accounts.waitMs(accountKey(email)), addresses.waitMs(address));
      return Math.ceil(wait / 1000);
    },
    failed(email: string, address: string): void {
      accounts.fail(accountKey(email));
      addresses.fail(address);
    },
    succeeded(email: string): void {
      accounts.clear(accountKey(email));
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
