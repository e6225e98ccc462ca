/**
 * A token bucket per key: `burst` requests at once, refilled evenly at `burst` per `windowMs`. The widget's gate keys
 * them per visitor (a client address of a workspace, and a conversation; src/channels/webchat/widget-gate.ts), so one
 * client never spends another's budget, nor one website another's.
 *
 * The buckets live in this process's memory. Behind N processes a key may make up to N times the rate; that is the
 * accepted cost of not touching the database for every request (docs/webchat.md). A shared limit belongs in front
 * of the processes (the reverse proxy) or in a shared store, should it ever be needed.
 */
import { MAX_RATE_BUCKETS, WEBCHAT_RATE_BURST, WEBCHAT_RATE_WINDOW_MS } from './limits.ts';

export interface RateLimitOptions {
  /** Requests a key may make at once; default {@link WEBCHAT_RATE_BURST}. */
  burst?: number;
  /** Milliseconds in which an empty bucket fills up again; default {@link WEBCHAT_RATE_WINDOW_MS}. */
  windowMs?: number;
  /** Buckets kept before idle (full) ones are dropped; default {@link MAX_RATE_BUCKETS}. */
  maxBuckets?: number;
  now?: () => number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
}

export function createRateLimiter(options: RateLimitOptions = {}) {
  const burst = options.burst ?? WEBCHAT_RATE_BURST;
  const windowMs = options.windowMs ?? WEBCHAT_RATE_WINDOW_MS;
  const maxBuckets = options.maxBuckets ?? MAX_RATE_BUCKETS;
  const now = options.now ?? (() => performance.now());
  const perMs = burst / windowMs;
  const buckets = new Map<string, Bucket>();

  function refill(bucket: Bucket, at: number): void {
    bucket.tokens = Math.min(burst, bucket.tokens + (at - bucket.at) * perMs);
    bucket.at = at;
  }

  /** A full bucket is the same as none, so dropping it forgets nothing. */
  function dropFull(at: number): void {
    for (const [key, bucket] of buckets) {
      refill(bucket, at);
      if (bucket.tokens >= burst) buckets.delete(key);
    }
  }

  return {
    /** Takes one token for `key`, or says how many whole seconds until the next one. */
    take(key: string): RateDecision {
      const at = now();
      let bucket = buckets.get(key);
      if (!bucket) {
        if (buckets.size >= maxBuckets) dropFull(at);
        bucket = { tokens: burst, at };
        buckets.set(key, bucket);
      } else {
        refill(bucket, at);
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { allowed: true };
      }
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)) };
    },

    /** Whether `take` would allow one now, without taking it. */
    peek(key: string): RateDecision {
      const bucket = buckets.get(key);
      if (!bucket) return { allowed: true };
      refill(bucket, now());
      return bucket.tokens >= 1 ? { allowed: true } : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)) };
    },

    size(): number {
      return buckets.size;
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
