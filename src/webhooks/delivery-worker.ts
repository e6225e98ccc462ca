// Over 400 lines: the worker's loop and the I/O actors it gives each endpoint's machine share one registry of endpoints.
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
import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import { createActor, fromCallback, fromPromise, type Actor } from 'xstate';
import type { ClaimedRow, WebhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import type { ClaimedDelivery, DeliveryCommand, DeliveryReport, RecordInput, RecordOutput, SendOutput } from '../../machines/webhook-delivery-types.ts';
import { webhookDeliveryMachine } from '../../machines/webhook-delivery.machine.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { OutboundError, type GuardedClient } from '../net/guarded-client.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import {
  CLAIM_AHEAD_FACTOR,
  CLAIM_RETRY_MS,
  DELIVERY_LEASE_MS,
  DELIVERY_TIMEOUT_MS,
  ENDPOINT_CONCURRENCY,
  MAX_ERROR_CHARS,
  MAX_IN_FLIGHT,
  POLL_INTERVAL_MS,
  RESPONSE_EXCERPT_BYTES,
  WEBHOOK_USER_AGENT,
} from './limits.ts';
import { createOutcomeRecorder } from './outcome-recorder.ts';
import { encodePayload } from './payload-body.ts';
import { decideAttempt, type AttemptResult, type Verdict } from './retry-policy.ts';

import { secretContext, secretKey, webhookHeaders } from './signing.ts';
import { onDeliveriesQueued } from './outbox.ts';
import { cleanText } from '../text/outside-text.ts';

/** The delivery machine's policy: the retry schedule and the wait after a failed claim. */
const DELIVERY_POLICY = { decide: decideAttempt, claimRetryMs: CLAIM_RETRY_MS } as const;

/** How many endpoints one poll looks at; the earliest due come first. */
const POLL_ENDPOINTS = 1_000;
/** Opened secrets kept (sealed value → HMAC key); a sealed value never changes meaning, so there is nothing to invalidate. */
const KEY_CACHE_SIZE = 1_000;

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
  /** A claim's lease; default DELIVERY_LEASE_MS. Must be longer than `timeoutMs`. */
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
  const leaseMs = options.leaseMs ?? DELIVERY_LEASE_MS;
  if (!(leaseMs > timeoutMs)) throw new RangeError('The delivery lease must be longer than the attempt time-out.');

  const actors = new Map<string, EndpointActor>();
  /** Slots taken per endpoint (claimed, not yet settled), and in all: the global cap. */
  const taken = new Map<string, number>();
  let takenTotal = 0;
  /** Endpoints whose claim the global cap cut short: woken when slots free up. */
  const starved = new Set<string>();
  const claims = new Set<Promise<unknown>>();
  const releases = new Set<Promise<unknown>>();
  const recordedWaiters = new Map<string, Set<() => void>>();
  let idleWaiters: (() => void)[] = [];
  const keyCache = new Map<string, KeyObject>();

  let started = false;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let polling: Promise<boolean> | null = null;
  let pollAgain = false;
  let nextDueAt: number | null = null;
  let unsubscribe: (() => void) | undefined;

  const recorder = createOutcomeRecorder({ repository, owner, now, logger });

  function take(endpointId: string, n: number): void {
    if (n === 0) return;
    taken.set(endpointId, (taken.get(endpointId) ?? 0) + n);
    takenTotal += n;
  }
  function give(endpointId: string, n: number): void {
    const held = taken.get(endpointId) ?? 0;
    const back = Math.min(held, n);
    if (back === 0) return;
    if (held - back === 0) taken.delete(endpointId);
    else taken.set(endpointId, held - back);
    takenTotal -= back;
    if (starved.size > 0 && !stopping) {
      const waiting = [...starved];
      starved.clear();
      for (const id of waiting) ensureActor(id);
    }
  }

  function keyOf(sealed: string, endpointId: string): KeyObject {
    let key = keyCache.get(sealed);
    if (!key) {
      key = createSecretKey(secretKey(secrets.open(sealed, secretContext(endpointId))));
      if (keyCache.size >= KEY_CACHE_SIZE) keyCache.clear();
      keyCache.set(sealed, key);
    }
    return key;
  }

  /** The current secret signs; the previous one as well until its overlap ends (rotation). */
  function signingKeys(d: ClaimedDelivery, at: number): KeyObject[] {
    const keys = [keyOf(d.secretSealed, d.endpointId)];
    if (d.previousSecretSealed && d.previousSecretExpiresAt !== null && d.previousSecretExpiresAt > at) {
      keys.push(keyOf(d.previousSecretSealed, d.endpointId));
    }
    return keys;
  }

  const machine = webhookDeliveryMachine.provide({
    actors: {
      claim: fromPromise<ClaimedDelivery[], { endpointId: string; limit: number }>(async ({ input }) => {
        const allowed = Math.max(0, Math.min(input.limit, maxInFlight - takenTotal));
        if (allowed < input.limit) starved.add(input.endpointId);
        if (allowed === 0) return [];
        take(input.endpointId, allowed);
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
          give(input.endpointId, allowed - rows.length);
          return rows.map(toClaimed);
        } catch (err) {
          give(input.endpointId, allowed);
          throw err;
        } finally {
          claims.delete(running);
        }
      }),

      // The endpoint's I/O port: one callback actor per delivery actor, for its whole life (see the machine).
      deliveries: fromCallback<DeliveryCommand, { endpointId: string }, DeliveryReport>(({ sendBack, receive }) => {
        const lifetime = new AbortController();
        const report = (event: DeliveryReport) => {
          if (!lifetime.signal.aborted) sendBack(event);
        };
        receive((command) => {
          if (command.type === 'send') {
            send(command.delivery, lifetime.signal).then(
              (output) => report({ type: 'sent', output }),
              (error: unknown) => report({ type: 'sendFailed', deliveryId: command.delivery.id, error }),
            );
          } else {
            record(command.input).then(
              (output) => report({ type: 'recorded', output }),
              (error: unknown) => report({ type: 'recordFailed', deliveryId: command.input.delivery.id, error }),
            );
          }
        });
        // The actor stopped (the worker is stopping): requests in flight are cancelled; their leases are handed back.
        return () => lifetime.abort();
      }),
    },
  });

  /** One attempt: the signed POST through the guarded client. Every failure is a result, never a rejection. */
  async function send(d: ClaimedDelivery, signal: AbortSignal): Promise<SendOutput> {
    const attemptedAt = now();
    const timestampSeconds = Math.floor(attemptedAt / 1000);
    const started = performance.now();
    let result: AttemptResult;
    let responseExcerpt: string | null = null;
    try {
      const body = encodePayload(d.payload as Record<string, unknown>);
      const response = await http.request({
        method: 'POST',
        url: d.url,
        headers: {
          'content-type': 'application/json',
          'user-agent': WEBHOOK_USER_AGENT,
          ...webhookHeaders(signingKeys(d, attemptedAt), d.eventId, timestampSeconds, body),
        },
        body,
        timeoutMs,
        maxBytes: RESPONSE_EXCERPT_BYTES,
        signal,
      });
      result = { kind: 'response', status: response.status, retryAfter: headerValue(response.headers['retry-after']) };
      responseExcerpt = excerpt(response.body);
    } catch (err) {
      result =
        err instanceof OutboundError
          ? { kind: 'error', reason: err.reason, message: err.message }
          : { kind: 'error', reason: 'internal', message: err instanceof Error ? err.message : String(err) };
    }
    return { deliveryId: d.id, attemptedAt, latencyMs: performance.now() - started, result, responseExcerpt, jitterSample: random() };
  }

  /** Writes one attempt's outcome (batched with others); frees the delivery's slot in the global count. */
  async function record(input: RecordInput): Promise<RecordOutput> {
    const { delivery: d, attempt, verdict } = input;
    try {
      const outcome = await recorder.add({
        deliveryId: d.id,
        endpointId: d.endpointId,
        kind: d.kind,
        attempt: d.attemptCount + 1,
        url: d.url,
        startedAt: new Date(attempt.attemptedAt),
        succeeded: verdict.outcome === 'succeeded',
        status: verdict.outcome === 'succeeded' ? 'succeeded' : verdict.outcome === 'retry' ? 'pending' : 'failed',
        nextAttemptAt: verdict.outcome === 'retry' ? new Date(verdict.nextAttemptAt) : null,
        httpStatus: attempt.result.kind === 'response' ? attempt.result.status : null,
        latencyMs: attempt.latencyMs,
        error: attemptError(attempt.result, verdict),
        responseExcerpt: attempt.responseExcerpt,
        goneReason: verdict.outcome === 'gone' ? `The receiver answered 410 Gone at ${new Date(attempt.attemptedAt).toISOString()}: it wants no more deliveries.` : null,
      });
      observe(d, attempt, verdict, outcome);
      return { deliveryId: d.id, ...outcome };
    } finally {
      give(d.endpointId, 1);
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
    const fields = { endpointId: d.endpointId, deliveryId: d.id, webhookId: d.eventId, attempt: d.attemptCount + 1, verdict: verdict.outcome };
    if (!outcome.recorded) logger.warn(fields, 'webhook attempt not recorded: the lease was lost to another worker');
    else if (verdict.outcome === 'succeeded') logger.debug(fields, 'webhook delivered');
    else {
      const detail = attempt.result.kind === 'response' ? { httpStatus: attempt.result.status } : { error: attempt.result.message };
      logger.info({ ...fields, ...detail, ...(verdict.outcome === 'retry' ? { nextAttemptAt: new Date(verdict.nextAttemptAt).toISOString() } : {}) }, 'webhook attempt failed');
    }
    if (outcome.endpointDisabled) {
      metrics?.webhookEndpointsDisabled.inc({ reason: verdict.outcome === 'gone' ? 'gone' : 'failing' });
      logger.warn({ endpointId: d.endpointId, reason: outcome.endpointDisabled }, 'webhook endpoint disabled');
    }
  }

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
      const releasing = repository.releaseLeases(owner, new Date(now()), output.unsent).catch((err: unknown) => {
        logger.warn({ err, endpointId }, 'could not hand back webhook leases; they run out by themselves');
        return 0;
      });
      releases.add(releasing);
      void releasing.finally(() => releases.delete(releasing));
    }
    give(endpointId, taken.get(endpointId) ?? 0);
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

    /** Attempts in flight now (claimed and not yet settled). */
    inFlight(): number {
      return takenTotal;
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
    eventCreatedAt: row.event_created_at.getTime(),
    secretSealed: row.secret_sealed,
    previousSecretSealed: row.previous_secret_sealed,
    previousSecretExpiresAt: row.previous_secret_expires_at?.getTime() ?? null,
  };
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

/** The answer as text for the log: at most RESPONSE_EXCERPT_BYTES of UTF-8, cut on a character boundary. */
export function excerpt(body: Buffer): string {
  // Only the bytes kept are decoded (a character cut at the end becomes one U+FFFD, dropped below); outside text is
  // made storable (U+0000 cannot go into a PostgreSQL text column).
  let text = cleanText(new TextDecoder('utf-8', { ignoreBOM: true }).decode(body.subarray(0, RESPONSE_EXCERPT_BYTES)));
  while (Buffer.byteLength(text) > RESPONSE_EXCERPT_BYTES) text = text.slice(0, -1);
  return text;
}

/** The error column of an attempt: a sentence for the owner, empty on success. */
function attemptError(result: AttemptResult, verdict: Verdict): string | null {
  if (verdict.outcome === 'succeeded') return null;
  let text: string;
  if (result.kind === 'error') text = `${result.reason}: ${result.message}`;
  else if (result.status >= 300 && result.status <= 399) text = `HTTP ${result.status}: a redirect is a failure (redirects are not followed; save the final URL).`;
  else if (result.status === 410) text = 'HTTP 410 Gone: the receiver wants no more deliveries.';
  else text = `HTTP ${result.status}: only a 2xx status counts as received.`;
  return text.slice(0, MAX_ERROR_CHARS);
}
