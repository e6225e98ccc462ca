/**
 * Every limit and default of outgoing webhooks, in one place. Spec §6 leaves retries, ordering and guarantees open;
 * these follow Standard Webhooks (signature scheme, secrets, status handling) and Svix's published practice (the retry
 * schedule, the 15 s time-out, disabling an endpoint that has failed for 5 days).
 */

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Delays before each attempt, counted from the failure of the one before: the first attempt is immediate, then 5 s,
 * 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (Svix's schedule). Eight attempts in all, spanning about 27.5 hours.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];
/** Every scheduled delay is stretched or shrunk by up to this share (±20 %), so retries of one outage spread out. */
export const RETRY_JITTER = 0.2;
/**
 * The longest wait a receiver's `Retry-After` can ask for. It may postpone an attempt (never hasten one: the schedule
 * is the floor), and not past the longest step of the schedule.
 */
export const MAX_RETRY_AFTER_MS = 10 * HOUR;
/** An endpoint whose every attempt has failed for this long, with no success in between, is disabled (Svix). */
export const AUTO_DISABLE_AFTER_MS = 5 * DAY;

/** The deadline of one attempt: connect, request and response together (Standard Webhooks recommends 15–30 s). */
export const DELIVERY_TIMEOUT_MS = 15 * SECOND;
// A claimed delivery is leased for LEASE_MS and renewed while it waits for a slot and is sent (src/leases/durations.ts).
/** How much of a receiver's answer the delivery log keeps (docs/webhooks.md: a response excerpt of at most 4 KB). */
export const RESPONSE_EXCERPT_BYTES = 4 * 1024;
/** How much of an error message the delivery log keeps. */
export const MAX_ERROR_CHARS = 1_000;

/** Attempts in flight to one endpoint from one process: a slow receiver fills its own slots, nobody else's. */
export const ENDPOINT_CONCURRENCY = 16;
/**
 * Claimed deliveries an endpoint's actor holds beyond its slots, as a multiple of ENDPOINT_CONCURRENCY: a claim under
 * load takes 3–10 ms, so the queue must hold several slots' worth or the slots wait for the database (1× ran at
 * ~4,500 deliveries/s on 2 cores, 3× at ~6,200).
 */
export const CLAIM_AHEAD_FACTOR = 3;
/** Attempts in flight from one process to all endpoints together. */
export const MAX_IN_FLIGHT = 256;
/** How often the worker reads the table even without a wake-up: the table is the truth, notifications only hurry it. */
export const POLL_INTERVAL_MS = 1_000;
/** After a database error the worker waits this long before it claims again. */
export const CLAIM_RETRY_MS = 1_000;
/** Outcomes are written in batches: at most this many per transaction… */
export const RECORD_BATCH_SIZE = 200;
/** …and a batch waits at most this long for company before it is written… */
export const RECORD_BATCH_WAIT_MS = 2;
/**
 * …and this many batches are written side by side: one, so that under load outcomes gather while a batch is written
 * (about 90 per statement at 2,500 deliveries/s; four writers wrote batches a quarter that size for the same work).
 */
export const RECORD_WRITERS = 1;
/** `last_success_at` is written at most this often per endpoint, so a busy endpoint's row is not a hot spot. */
export const LAST_SUCCESS_RESOLUTION_MS = SECOND;

/** A new secret's random bytes (Standard Webhooks: at least 24; 32 is HMAC-SHA256's full key strength). */
export const SECRET_BYTES = 32;
/** After a rotation the previous secret still signs (a second `v1,` signature) for this long. */
export const SECRET_ROTATION_OVERLAP_MS = DAY;

/** How long the test button waits for its delivery's outcome: the time-out and a margin. */
export const TEST_WAIT_MS = DELIVERY_TIMEOUT_MS + 5 * SECOND;

/** The User-Agent of every webhook request. */
export const WEBHOOK_USER_AGENT = 'Service-Webhooks/1.0';
