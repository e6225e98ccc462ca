/**
 * The website chat's own limits and defaults, in one place (docs/webchat.md). The spec's limits (message, name and
 * email lengths, protocol §8) come from src/limits.ts and are re-exported here so the webchat code imports one module.
 */
export { MAX_EMAIL_CHARS, MAX_MESSAGE_CHARS, MAX_NAME_CHARS } from '../../limits.ts';

/** `page_url` of new_chat (protocol §6: a URL): at most 2048 characters, the de-facto browser URL limit. */
export const MAX_PAGE_URL_CHARS = 2_048;
/** A visitor's phone number in a lead (protocol §6: may be empty); E.164 has 15 digits, this leaves room for formatting. */
export const MAX_PHONE_CHARS = 32;
/** Characters a phone number may consist of: digits, +, spaces and the usual separators. */
export const PHONE_PATTERN = '^[0-9+()./ -]*$';

/**
 * A host as the WHATWG URL parser takes it without failing: a dotted IPv4 address, a bracketed IPv6 address, or a
 * domain whose last label starts with a letter (a numeric last label makes the parser read the host as IPv4, and fail
 * unless it is one). ASCII only, as browsers send origins and page URLs (IDN hosts arrive as xn-- labels).
 */
const IPV4_PART = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const H16 = '[0-9A-Fa-f]{1,4}';
/** RFC 4291's text forms, `::` included (the forms with an embedded IPv4 address are left out). */
const IPV6 = [
  `(?:${H16}:){7}${H16}`,
  `(?:${H16}:){1,7}:`,
  `(?:${H16}:){1,6}:${H16}`,
  ...[2, 3, 4, 5, 6].map((n) => `(?:${H16}:){1,${7 - n}}(?::${H16}){1,${n}}`),
  `:(?:(?::${H16}){1,7}|:)`,
].join('|');
const HOST = String.raw`(?:(?:${IPV4_PART}\.){3}${IPV4_PART}|\[(?:${IPV6})\]|(?:[A-Za-z0-9_-]+\.)*[A-Za-z][A-Za-z0-9_-]*\.?)`;
/** A port from 0 to 65535 (empty is the scheme's default). */
const PORT = '(?:[0-9]{0,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])';
/** `page_url`: an http(s) URL with a host (docs/webchat.md); the JSON Schema pattern of the route. */
export const PAGE_URL_PATTERN = String.raw`^[Hh][Tt][Tt][Pp][Ss]?://(?:[^\s/?#@\[\]]*@)?${HOST}(?::${PORT})?(?:[/?#]\S*)?$`;
/** An allowed origin: scheme, host and optional port, a trailing slash forgiven (src/channels/webchat/origins.ts). */
export const ORIGIN_PATTERN = String.raw`^\s*[Hh][Tt][Tt][Pp][Ss]?://${HOST}(?::${PORT})?/?\s*$`;

/** Web origins a workspace may allow for its widget. */
export const MAX_ALLOWED_ORIGINS = 50;
/** One origin: scheme, a host name of at most 253 characters and a port. */
export const MAX_ORIGIN_CHARS = 300;

/** Token bucket per visitor (a client address of a workspace, and a conversation): this many requests at once… */
export const WEBCHAT_RATE_BURST = 30;
/** …refilled evenly over this window (30 requests per 10 s). */
export const WEBCHAT_RATE_WINDOW_MS = 10_000;
/** Buckets kept in memory before full (idle) ones are dropped; one per active visitor address and conversation. */
export const MAX_RATE_BUCKETS = 10_000;

/** How long a browser may cache the preflight answer (Chromium caps it at 7200 s). */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * Open long polls (GET …/messages?wait=) of one conversation at once, on one engine (docs/webchat.md, "Long polls"):
 * a visitor with the chat open in two tabs holds two; a third is refused (429) until one answers.
 */
export const MAX_POLLS_PER_CONVERSATION = 2;
/**
 * Open long polls from one client address at once, whatever the conversations and workspaces, on one engine
 * (docs/webchat.md, "Long polls"): room for a few visitors behind one router, not for one script holding hundreds.
 */
export const MAX_POLLS_PER_ADDRESS = 6;
/** Retry-After of a long poll refused for one of the two caps above, in seconds (an open poll answers within 25 s). */
export const POLL_REFUSED_RETRY_AFTER_SECONDS = 5;
/**
 * A workspace's subscription to the live bus is kept this long after its last open poll ended (ms), so that a widget's
 * next poll, a moment later, does not write the bus's watch again (docs/webchat.md, "Long polls").
 */
export const POLL_WATCH_LINGER_MS = 30_000;
/**
 * A new watch on the live bus reaches the other engines within their watches refresh (LIVE_WATCHES_REFRESH_MS, 1 s)
 * after it is written; a poll that began before then reads the database once more at this age of the watch (ms), for
 * a message another engine wrote before it knew of the watch.
 */
export const POLL_WATCH_SETTLE_MS = 3_000;

/**
 * Typing (docs/webchat.md, "Typing, satisfaction and email"): a "… is typing" shows this long after the last sign of
 * it (ms); the widget and the dashboard send one at most every TYPING_THROTTLE_MS while keys are pressed.
 */
export const TYPING_MS = 6_000;
/** A typing sign is written (and announced) at most this often per conversation and side (ms). */
export const TYPING_THROTTLE_MS = 2_000;
/** The visitor's last-seen time is written at most this often (ms); far below VISITOR_GONE_MINUTES. */
export const SEEN_THROTTLE_MS = 20_000;
/** A satisfaction answer's comment (docs/webchat.md): at most 500 characters. */
export const MAX_SATISFACTION_COMMENT_CHARS = 500;
