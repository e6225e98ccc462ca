/**
 * Retrying an HTTP call on a schedule: shared by outgoing webhooks (src/webhooks/retry-policy.ts) and WhatsApp
 * sends (src/channels/whatsapp/worker.ts). Each gives its own schedule; the rules are one: a delay is jittered so
 * senders that failed together do not retry together, and a receiver's `Retry-After` may postpone the next attempt,
 * up to a cap, but never bring it forward (the schedule is the floor).
 */

/** `Retry-After` as milliseconds from `nowMs`: delta-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (value == null) return null;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  // An HTTP date always names a weekday, a day, a month and GMT; Date.parse alone would accept far more.
  if (!/^[A-Za-z]{3},? .*GMT$/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/**
 * `schedule[index]` stretched or shrunk by up to `jitter` (a share: 0.2 is ±20 %), with `jitterSample` in [0, 1);
 * null when the schedule is used up.
 */
export function jitteredDelay(schedule: readonly number[], index: number, jitter: number, jitterSample: number): number | null {
  const base = schedule[index];
  if (base === undefined) return null;
  const sample = Math.min(Math.max(jitterSample, 0), 1);
  return Math.round(base * (1 + jitter * (2 * sample - 1)));
}

/** The wait before the next attempt: the scheduled delay, or what `Retry-After` asked (at most `maxRetryAfterMs`) when longer. */
export function retryDelay(scheduledMs: number, retryAfterMs: number | null, maxRetryAfterMs: number): number {
  return retryAfterMs === null ? scheduledMs : Math.max(scheduledMs, Math.min(retryAfterMs, maxRetryAfterMs));
}
