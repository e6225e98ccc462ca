/** Privacy limits and defaults (docs/privacy.md). */

/**
 * Audit entries are kept this long, whatever the workspace keeps of conversations (docs/privacy.md, "Audit log"). The
 * database enforces it (migration 0027: the purge function and the trigger name 730 days); changing it takes a migration.
 */
export const AUDIT_RETENTION_DAYS = 730;
/** GET /v1/audit: entries per page, default and most. */
export const AUDIT_PAGE = { default: 50, max: 200 } as const;
/** Retention a workspace may choose, in days; null keeps conversations until they are erased. */
export const RETENTION_DAYS = { min: 1, max: 3650, defaultForNew: 365 } as const;
/** The purge deletes at most this many rows per statement, so no statement holds locks for long. */
export const PURGE_BATCH = 500;
/** How often an engine tries to claim the purge, in ms; one engine runs it at a time (docs/privacy.md). */
export const PURGE_INTERVAL_MS = 10 * 60_000;
/** The purge's claim lasts this long, so a crashed engine's claim lapses. */
export const PURGE_CLAIM_MS = 10 * 60_000;
/** One export answers at most this many conversations of one customer (older ones are said to be left out). */
export const EXPORT_MAX_CONVERSATIONS = 1000;
/**
 * A customer's number for an export or erasure has this many digits with its country code (docs/privacy.md): E.164
 * allows at most 15, and the shortest numbers in use (Niue's, Tokelau's) have 7. Fewer is a part of a number: a 400.
 */
export const CUSTOMER_NUMBER_DIGITS = { min: 7, max: 15 } as const;
