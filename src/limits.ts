/**
 * Every limit and default of the protocol (docs/protocol.md §8) and of docs/interfaces.md, in one place. Every use imports
 * from here; a number from the spec is never written twice.
 */

/** protocol §8: channel message time-out, 6 s (WhatsApp, test button). */
export const CHANNEL_TIMEOUT_MS = 6_000;
/** protocol §8: channel message time-out on the phone, 3.5 s. */
export const PHONE_CHANNEL_TIMEOUT_MS = 3_500;
/** protocol §8: answering within 3 s is the target (used for the latency histogram buckets and the test report). */
export const CHANNEL_TARGET_MS = 3_000;
/** protocol §8: tool call time-out per call, 4 s. */
export const TOOL_CALL_TIMEOUT_MS = 4_000;
/** protocol §8: at most three rounds of tool calls per phone turn. */
export const MAX_TOOL_ROUNDS = 3;
/** protocol §2.2, §7.2, §8: response size; excess is cut off. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** protocol §2.1, §8: message length in characters. */
export const MAX_MESSAGE_CHARS = 2_000;
/** protocol §2.2, §8: reply length in characters. */
export const MAX_REPLY_CHARS = 2_000;
/** protocol §2.2, §8: customer.email length. */
export const MAX_EMAIL_CHARS = 254;
/** protocol §2.2, §8: customer.name length. */
export const MAX_NAME_CHARS = 120;
/** protocol §2.3, §8: tools in a manifest. */
export const MAX_TOOLS = 8;
/** protocol §2.3, §8: tool name length; letters, digits, _ and -. */
export const MAX_TOOL_NAME_CHARS = 64;
export const TOOL_NAME_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
/** protocol §2.3, §8: tool description length. */
export const MAX_TOOL_DESCRIPTION_CHARS = 500;
/** protocol §4.3, §8: manifest cache, 10 minutes. */
export const MANIFEST_CACHE_MS = 10 * 60_000;
/**
 * How long past its 10 minutes a manifest that was read fine may still be offered while a new fetch is on its way
 * (docs/protocol.md §4.3, "stale while refreshing"): 50 minutes, so a manifest is at most an hour old. Beyond that a
 * turn waits for the fetch again (at most its own deadline).
 */
export const MANIFEST_STALE_MS = 50 * 60_000;
/**
 * Deadline of the manifest GET: protocol §8 gives it none; the manifest is read for the phone only, so it is the phone
 * channel's 3.5 s, never the tool call's 4 s (a turn never waits longer than its channel's deadline).
 */
export const MANIFEST_TIMEOUT_MS = PHONE_CHANNEL_TIMEOUT_MS;
/** protocol §2.5, §8: the first 6000 characters of a tool result are passed to the AI. */
export const MAX_TOOL_RESULT_CHARS = 6_000;
/** protocol §5.3, §8: an own key has at least 32 characters. */
export const MIN_OWN_KEY_CHARS = 32;
/** protocol §5.3, §8: generated keys have 64 characters. */
export const GENERATED_KEY_CHARS = 64;
/** protocol §5.5.3, §8: clock skew the receiver allows, 5 minutes. */
export const MAX_CLOCK_SKEW_SECONDS = 300;

/** The User-Agent of every bot-link request (protocol §4.1). */
export const BOTLINK_USER_AGENT = 'Service-BotLink/1.0';
/** Header names of protocol §4 and §5. */
export const SIGNATURE_HEADER = 'X-Service-Signature';
export const SENT_AT_HEADER = 'X-Service-Sent-At';

/** Largest JSON body our own API accepts (dashboard, sync); larger ones get 413. */
export const MAX_API_BODY_BYTES = 1024 * 1024;
/** How much of an integrator's body the test button shows. */
export const BODY_EXCERPT_CHARS = 2_000;
/**
 * Every list our API answers a page at a time (sessions, the webhook delivery log, synced pages and products):
 * items per answer when `limit` is absent, and the largest `limit` accepted.
 */
export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 200;

// Accounts, tokens and live streams (docs/reliability.md, "Limits per token"). Not in the spec: our own bounds so one
// token cannot hold the server's resources.
/** Live (not revoked, not expired) tokens one user may hold; POST /v1/tokens beyond it is 409. */
export const MAX_TOKENS_PER_USER = 20;
/** POST /v1/tokens {expires_in}: the shortest and the longest lifetime a token may be given, in seconds. */
export const MIN_TOKEN_TTL_SECONDS = 60;
export const MAX_TOKEN_TTL_SECONDS = 365 * 24 * 3600;
/**
 * Open `GET /v1/sessions/{id}/events` streams per user (all their tokens together) and per workspace, in one process;
 * beyond it 429. Per user, so one user (an agent with 20 tokens) cannot take the workspace's streams from the others.
 */
export const MAX_STREAMS_PER_USER = 8;
export const MAX_STREAMS_PER_WORKSPACE = 100;
/** How often every open stream's token is checked again: a revoked or expired token's streams end within this. */
export const STREAM_RECHECK_MS = 2_000;

// Sign-in with a password (docs/reliability.md, "Limits per token"; src/auth/login-throttle.ts). Ours, not the spec's.
/** A password has 10 to 200 characters (Unicode code points) and is not all whitespace. */
export const MIN_PASSWORD_CHARS = 10;
export const MAX_PASSWORD_CHARS = 200;
/** A user's display name has at most 120 characters (Unicode code points), trimmed; empty is none (migration 0036). */
export const MAX_USER_NAME_CHARS = 120;
/** An invite link works once, for 7 days. */
export const INVITE_TTL_MS = 7 * 24 * 3600_000;
/** A password-reset link works once, for this long (docs/interfaces.md: POST /v1/auth/reset). */
export const RESET_TTL_MS = 3600_000;
/** Password-reset requests per email: a burst of 5, then one a minute (docs/reliability.md, "Limits"). */
export const RESET_RATE_LIMIT = { burst: 5, windowMs: 5 * 60_000, maxBuckets: 10_000 } as const;
/** Password-reset requests per client address (an office shares one): 20, then one each 15 s. */
export const RESET_ADDRESS_RATE_LIMIT = { burst: 20, windowMs: 5 * 60_000, maxBuckets: 10_000 } as const;
/** A token made by signing in stops working by itself after 30 days. */
export const LOGIN_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/** Failed sign-ins counted over 15 minutes; after 5 for one email, or 20 from one address, each attempt waits. */
export const LOGIN_FAILURE_WINDOW_MS = 15 * 60_000;
export const LOGIN_FAILURES_PER_ACCOUNT = 5;
export const LOGIN_FAILURES_PER_ADDRESS = 20;
/** The first wait after the threshold; it doubles with every further failure, up to the window. */
export const LOGIN_FIRST_WAIT_MS = 1_000;
/**
 * The lock-out rule: failures of an account slow down only attempts from addresses that did not sign in to that
 * account within this time (30 days); the account's own recent addresses are held only by the per-address count.
 */
export const LOGIN_KNOWN_ADDRESS_MS = 30 * 24 * 3600_000;
/**
 * Sign-ins one client address, and one email, may have waiting for or running a password hash at once, per process;
 * a further attempt is refused at once (429, Retry-After 1) instead of queueing, so a burst from one address or at
 * one email cannot fill the hashing queue that every other user's sign-in waits in.
 */
export const LOGIN_HASHES_PER_ADDRESS = 4;
export const LOGIN_HASHES_PER_EMAIL = 2;
