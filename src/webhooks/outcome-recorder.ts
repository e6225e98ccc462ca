/**
 * The delivery worker's outcome recorder (src/webhooks/delivery-worker.ts): attempt outcomes written in batches, and
 * what they mean for their endpoint's health (last success, failing streak, 410, the five-day rule).
 */
import type { AttemptOutcome, WebhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import { groupCommit } from '../../db/group-commit.ts';
import type { Logger } from '../log.ts';
import { applyAutoDisable } from './auto-disable.ts';
import { AUTO_DISABLE_AFTER_MS, LAST_SUCCESS_RESOLUTION_MS, RECORD_BATCH_SIZE, RECORD_BATCH_WAIT_MS, RECORD_WRITERS } from './limits.ts';

/** Endpoints whose last written health this process remembers; past it the memory starts over (a write more each). */
const MAX_HEALTH_ENTRIES = 10_000;

/**
 * Writes outcomes in batches: an outcome waits RECORD_BATCH_WAIT_MS for company, up to RECORD_WRITERS batches are
 * written side by side, so a busy worker writes many outcomes per statement and an idle one adds little latency.
 * What the outcomes mean for their endpoints (last success, failing streak, 410) is written after them, per endpoint,
 * and only when something changed: a healthy busy endpoint's row is written about once a second, not per delivery.
 */
export function createOutcomeRecorder(deps: { repository: WebhooksRepository; owner: string; now: () => number; logger: Logger }) {
  type Result = { recorded: boolean; endpointDisabled: string | null };
  /** Per endpoint: when this process last wrote its health, and whether its last known attempt failed. */
  const health = new Map<string, { writtenAt: number; failing: boolean }>();

  function needsHealth(endpointId: string, outcomes: readonly AttemptOutcome[], at: number): boolean {
    const known = health.get(endpointId);
    return outcomes.some((o) => !o.succeeded) || !known || known.failing || at - known.writtenAt >= LAST_SUCCESS_RESOLUTION_MS;
  }

  async function write(batch: AttemptOutcome[]): Promise<Result[]> {
    try {
      const at = deps.now();
      const written = await deps.repository.recordOutcomes({ owner: deps.owner, now: new Date(at), outcomes: batch });
      const disabled = new Map<string, string>();
      const byEndpoint = new Map<string, AttemptOutcome[]>();
      for (const outcome of batch) {
        if (outcome.kind !== 'event' || !written.has(outcome.deliveryId)) continue;
        const outcomes = byEndpoint.get(outcome.endpointId);
        if (outcomes) outcomes.push(outcome);
        else byEndpoint.set(outcome.endpointId, [outcome]);
      }
      // One endpoint at a time, in id order: concurrent batches lock endpoint rows in the same order.
      for (const endpointId of [...byEndpoint.keys()].sort()) {
        const outcomes = byEndpoint.get(endpointId)!;
        if (!needsHealth(endpointId, outcomes, at)) continue;
        const last = outcomes.reduce((a, b) => (b.startedAt.getTime() >= a.startedAt.getTime() ? b : a));
        try {
          const reason = await applyAutoDisable(deps.repository, endpointId, outcomes, { now: new Date(at), autoDisableAfterMs: AUTO_DISABLE_AFTER_MS });
          health.set(endpointId, { writtenAt: at, failing: !last.succeeded });
          if (reason) disabled.set(endpointId, reason);
        } catch (err) {
          // The outcomes are written; the endpoint's bookkeeping catches up with its next attempt.
          health.delete(endpointId);
          deps.logger.warn({ err, endpointId }, 'writing webhook endpoint health failed');
        }
      }
      if (health.size > MAX_HEALTH_ENTRIES) health.clear();
      return batch.map((outcome) => ({ recorded: written.has(outcome.deliveryId), endpointDisabled: disabled.get(outcome.endpointId) ?? null }));
    } catch (err) {
      deps.logger.error({ err, batch: batch.length }, 'writing webhook outcomes failed; the leases will run out and the deliveries be attempted again');
      throw err;
    }
  }

  // The one batcher (db/group-commit.ts): an outcome waits RECORD_BATCH_WAIT_MS for company, RECORD_WRITERS batches
  // are written side by side, and a batch that fails is written outcome by outcome.
  const commit = groupCommit<AttemptOutcome, Result>({ write, maxBatch: RECORD_BATCH_SIZE, concurrency: RECORD_WRITERS, lingerMs: RECORD_BATCH_WAIT_MS });

  return {
    add: (outcome: AttemptOutcome): Promise<Result> => commit.add(outcome),
    flush: (): Promise<void> => commit.flushed(),
  };
}
