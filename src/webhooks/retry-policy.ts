/**
 * What one attempt's result means for its delivery: pure functions of the result, the attempt number and the clock,
 * given to the delivery machine (machines/webhook-delivery.machine.ts) by its runtime as its policy, and used by the
 * tests to check the schedule without waiting.
 *
 * Standard Webhooks' status handling: 2xx is success; every other status is a failure, 3xx included (redirects are
 * never followed); 410 Gone means the receiver wants nothing more, so the endpoint is disabled; `Retry-After` is
 * taken into account when the next attempt is scheduled.
 */
import type { AttemptResult, DeliveryKind, Verdict } from '../../machines/webhook-delivery-types.ts';
import { jitteredDelay, parseRetryAfter, retryDelay } from '../net/retry-schedule.ts';
import { MAX_RETRY_AFTER_MS, RETRY_JITTER, RETRY_SCHEDULE_MS } from './limits.ts';

// The shapes are the delivery machine's (machines/webhook-delivery-types.ts): it decides with them.
export type { AttemptResult, DeliveryKind, Verdict } from '../../machines/webhook-delivery-types.ts';

export const isSuccess = (result: AttemptResult): boolean =>
  result.kind === 'response' && result.status >= 200 && result.status <= 299;

/**
 * The delay before the next attempt after `attemptsMade` attempts have failed, jittered by ±RETRY_JITTER with
 * `jitterSample` in [0, 1); null when the schedule is used up.
 */
export function scheduledDelay(attemptsMade: number, jitterSample: number): number | null {
  return jitteredDelay(RETRY_SCHEDULE_MS, attemptsMade, RETRY_JITTER, jitterSample);
}

/**
 * The verdict on one attempt. `attemptNumber` counts this attempt (1 for the first). A receiver's `Retry-After` can
 * postpone the next attempt up to MAX_RETRY_AFTER_MS but never bring it forward: the schedule is the floor, so no
 * receiver can make us spend its attempts faster.
 */
export function decideAttempt(input: {
  result: AttemptResult;
  attemptNumber: number;
  kind: DeliveryKind;
  /** When the attempt started, ms since epoch. */
  attemptedAt: number;
  /** Uniform in [0, 1): the jitter of the next delay. */
  jitterSample: number;
}): Verdict {
  const { result, attemptNumber, kind, attemptedAt, jitterSample } = input;
  if (isSuccess(result)) return { outcome: 'succeeded' };
  if (result.kind === 'response' && result.status === 410 && kind === 'event') return { outcome: 'gone' };
  // The test button's delivery has one attempt; a manual retry adds another.
  if (kind === 'test') return { outcome: 'exhausted' };
  const scheduled = scheduledDelay(attemptNumber, jitterSample);
  if (scheduled === null) return { outcome: 'exhausted' };
  const asked = result.kind === 'response' ? parseRetryAfter(result.retryAfter, attemptedAt) : null;
  const delayMs = retryDelay(scheduled, asked, MAX_RETRY_AFTER_MS);
  return { outcome: 'retry', nextAttemptAt: attemptedAt + delayMs, delayMs };
}
