/**
 * The delivery worker: runs one delivery actor (machines/webhook-delivery.machine.ts) per endpoint that has due
 * deliveries, and provides its I/O: the claim (FOR UPDATE SKIP LOCKED under a lease), the signed POST through the
 * guarded client, and the write of each outcome (batched, fenced by the lease).
 *
 * How it learns of work: the table is the truth and is polled (every POLL_INTERVAL_MS, sooner when a retry falls
 * due); wake-ups only hurry it: NOTIFY on real PostgreSQL (src/webhooks/outbox-listener.ts), the in-process signal
 * of recordEvent, a manual retry or the test button.
 *
 * At-least-once: a delivery is finished only by writing its outcome, after the receiver answered. A worker that dies
 * before that leaves a lease that runs out; the delivery is then claimed again and sent with the same webhook-id.
 * Several engines on one database never claim the same row at once (SKIP LOCKED plus the lease), so a delivery is
 * sent twice only when its worker died or stalled past the lease.
 */
import { randomUUID } from 'node:crypto';
import { createActor, type Actor } from 'xstate';
import type { WebhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import type { webhookDeliveryMachine } from '../../machines/webhook-delivery.machine.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { GuardedClient } from '../net/guarded-client.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import { createCapacity } from './capacity.ts';
import { createDeliveryIo } from './delivery-io.ts';
import { CLAIM_AHEAD_FACTOR, CLAIM_RETRY_MS, DELIVERY_TIMEOUT_MS, ENDPOINT_CONCURRENCY, MAX_IN_FLIGHT, POLL_INTERVAL_MS } from './limits.ts';
import { onDeliveriesQueued } from './outbox.ts';
import { decideAttempt } from './retry-policy.ts';

/** The delivery machine's policy: the retry schedule and the wait after a failed claim. */
const DELIVERY_POLICY = { decide: decideAttempt, claimRetryMs: CLAIM_RETRY_MS } as const;

/** How many endpoints one poll looks at; the earliest due come first. */
const POLL_ENDPOINTS = 1_000;

export interface DeliveryWorkerOptions {
  repository: WebhooksRepository;
  secrets: SecretBox;
  http: Pick<GuardedClient, 'request'>;
  logger: Logger;
  metrics?: Metrics;
  /** Names this worker in the lease column; default a random id per worker. */
  instanceId?: string;
  /** The clock of the schedule, the leases and `webhook-timestamp`, ms since epoch; tests drive a fake one. */
  now?: () => number;
  /** Uniform in [0, 1): the jitter of retry delays. */
  random?: () => number;
  /** Attempts in flight per endpoint; default ENDPOINT_CONCURRENCY. */
  endpointConcurrency?: number;
  /** Attempts in flight in all; default MAX_IN_FLIGHT. */
  maxInFlight?: number;
  /** Default POLL_INTERVAL_MS. */
  pollIntervalMs?: number;
  /** One attempt's deadline; default DELIVERY_TIMEOUT_MS. */
  timeoutMs?: number;
  /** A claim's lease, renewed while the delivery is queued or sent; default LEASE_MS (src/leases/durations.ts). */
  leaseMs?: number;
}

type EndpointActor = Actor<typeof webhookDeliveryMachine>;

export function createDeliveryWorker(options: DeliveryWorkerOptions) {
  const { repository, secrets, http, metrics } = options;
  const logger = options.logger.child({ component: 'webhook-delivery' });
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const owner = options.instanceId ?? `webhooks-${randomUUID()}`;
  const concurrency = options.endpointConcurrency ?? ENDPOINT_CONCURRENCY;
  const maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT;
  const pollIntervalMs = options.pollIntervalMs ?? POLL_INTERVAL_MS;
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;

  const actors = new Map<string, EndpointActor>();
  /** Slots taken per endpoint and in all: the global cap; endpoints it cut short are woken when slots free up. */
  const capacity = createCapacity({
    maxInFlight,
    onFreed: (starved) => {
      if (!stopping) for (const id of starved) ensureActor(id);
    },
  });
  const releases = new Set<Promise<unknown>>();
  let idleWaiters: (() => void)[] = [];

  let started = false;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let polling: Promise<boolean> | null = null;
  let pollAgain = false;
  let nextDueAt: number | null = null;
  let unsubscribe: (() => void) | undefined;

  const { machine, claims, recordedWaiters, recorder, leases, held, endLease } = createDeliveryIo({
    repository,
    secrets,
    http,
    metrics,
    logger,
    now,
    random,
    owner,
    timeoutMs,
    leaseMs: options.leaseMs,
    capacity,
  });

  function ensureActor(endpointId: string): void {
    const live = actors.get(endpointId);
    if (live) {
      live.send({ type: 'wake' });
      return;
    }
    if (stopping) return;
    const actor = createActor(machine, { input: { policy: DELIVERY_POLICY, endpointId, concurrency, claimAhead: concurrency * CLAIM_AHEAD_FACTOR } });
    actors.set(endpointId, actor);
    actor.subscribe({
      complete: () => finished(endpointId, actor),
      error: (err) => {
        logger.error({ err, endpointId }, 'webhook delivery actor failed');
        finished(endpointId, actor);
      },
    });
    actor.start();
  }

  function finished(endpointId: string, actor: EndpointActor): void {
    if (actors.get(endpointId) !== actor) return;
    actors.delete(endpointId);
    const output = actor.getSnapshot().output;
    if (output?.lastError) logger.warn({ endpointId, error: output.lastError }, 'webhook delivery actor ended after an error');
    // Claimed but never sent (the actor stopped, or the endpoint was disabled): back to the table at once.
    if (output && output.unsent.length > 0) {
      for (const id of output.unsent) endLease(id);
      const releasing = repository.releaseLeases(owner, new Date(now()), output.unsent).catch((err: unknown) => {
        logger.warn({ err, endpointId }, 'could not hand back webhook leases; they run out by themselves');
        return 0;
      });
      releases.add(releasing);
      void releasing.finally(() => releases.delete(releasing));
    }
    capacity.give(endpointId, capacity.heldBy(endpointId));
    if (actors.size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  function idle(): Promise<void> {
    if (actors.size === 0) return Promise.resolve();
    return new Promise((resolve) => idleWaiters.push(resolve));
  }

  /** Reads which endpoints have due work and wakes their actors; true when any was due. */
  function poll(): Promise<boolean> {
    if (polling) {
      pollAgain = true;
      return polling;
    }
    polling = (async () => {
      let anyDue = false;
      do {
        pollAgain = false;
        const at = now();
        const pending = await repository.pendingEndpoints(POLL_ENDPOINTS);
        let next: number | null = null;
        for (const { endpointId, dueAt } of pending) {
          if (dueAt.getTime() <= at) {
            anyDue = true;
            ensureActor(endpointId);
          } else if (next === null || dueAt.getTime() < next) {
            next = dueAt.getTime();
          }
        }
        nextDueAt = next;
      } while (pollAgain && !stopping);
      return anyDue;
    })()
      .catch((err: unknown) => {
        logger.error({ err }, 'webhook poll failed');
        return false;
      })
      .finally(() => {
        polling = null;
        schedule();
      });
    return polling;
  }

  function schedule(): void {
    if (!started || stopping) return;
    clearTimeout(timer);
    const untilDue = nextDueAt === null ? pollIntervalMs : nextDueAt - now();
    timer = setTimeout(() => void poll(), Math.max(0, Math.min(pollIntervalMs, untilDue)));
    timer.unref();
  }

  /** New work may be due: for the endpoints named (their actors claim at once), or anywhere (a poll now). */
  function wake(endpointIds?: readonly string[]): void {
    if (stopping) return;
    if (endpointIds === undefined) void poll();
    else for (const id of endpointIds) ensureActor(id);
  }

  return {
    /** The id in the lease column. */
    instanceId: owner,

    /** Starts polling and listening to the in-process signal; delivery of whatever is due begins at once. */
    start(): void {
      if (started) return;
      started = true;
      unsubscribe = onDeliveriesQueued(wake);
      void poll();
    },

    /** New work may be due: for the endpoints named (their actors claim at once), or anywhere (a poll now). */
    wake,

    /**
     * Delivers everything due now and returns when every actor has finished: polls, waits, and polls again while
     * something was due. For tests on a fake clock (with the worker not started) and for draining.
     */
    async runDue(): Promise<void> {
      for (let round = 0; round < 100; round++) {
        const anyDue = await poll();
        await idle();
        if (!anyDue) return;
      }
    },

    /**
     * Resolves true when this process has written an outcome for the delivery (the test button waits on it), false
     * after `timeoutMs` (another engine may have sent it).
     */
    whenRecorded(deliveryId: string, timeoutMs: number): Promise<boolean> {
      return new Promise((resolve) => {
        const set = recordedWaiters.get(deliveryId) ?? new Set();
        const done = () => {
          clearTimeout(timeout);
          resolve(true);
        };
        const timeout = setTimeout(() => {
          set.delete(done);
          if (set.size === 0) recordedWaiters.delete(deliveryId);
          resolve(false);
        }, timeoutMs);
        timeout.unref();
        set.add(done);
        recordedWaiters.set(deliveryId, set);
      });
    },

    /** Deliveries claimed and not yet answered (queued for a slot, or being sent). */
    inFlight(): number {
      return capacity.total();
    },

    /**
     * Stops claiming; attempts in flight finish within `graceMs` (each has its own deadline anyway), the rest are
     * cancelled and their leases given back, so another engine (or this one after a restart) sends them at once.
     */
    async stop(graceMs: number = timeoutMs): Promise<void> {
      if (stopping) return;
      stopping = true;
      clearTimeout(timer);
      unsubscribe?.();
      for (const actor of actors.values()) actor.send({ type: 'stop' });
      let graceTimer: NodeJS.Timeout | undefined;
      await Promise.race([idle(), new Promise<void>((resolve) => (graceTimer = setTimeout(resolve, graceMs)))]);
      clearTimeout(graceTimer);
      for (const actor of [...actors.values()]) actor.stop();
      actors.clear();
      await polling;
      await Promise.allSettled([...claims, ...releases]);
      await recorder.flush();
      leases.stop();
      held.clear();
      try {
        const released = await repository.releaseLeases(owner, new Date(now()));
        if (released > 0) logger.info({ released }, 'webhook deliveries handed back');
      } catch (err) {
        logger.warn({ err }, 'could not hand back webhook leases; they run out by themselves');
      }
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
