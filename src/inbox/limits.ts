/** The team's inbox: limits of agents' messages and of the web chat's long poll (docs/architecture.md, "Who handles a conversation"). */
import type { RateLimit } from '../rate-limiter.ts';
import { MAX_WHATSAPP_TEXT_CHARS } from '../ai/limits.ts';
import { MAX_MESSAGE_CHARS } from '../limits.ts';

/** An agent's WhatsApp message: WhatsApp's own limit of a text message, in characters. */
export const MAX_AGENT_WHATSAPP_CHARS = MAX_WHATSAPP_TEXT_CHARS;
/** An agent's web chat message, in characters: the same as a visitor's (protocol §8's message length, 2,000). */
export const MAX_AGENT_WEBCHAT_CHARS = MAX_MESSAGE_CHARS;
/** WhatsApp's customer-service window: a free-form message more than this after the customer's last one is refused (ms). */
export const WHATSAPP_WINDOW_MS = 24 * 60 * 60_000;
/** The longest `wait` of the web chat's long poll, in seconds. */
export const MAX_POLL_WAIT_SECONDS = 25;
/** The most messages one answer of the long poll carries. */
export const MAX_POLL_MESSAGES = 200;
/** The most conversations one inbox view lists. */
export const MAX_INBOX_CONVERSATIONS = 200;
/** handback_after_minutes: from 1 minute to one day. */
export const MAX_HANDBACK_AFTER_MINUTES = 1_440;
/** How often the sweep looks for waiting conversations whose hand-back deadline passed (ms). */
export const HANDBACK_SWEEP_MS = 5_000;
/** The summary for whoever takes a conversation over: the last turns shown as they were. */
export const SUMMARY_LAST_TURNS = 4;
/** The messages the language model reads to write the summary (the latest), and at most this many characters of them. */
export const SUMMARY_INPUT_MESSAGES = 30;
export const SUMMARY_MAX_INPUT_CHARS = 12_000;

/**
 * The take-over summary's model calls, per workspace (docs/architecture.md, "Who handles a conversation"): 30 at once,
 * then one a second. The dashboard asks once when a conversation opens, and the same last message is answered from the
 * cache without a call, so a team clicking through its inbox stays well inside; a script asking for every conversation
 * does not.
 */
export const SUMMARY_RATE_LIMIT: RateLimit = { burst: 30, windowMs: 30_000, maxBuckets: 10_000 };
/** Summaries kept per process, one per conversation (the latest), the least recently asked going first. */
export const MAX_CACHED_SUMMARIES = 1_000;
/**
 * An agent's messages (and retries) per agent and conversation (docs/architecture.md, "Who handles a conversation"): 5
 * at once, then one a second. A fast typist sends a short line every two seconds or so; 25 in a quarter of a second is
 * a loop, and on WhatsApp each would be a Graph send.
 */
export const AGENT_MESSAGE_RATE_LIMIT: RateLimit = { burst: 5, windowMs: 5_000, maxBuckets: 10_000 };

// The team's tools (docs/interfaces.md, "The team's tools"): saved replies and private notes.
/** A saved reply's text, in characters: what an agent's message may hold on every chat channel (web chat's is the lower). */
export const MAX_SAVED_REPLY_CHARS = MAX_AGENT_WEBCHAT_CHARS;
/** A saved reply's shortcut, typed after `/`: at most this many letters, digits, `-` and `_`. */
export const MAX_SHORTCUT_CHARS = 32;
/** Saved replies per workspace: a list the reply box filters as one types. */
export const MAX_SAVED_REPLIES = 500;
/** A private note, in characters: the same as an agent's web chat message. */
export const MAX_NOTE_CHARS = MAX_AGENT_WEBCHAT_CHARS;
/** The most notes one conversation shows (GET /v1/sessions/{id}). */
export const MAX_NOTES_SHOWN = 1_000;
/** The most colleagues one note's @mentions notify. */
export const MAX_MENTIONS_PER_NOTE = 20;
/** Passages "Insert from knowledge" offers for a search. */
export const KNOWLEDGE_INSERT_PASSAGES = 5;
/** The search words of "Insert from knowledge", in characters. */
export const MAX_KNOWLEDGE_QUERY_CHARS = 500;
/** The customer's earlier conversations listed beside a conversation (GET /v1/sessions/{id}/history), newest first. */
export const MAX_CUSTOMER_HISTORY = 20;
/** The longest IANA time zone name a web chat keeps (the longest today, `America/Argentina/ComodRivadavia`, has 32). */
export const MAX_TIME_ZONE_CHARS = 64;
/** An IANA time zone name as written (`Europe/Amsterdam`, `America/Argentina/Buenos_Aires`, `UTC`, `Etc/GMT+2`). */
export const TIME_ZONE_PATTERN = '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$';
/**
 * Presence (docs/architecture.md, "Presence and assignment"): how often an engine marks the people whose dashboard it
 * holds open as seen, in one statement for all of them (ms). Three times a minute: a lapse after PRESENCE_IDLE_MINUTES
 * (at least one) is never a dashboard that is still open.
 */
export const PRESENCE_TOUCH_MS = 20_000;
/** How often an engine turns lapsed "available" into "away", and looks for waiting conversations nobody is assigned to (ms). */
export const PRESENCE_SWEEP_MS = 5_000;
/** The most waiting conversations one assignment round gives out in a workspace, and workspaces one sweep visits. */
export const ASSIGN_BATCH = 50;
