/**
 * A token bucket per key: `burst` requests at once, refilled evenly at `burst` per `windowMs`. One limiter serves
 * every budget of the service, each with its own figures from its own limits.ts: the widget's visitors (a client
 * address of a workspace, and a conversation; src/channels/webchat/widget-gate.ts), "Try a question" and the
 * take-over summary per workspace (docs/knowledge.md, "Try a question"), an agent's messages per agent and
 * conversation (docs/architecture.md, "Who handles a conversation").
 *
 * The buckets live in this process's memory. Behind N processes a key may make up to N times the rate; that is the
 * accepted cost of not touching the database for every request (docs/webchat.md). A shared limit belongs in front
 * of the processes (the reverse proxy) or in a shared store, should it ever be needed.
 */
import { AppError } from './errors.ts';

/** A budget's figures; each use states its own in its limits.ts. */
export interface RateLimit {
  /** Requests a key may make at once. */
  burst: number;
  /** Milliseconds in which an empty bucket fills up again (the rate is `burst` per `windowMs`). */
  windowMs: number;
  /** Buckets kept before idle (full) ones are dropped. */
  maxBuckets: number;
}

/** What tests and benchmarks set otherwise: any figure, and the clock (milliseconds; default performance.now). */
export interface RateLimitOptions extends Partial<RateLimit> {
  now?: () => number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
}

export function createRateLimiter(limit: RateLimit, options: RateLimitOptions = {}) {
  const burst = options.burst ?? limit.burst;
  const windowMs = options.windowMs ?? limit.windowMs;
  const maxBuckets = options.maxBuckets ?? limit.maxBuckets;
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

  const refusal = (bucket: Bucket): RateDecision => ({ allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)) });

  function take(key: string): RateDecision {
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
    return refusal(bucket);
  }

  return {
    /** Takes one token for `key`, or says how many whole seconds until the next one. */
    take,

    /**
     * Takes one token for `key`, or throws 429 `rate_limited` with `details.retry_after` (whole seconds), which the app
     * also sends as Retry-After (src/http/app.ts). `message` says what was refused, given the seconds to wait.
     */
    takeOrRefuse(key: string, message: (retryAfterSeconds: number) => string): void {
      const decision = take(key);
      if (!decision.allowed) throw new AppError('rate_limited', message(decision.retryAfterSeconds), { retry_after: decision.retryAfterSeconds });
    },

    /** Whether `take` would allow one now, without taking it. */
    peek(key: string): RateDecision {
      const bucket = buckets.get(key);
      if (!bucket) return { allowed: true };
      refill(bucket, now());
      return bucket.tokens >= 1 ? { allowed: true } : refusal(bucket);
    },

    size(): number {
      return buckets.size;
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
