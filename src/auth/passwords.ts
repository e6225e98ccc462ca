/**
 * Passwords: scrypt (node:crypto) with a random salt per password; the parameters are stored with the hash
 * (`scrypt$N$r$p$salt$hash`, salt and hash in base64url) so they can grow later without breaking stored ones.
 * N = 2^15, r = 8, p = 1 takes about 50-100 ms and 32 MiB per hash; at most two run at once, so a flood of sign-ins
 * cannot take every thread of libuv's pool (DNS look-ups and file access share it) nor much memory.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS } from '../limits.ts';

const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
const MAX_CONCURRENT_HASHES = 2;

/**
 * Where a hash waits its turn (docs/reliability.md, "Sign-in under attack"). Waiting hashes are served one lane (client
 * address) at a time in turn, so a burst from one address delays another address's sign-in by at most one of its
 * hashes, however many it sent (each client also holds only a few places, src/accounts/sign-in-service.ts).
 * `first`: a sign-in from an address its user signed in from recently goes ahead of every lane.
 */
export interface HashOptions {
  first?: boolean;
  /** The client address; absent: one lane shared by every hash made without one (new passwords). */
  lane?: string;
}

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }, order: HashOptions = {}): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; Node refuses above `maxmem` (32 MiB by default, exactly our need), so leave room.
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r };
  return limited(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key)));
      }),
    order,
  );
}

let running = 0;
const waitingFirst: (() => void)[] = [];
/** Waiting hashes per lane; the Map's order is the turn order: a lane served goes to the back. */
const lanes = new Map<string, (() => void)[]>();

function nextWaiting(): (() => void) | undefined {
  const first = waitingFirst.shift();
  if (first) return first;
  for (const [lane, waiters] of lanes) {
    lanes.delete(lane);
    const next = waiters.shift();
    if (waiters.length > 0) lanes.set(lane, waiters);
    if (next) return next;
  }
  return undefined;
}

async function limited<T>(work: () => Promise<T>, order: HashOptions): Promise<T> {
  if (running >= MAX_CONCURRENT_HASHES) {
    await new Promise<void>((resolve) => {
      if (order.first === true) return void waitingFirst.push(resolve);
      const lane = order.lane ?? '';
      const waiters = lanes.get(lane);
      if (waiters) waiters.push(resolve);
      else lanes.set(lane, [resolve]);
    });
  } else {
    running++;
  }
  try {
    return await work();
  } finally {
    const next = nextWaiting();
    if (next) next();
    else running--;
  }
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether the password matches the stored hash; compared in constant time. A stored value we cannot read never matches. */
export async function verifyPassword(password: string, stored: string, order: HashOptions = {}): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0)) return false;
  const expected = Buffer.from(parts[5]!, 'base64url');
  if (expected.length !== KEY_BYTES) return false;
  const key = await derive(password, Buffer.from(parts[4]!, 'base64url'), { N, r, p }, order);
  return timingSafeEqual(key, expected);
}

/**
 * The hash of a random password nobody kept, with today's parameters: signing in with an email that has no password
 * still costs one verification, so the answer's timing does not tell whether the email is known.
 */
const DUMMY_HASH = 'scrypt$32768$8$1$2tfUAKUwVXN0rHGiPkri-Q$pX10nhNevsL8xQXYng2B0FYLaGOTZRFS0vuCPo0bk08';

export async function verifyDummy(password: string, order: HashOptions = {}): Promise<false> {
  await verifyPassword(password, DUMMY_HASH, order);
  return false;
}

/** The first password rule a new password breaks, as a sentence; null when it keeps them all (docs: README, Sign in). */
export function passwordProblem(password: string): string | null {
  const chars = [...password].length;
  if (chars < MIN_PASSWORD_CHARS) return `The password needs at least ${MIN_PASSWORD_CHARS} characters (it has ${chars}).`;
  if (chars > MAX_PASSWORD_CHARS) return `The password may have at most ${MAX_PASSWORD_CHARS} characters (it has ${chars}).`;
  if (password.trim() === '') return 'The password may not be only spaces or other whitespace.';
  return null;
}
