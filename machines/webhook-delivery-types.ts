/**
 * The data of the webhook delivery actor and the shapes of its I/O actors. Plain JSON throughout: timestamps are
 * milliseconds since the epoch.
 */
/** What an attempt produced: a status line, or a failure before one arrived. */
export type AttemptResult =
  | { kind: 'response'; status: number; retryAfter: string | null }
  | { kind: 'error'; reason: string; message: string };

export type DeliveryKind = 'event' | 'test';

export type Verdict =
  | { outcome: 'succeeded' }
  /** Failed; the next attempt is due at `nextAttemptAt` (ms since epoch). */
  | { outcome: 'retry'; nextAttemptAt: number; delayMs: number }
  /** Failed and no attempt is left (the schedule is used up, or a test delivery's single attempt). */
  | { outcome: 'exhausted' }
  /** 410 Gone: failed, and the endpoint is disabled. */
  | { outcome: 'gone' };

/**
 * What the runtime gives the machine to decide with (src/webhooks/retry-policy.ts and src/webhooks/limits.ts): the
 * machine imports no runtime code, so the arrow runs one way, from src/webhooks down to machines/.
 */
export interface DeliveryPolicy {
  /** The verdict on one attempt. */
  decide(input: {
    result: AttemptResult;
    attemptNumber: number;
    kind: DeliveryKind;
    /** When the attempt started, ms since epoch. */
    attemptedAt: number;
    /** Uniform in [0, 1): the jitter of the next delay. */
    jitterSample: number;
  }): Verdict;
  /** After a failed claim, how long to wait before claiming again (ms). */
  claimRetryMs: number;
}

/** One claimed delivery: the machine reads `id`, `kind` and `attemptCount`; the rest is for the send actor. */
export interface ClaimedDelivery {
  id: string;
  /** The outbox id: the `webhook-id` of every attempt. */
  eventId: string;
  kind: DeliveryKind;
  /** Attempts made before this one. */
  attemptCount: number;
  endpointId: string;
  event: string;
  url: string;
  payload: unknown;
  /** When the event was committed (for the commit-to-receipt lag). */
  eventCreatedAt: number;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: number | null;
}

export interface ClaimInput {
  endpointId: string;
  /** Free slots of this endpoint: claim at most this many. */
  limit: number;
}

/** What one attempt produced. */
export interface SendOutput {
  deliveryId: string;
  /** When the attempt started (the clock behind `webhook-timestamp`). */
  attemptedAt: number;
  latencyMs: number;
  result: AttemptResult;
  /** At most RESPONSE_EXCERPT_BYTES of the answer, as text; null when no answer came. */
  responseExcerpt: string | null;
  /** Uniform in [0, 1), drawn by the runtime: the jitter of the next delay. */
  jitterSample: number;
}

export interface RecordInput {
  delivery: ClaimedDelivery;
  attempt: SendOutput;
  verdict: Verdict;
}

export interface RecordOutput {
  deliveryId: string;
  /** False when the lease had been lost and another worker owns the delivery now. */
  recorded: boolean;
  /** Set when this outcome disabled the endpoint (410, or the 5-day rule): no more claims. */
  endpointDisabled: string | null;
}

export interface WebhookDeliveryInput {
  /** The retry policy (a function: the actor is never persisted). */
  policy: DeliveryPolicy;
  endpointId: string;
  /** Attempts in flight to this endpoint at most. */
  concurrency: number;
  /** Claimed deliveries held beyond the slots, waiting for one; default `concurrency`. */
  claimAhead?: number;
}

export interface WebhookDeliveryContext {
  policy: DeliveryPolicy;
  endpointId: string;
  concurrency: number;
  claimAhead: number;
  /** Claimed and waiting for a free slot, oldest first (claims run ahead so a slot never waits for the database). */
  queued: ClaimedDelivery[];
  /** Being sent: these hold the endpoint's slots. */
  sending: ClaimedDelivery[];
  /** Answered; their outcome is being written (ids). They hold no slot, but the actor ends only when written. */
  recording: string[];
  /** How many the running (or last) claim may take. */
  claimLimit: number;
  /** The last claim found fewer due deliveries than it could take, and no wake-up came since. */
  drained: boolean;
  /** A wake-up arrived while a claim ran: rows committed after its snapshot may be waiting. */
  wokenDuringClaim: boolean;
  /** No more claims and no more sends: the worker is stopping, or the endpoint was disabled. */
  stopping: boolean;
  disabledReason: string | null;
  lastError: string | null;
}

/**
 * What the machine asks of its I/O port (the `deliveries` actor): send attempts, write outcomes. Lists, so that the
 * deliveries a step starts or settles together cost one command (an event through the actor per delivery was the
 * largest share of the worker's CPU after the HTTP client itself).
 */
export type DeliveryCommand = { type: 'send'; deliveries: ClaimedDelivery[] } | { type: 'record'; inputs: RecordInput[] };

/**
 * What the I/O port reports back. Answers and written outcomes that come in together (one turn of the event loop)
 * are reported in one event; a failure of the port itself (a bug, or the database away) is reported alone.
 */
export type DeliveryReport =
  | { type: 'sent'; outputs: SendOutput[] }
  | { type: 'sendFailed'; deliveryId: string; error: unknown }
  | { type: 'recorded'; outputs: RecordOutput[] }
  | { type: 'recordFailed'; deliveryId: string; error: unknown };

export type WebhookDeliveryEvent =
  /** New deliveries may be due (NOTIFY, the in-process signal, the poll, a manual retry). */
  | { type: 'wake' }
  /** Finish what is in flight, claim and send nothing more. */
  | { type: 'stop' }
  | DeliveryReport;

export interface WebhookDeliveryOutput {
  disabledReason: string | null;
  lastError: string | null;
  /** Claimed but never sent (the actor stopped first): the worker hands their leases back. */
  unsent: string[];
}
