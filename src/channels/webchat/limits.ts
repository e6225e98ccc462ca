/**
 * The website chat's own limits and defaults, in one place (docs/webchat.md). The spec's limits (message, name and
 * email lengths, spec §8) come from src/limits.ts and are re-exported here so the webchat code imports one module.
 */
export { MAX_EMAIL_CHARS, MAX_MESSAGE_CHARS, MAX_NAME_CHARS } from '../../limits.ts';

/** `page_url` of new_chat (spec §6: a URL): at most 2048 characters, the de-facto browser URL limit. */
export const MAX_PAGE_URL_CHARS = 2_048;
/** A visitor's phone number in a lead (spec §6: may be empty); E.164 has 15 digits, this leaves room for formatting. */
export const MAX_PHONE_CHARS = 32;
/** Characters a phone number may consist of: digits, +, spaces and the usual separators. */
export const PHONE_PATTERN = '^[0-9+()./ -]*$';

/** Web origins a workspace may allow for its widget. */
export const MAX_ALLOWED_ORIGINS = 50;
/** One origin: scheme, a host name of at most 253 characters and a port. */
export const MAX_ORIGIN_CHARS = 300;

/** Token bucket per widget key: this many requests at once… */
export const WEBCHAT_RATE_BURST = 30;
/** …refilled evenly over this window (30 requests per 10 s). */
export const WEBCHAT_RATE_WINDOW_MS = 10_000;
/** Buckets kept in memory before full (idle) ones are dropped; one per active widget key. */
export const MAX_RATE_BUCKETS = 10_000;

/** How long a browser may cache the preflight answer (Chromium caps it at 7200 s). */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;
