/**
 * What recorded attempts mean for their endpoint: the last success resets the failing streak; failures after it
 * start or extend it; a streak of AUTO_DISABLE_AFTER_MS (Svix's five days), or a 410 Gone, disables the endpoint and
 * settles its waiting deliveries. Only real events count: the test button must neither disable nor revive an endpoint,
 * so the caller passes event outcomes only.
 */
import type { AttemptOutcome, WebhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import { MAX_ERROR_CHARS } from './limits.ts';

const DAY_MS = 86_400_000;

/**
 * Writes the endpoint's health for `outcomes` (one endpoint's) in a transaction of its own; returns the reason shown
 * to the owner when this call disabled the endpoint, else null.
 */
export async function applyAutoDisable(
  repository: WebhooksRepository,
  endpointId: string,
  outcomes: readonly AttemptOutcome[],
  options: { now: Date; autoDisableAfterMs: number },
): Promise<string | null> {
  const successes = outcomes.filter((o) => o.succeeded).map((o) => o.startedAt.getTime());
  const lastSuccess = successes.length > 0 ? Math.max(...successes) : null;
  const failuresAfter = outcomes.filter((o) => !o.succeeded && (lastSuccess === null || o.startedAt.getTime() > lastSuccess));
  const firstFailure = failuresAfter.length > 0 ? new Date(Math.min(...failuresAfter.map((o) => o.startedAt.getTime()))) : null;
  const lastFailure = failuresAfter.length > 0 ? new Date(Math.max(...failuresAfter.map((o) => o.startedAt.getTime()))) : null;

  return repository.inTransaction(async (queries) => {
    const failingSince = await queries.recordStreak(endpointId, {
      lastSuccessAt: lastSuccess === null ? null : new Date(lastSuccess),
      firstFailureAt: firstFailure,
      lastFailureAt: lastFailure,
    });

    const gone = outcomes.find((o) => o.goneReason !== null);
    let reason: string | null = null;
    let at = options.now;
    if (gone) {
      reason = gone.goneReason;
      at = gone.startedAt;
    } else if (failingSince && lastFailure && lastFailure.getTime() - failingSince.getTime() >= options.autoDisableAfterMs) {
      const days = Math.floor((lastFailure.getTime() - failingSince.getTime()) / DAY_MS);
      const last = [...failuresAfter].sort((a, b) => b.startedAt.getTime() - a.startedAt.getTime())[0]!;
      reason =
        `Every delivery attempt since ${failingSince.toISOString()} failed (${days} days without a success); ` +
        `the last one at ${last.startedAt.toISOString()}: ${last.error ?? `HTTP ${last.httpStatus}`}`;
      at = lastFailure;
    }
    if (reason === null) return null;

    const lastError = `Not sent: the endpoint was disabled. ${reason}`.slice(0, MAX_ERROR_CHARS);
    const disabled = await queries.disableEndpoint(endpointId, { at, reason, lastError, now: options.now });
    return disabled ? reason : null;
  });
}
