/**
 * Every limit and default of the WhatsApp channel, in one place (the spec's own numbers stay in `src/limits.ts`).
 * Every use imports from here; docs/whatsapp.md explains the choices.
 */

// ── Webhook (Meta → us) ─────────────────────────────────────────────────────────────────────────────────────────

/** Largest webhook body accepted. Meta batches up to 1000 updates into one POST; 3 MB is the size it documents. */
export const WHATSAPP_MAX_WEBHOOK_BYTES = 3 * 1024 * 1024;
/** The signature header Meta sends: `sha256=` + hex HMAC-SHA256 of the raw body with the app secret. */
export const WHATSAPP_SIGNATURE_HEADER = 'x-hub-signature-256';
/** Our webhook's path (docs/interfaces.md: Channels → WhatsApp). */
export const WHATSAPP_WEBHOOK_PATH = '/v1/whatsapp/webhook';

// ── Ingest: raw bodies stored before the 200 ────────────────────────────────────────────────────────────────────

/** Most raw bodies written by one INSERT: requests that arrive while a write is in flight share the next one. */
export const INGEST_MAX_BATCH = 256;
/** Concurrent INSERTs of raw bodies (each holds a pool connection; PostgreSQL's pool has 10 by default). */
export const INGEST_MAX_CONCURRENT_WRITES = 4;

// ── Processing worker ───────────────────────────────────────────────────────────────────────────────────────────

/** The backstop poll: rows written by another process (or left by a crashed one) are found within this time. */
export const WORKER_POLL_MS = 1_000;
/** Raw events claimed at once. Reading one is a few milliseconds of SQL, no network. */
export const EVENT_CLAIM_BATCH = 50;
/** Attempts at reading one raw event before it is given up (a database failure, not a bad payload). */
export const MAX_EVENT_ATTEMPTS = 5;
/**
 * How long an event whose status updates name a message we do not know (yet) is read again. Meta can report `sent`
 * before our own send has stored the message id; statuses of messages another app sent on the same number never
 * match and are dropped after this.
 */
export const STATUS_MATCH_WINDOW_MS = 2 * 60_000;
/** Delay before such an event is read again. */
export const STATUS_RETRY_DELAY_MS = 5_000;

/** Processed raw bodies are kept this long (for inspection and replays), then deleted; the messages stay. */
export const EVENT_RETENTION_MS = 7 * 24 * 60 * 60_000;
/** How often the retention sweep runs, and how many rows one sweep deletes at most. */
export const PRUNE_INTERVAL_MS = 10 * 60_000;
export const PRUNE_BATCH = 5_000;

/** Customer messages in turn at once in one process (each waits on the bot link for up to 6 s, protocol §8). */
export const MAX_CONCURRENT_TURNS = 32;
// A claimed customer message and a reply being sent are leased for LEASE_MS and renewed while the work runs
// (src/leases/durations.ts): a live process is never overtaken, a crashed one's work is taken over within 30 s.
/** Attempts at answering one customer message before it is marked failed (the runtime threw each time). */
export const MAX_INBOUND_ATTEMPTS = 3;

// ── Conversations ───────────────────────────────────────────────────────────────────────────────────────────────

/**
 * A customer who writes again after this much silence starts a new conversation (a new session_id, protocol §2.1).
 * 24 hours is Meta's customer-service window: after it a business may not answer freely any more (error 131047), so
 * a conversation on WhatsApp cannot meaningfully outlive it.
 */
export const CONVERSATION_IDLE_MS = 24 * 60 * 60_000;
/**
 * The "I can only read text" answer is sent at most once per this period per conversation, so a customer who sends
 * ten photos gets one notice, not ten.
 */
export const UNSUPPORTED_NOTICE_INTERVAL_MS = 10 * 60_000;

// ── Sending (us → Graph API) ────────────────────────────────────────────────────────────────────────────────────

/** Deadline of one send call: connect, headers and body together. */
export const GRAPH_TIMEOUT_MS = 10_000;
/** Most response bytes read from the Graph API (an answer is a few hundred bytes). */
export const GRAPH_MAX_RESPONSE_BYTES = 64 * 1024;
/** Keep-alive connections to the Graph API per process. */
export const GRAPH_CONNECTIONS = 16;
/**
 * Waits before the 2nd, 3rd, … attempt of a send that failed transiently (5xx, 429, a rate-limit code, no answer):
 * five attempts within about a minute, after which the message is marked failed (never dropped silently).
 */
export const SEND_RETRY_DELAYS_MS: readonly number[] = [1_000, 4_000, 15_000, 40_000];
/** Share of each retry delay that is randomised, so many senders that failed together do not retry together. */
export const SEND_RETRY_JITTER = 0.2;
/** The longest wait Meta's `Retry-After` can ask for before a retry; it may postpone one, never hasten it. */
export const SEND_MAX_RETRY_AFTER_MS = 60_000;
/** Messages sent at once by one process. */
export const MAX_CONCURRENT_SENDS = 16;
// WhatsApp's own limit on a text message body is MAX_WHATSAPP_TEXT_CHARS (src/ai/limits.ts), where replies are rendered.
/**
 * An interactive message with reply buttons (the satisfaction question, src/channels/whatsapp/satisfaction.ts), as
 * Meta allows it: at most 3 buttons, each title at most 20 characters, each id at most 256, the body at most 1,024.
 */
export const MAX_REPLY_BUTTONS = 3;
export const MAX_REPLY_BUTTON_TITLE_CHARS = 20;
export const MAX_REPLY_BUTTON_ID_CHARS = 256;
export const MAX_INTERACTIVE_BODY_CHARS = 1_024;

/** Graph error code: the customer's last message is older than 24 hours; a free-form reply is not allowed. */
export const GRAPH_ERROR_OUTSIDE_WINDOW = 131047;
/**
 * Graph error codes that mean "try again later" whatever the HTTP status (several rate limits come as 400):
 * 1 API unknown, 2 API service (temporary), 4 too many calls, 80007 account rate limit, 130429 throughput limit,
 * 131000 something went wrong, 131016 service unavailable, 131056 too many messages to this customer.
 */
export const GRAPH_RETRYABLE_CODES: ReadonlySet<number> = new Set([1, 2, 4, 80007, 130429, 131000, 131016, 131056]);
/** How much of a Graph error's text is kept on the message row. */
export const GRAPH_ERROR_TEXT_CHARS = 300;
