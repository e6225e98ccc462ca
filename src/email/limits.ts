/** The email outbox's limits (docs/operations.md, "Email"). */

/** How often an engine looks for emails due (ms); an enqueue also wakes it. */
export const EMAIL_POLL_MS = 5_000;
/** Emails claimed at once. */
export const EMAIL_BATCH = 20;
/** A claimed email is not taken by another engine for this long (ms): longer than one SMTP send may take. */
export const EMAIL_CLAIM_MS = 60_000;
/** One SMTP conversation's deadline (ms): connect, greeting and the send together. */
export const SMTP_TIMEOUT_MS = 20_000;
/** Tries before an email is given up; the waits between them grow from EMAIL_RETRY_BASE_MS, doubling, to EMAIL_RETRY_MAX_MS. */
export const MAX_EMAIL_ATTEMPTS = 10;
export const EMAIL_RETRY_BASE_MS = 5_000;
export const EMAIL_RETRY_MAX_MS = 30 * 60_000;
