/**
 * The delivery worker's I/O (docs/webhooks.md): what the delivery machine (machines/webhook-delivery.machine.ts) is
 * given to run, with the state it needs in one place: the claims under leases renewed until the outcome is written,
 * the signed POSTs, the batched outcome writes, and who waits for an outcome.
 */
import { fromCallback, fromPromise } from 'xstate';
import type { ClaimedRow, WebhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import type { ClaimedDelivery, DeliveryCommand, DeliveryReport, RecordInput, RecordOutput, SendOutput } from '../../machines/webhook-delivery-types.ts';
import { webhookDeliveryMachine } from '../../machines/webhook-delivery.machine.ts';
import { createLeaseKeeper, type Lease } from '../leases/lease-keeper.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { GuardedClient } from '../net/guarded-client.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import { attemptOutcome, createAttemptSender } from './attempt.ts';
import type { createCapacity } from './capacity.ts';
import { createOutcomeRecorder } from './outcome-recorder.ts';
import type { Verdict } from './retry-policy.ts';
import { createSigningKeys } from './signing-keys.ts';

export interface DeliveryIoDeps {
  repository: WebhooksRepository;
  secrets: SecretBox;
  http: Pick<GuardedClient, 'request'>;
  metrics: Metrics | undefined;
  logger: Logger;
  now: () => number;
  random: () => number;
  owner: string;
  timeoutMs: number;
  leaseMs: number | undefined;
  capacity: ReturnType<typeof createCapacity>;
}

export function createDeliveryIo(deps: DeliveryIoDeps) {
  const { repository, secrets, http, metrics, logger, now, random, owner, timeoutMs, capacity } = deps;
  // Held from the claim until the outcome is written (or the delivery handed back); the write is fenced by the lease.
  const leases = createLeaseKeeper({
    kind: 'webhook_delivery',
    owner,
    logger,
    store: { renew: (ids, o, ms) => repository.renewLeases(ids, o, new Date(now() + ms)) },
    ...(deps.leaseMs ? { leaseMs: deps.leaseMs } : {}),
  });
  const leaseMs = leases.leaseMs;
  const held = new Map<string, Lease>();
  const endLease = (deliveryId: string) => {
    held.get(deliveryId)?.end();
    held.delete(deliveryId);
  };
  const claims = new Set<Promise<unknown>>();
  const recordedWaiters = new Map<string, Set<() => void>>();

  const recorder = createOutcomeRecorder({ repository, owner, now, logger });

  const send = createAttemptSender({ http, signingKeys: createSigningKeys(secrets), now, random, timeoutMs });

  const machine = webhookDeliveryMachine.provide({
    actors: {
      claim: fromPromise<ClaimedDelivery[], { endpointId: string; limit: number }>(async ({ input }) => {
        const allowed = capacity.claim(input.endpointId, input.limit);
        if (allowed === 0) return [];
        const at = now();
        const running = repository.claim({
          endpointId: input.endpointId,
          owner,
          now: new Date(at),
          leaseUntil: new Date(at + leaseMs),
          limit: allowed,
        });
        claims.add(running);
        try {
          const rows = await running;
          for (const row of rows) held.set(row.id, leases.hold(row.id));
          capacity.give(input.endpointId, allowed - rows.length);
          return rows.map(toClaimed);
        } catch (err) {
          capacity.give(input.endpointId, allowed);
          throw err;
        } finally {
          claims.delete(running);
        }
      }),

      // The endpoint's I/O port: one callback actor per delivery actor, for its whole life (see the machine). Answers and
      // written outcomes are gathered until the end of this turn of the event loop (setImmediate) and reported together.
      deliveries: fromCallback<DeliveryCommand, { endpointId: string }, DeliveryReport>(({ sendBack, receive }) => {
        const lifetime = new AbortController();
        let sent: SendOutput[] = [];
        let recorded: RecordOutput[] = [];
        let flushing: NodeJS.Immediate | undefined;
        const flush = () => {
          flushing = undefined;
          if (lifetime.signal.aborted) return;
          const [answers, written] = [sent, recorded];
          sent = [];
          recorded = [];
          if (answers.length > 0) sendBack({ type: 'sent', outputs: answers });
          if (written.length > 0) sendBack({ type: 'recorded', outputs: written });
        };
        const later = () => (flushing ??= setImmediate(flush));
        const report = (event: DeliveryReport) => {
          if (!lifetime.signal.aborted) sendBack(event);
        };
        receive((command) => {
          if (command.type === 'send') {
            for (const delivery of command.deliveries) {
              // The slot in the global count is free once the answer is in: an outcome waiting to be written holds a
              // lease, not a request (counting it made a busy worker's claims small and many: starved by its own writes).
              send(delivery, lifetime.signal).then(
                (output) => {
                  capacity.give(delivery.endpointId, 1);
                  sent.push(output);
                  later();
                },
                (error: unknown) => {
                  capacity.give(delivery.endpointId, 1);
                  endLease(delivery.id); // left to run out: attempted again then
                  report({ type: 'sendFailed', deliveryId: delivery.id, error });
                },
              );
            }
          } else {
            for (const input of command.inputs) {
              record(input).then(
                (output) => {
                  recorded.push(output);
                  later();
                },
                (error: unknown) => {
                  endLease(input.delivery.id); // left to run out: attempted again then
                  report({ type: 'recordFailed', deliveryId: input.delivery.id, error });
                },
              );
            }
          }
        });
        // The actor stopped (the worker is stopping): requests in flight are cancelled; their leases are handed back.
        return () => {
          clearImmediate(flushing);
          lifetime.abort();
        };
      }),
    },
  });

  /** Writes one attempt's outcome (batched with others). */
  async function record(input: RecordInput): Promise<RecordOutput> {
    const { delivery: d, attempt, verdict } = input;
    try {
      const outcome = await recorder.add(attemptOutcome(input));
      observe(d, attempt, verdict, outcome);
      return { deliveryId: d.id, ...outcome };
    } finally {
      endLease(d.id);
      const waiters = recordedWaiters.get(d.id);
      recordedWaiters.delete(d.id);
      for (const resolve of waiters ?? []) resolve();
    }
  }

  function observe(d: ClaimedDelivery, attempt: SendOutput, verdict: Verdict, outcome: { recorded: boolean; endpointDisabled: string | null }): void {
    metrics?.webhookAttempts.inc({ event: d.event, verdict: verdict.outcome });
    metrics?.webhookAttemptDuration.observe({ verdict: verdict.outcome }, attempt.latencyMs / 1000);
    if (verdict.outcome === 'succeeded' && d.kind === 'event') {
      metrics?.webhookDeliveryLag.observe(Math.max(0, now() - d.eventCreatedAt) / 1000);
    }
    // A success is logged at debug only: its fields are not even gathered when that level is off (thousands a second).
    const quietSuccess = outcome.recorded && verdict.outcome === 'succeeded' && !logger.isLevelEnabled('debug');
    if (!quietSuccess) {
      const fields = { endpointId: d.endpointId, deliveryId: d.id, webhookId: d.eventId, attempt: d.attemptCount + 1, verdict: verdict.outcome };
      if (!outcome.recorded) logger.warn(fields, 'webhook attempt not recorded: the lease was lost to another worker');
      else if (verdict.outcome === 'succeeded') logger.debug(fields, 'webhook delivered');
      else {
        const detail = attempt.result.kind === 'response' ? { httpStatus: attempt.result.status } : { error: attempt.result.message };
        const next = verdict.outcome === 'retry' ? { nextAttemptAt: new Date(verdict.nextAttemptAt).toISOString() } : {};
        logger.info({ ...fields, ...detail, ...next }, 'webhook attempt failed');
      }
    }
    if (outcome.endpointDisabled) {
      metrics?.webhookEndpointsDisabled.inc({ reason: verdict.outcome === 'gone' ? 'gone' : 'failing' });
      logger.warn({ endpointId: d.endpointId, reason: outcome.endpointDisabled }, 'webhook endpoint disabled');
    }
  }

  return { machine, claims, recordedWaiters, recorder, leases, held, endLease };
}

function toClaimed(row: ClaimedRow): ClaimedDelivery {
  return {
    id: row.id,
    eventId: row.event_id,
    kind: row.kind,
    attemptCount: row.attempt_count,
    endpointId: row.endpoint_id,
    event: row.event,
    url: row.url,
    payload: row.payload,
    eventCreatedAt: row.event_created_ms,
    secretSealed: row.secret_sealed,
    previousSecretSealed: row.previous_secret_sealed,
    previousSecretExpiresAt: row.previous_secret_expires_at?.getTime() ?? null,
  };
}
