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
