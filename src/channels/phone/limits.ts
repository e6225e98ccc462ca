/**
 * Every limit and default of the phone channel (docs/phone.md), in one place. The spec's own limits stay in
 * src/limits.ts; these are ours.
 */

/**
 * No dead air: when the answer is not ready this long after the caller's final prompt, a filler sentence is spoken
 * (a preemptible text frame) at most once a turn. 1.5 s is about the longest pause a caller accepts without asking
 * "hello?"; the phone's bot-link deadline (3.5 s, protocol §8) is well past it.
 */
export const PHONE_FILLER_MS = 1_500;

/** WebSocket ping interval; a call that has not answered the previous ping by the next one is terminated. */
export const PHONE_PING_MS = 15_000;

/**
 * A frame larger than this is dropped (logged, counted) and the call goes on. A prompt of 2000 characters
 * (protocol §8 message length) is far below it even in four-byte UTF-8.
 */
export const PHONE_MAX_FRAME_BYTES = 64 * 1024;

/**
 * ws `maxPayload`: a frame larger than this is a protocol violation; ws closes the socket with 1009 and the session
 * ends as after any dropped socket. Between PHONE_MAX_FRAME_BYTES and this the frame is only dropped.
 */
export const PHONE_MAX_PAYLOAD_BYTES = 256 * 1024;

/** Key presses: an entry ends with '#' or after this long without another key (docs/phone.md, DTMF). */
export const PHONE_DTMF_ENTRY_MS = 2_000;
/** Longest key entry kept; further keys of the same entry are ignored. */
export const PHONE_MAX_DTMF_DIGITS = 32;

/** How long the WebSocket upgrade may take to present its first frame before it counts as stuck (setup). */
export const PHONE_SETUP_TIMEOUT_MS = 10_000;

/** Phone numbers one workspace may answer. */
export const PHONE_MAX_NUMBERS = 50;
/** Opening ranges per weekday in team_hours. */
export const TEAM_HOURS_MAX_RANGES_PER_DAY = 6;
/** A welcome greeting the caller hears first (TwiML welcomeGreeting). */
export const PHONE_MAX_GREETING_CHARS = 500;

/** Form bodies Twilio posts to the TwiML routes are small (a few hundred bytes). */
export const TWILIO_MAX_FORM_BYTES = 64 * 1024;

/** The ConversationRelay language when the workspace has set none (TwiML `language`, BCP 47). */
export const PHONE_DEFAULT_LANGUAGE = 'en-US';

/** The path prefix of Twilio's form-encoded webhooks (src/http/app.ts parses form bodies below it only). */
export const TWILIO_WEBHOOK_PREFIX = '/v1/phone/twilio';

/** Heartbeat pings sent in one go before the event loop is served again (about 1 ms of work). */
export const PHONE_PING_SLICE = 50;

/**
 * Turns of one call in flight at once (a superseded turn counts until the runtime has cancelled it). Beyond it, what the
 * caller says waits, merged, for a free slot (phone_prompts_merged_total): a person never gets here, a bridge that
 * floods prompt frames does, and must not make one call cost thousands of turns (docs/phone.md).
 */
export const PHONE_MAX_TURNS_IN_FLIGHT = 2;
/** Turns one call may start in a row, then per second (a token bucket): a person says at most an utterance a second. */
export const PHONE_TURN_BURST = 5;
export const PHONE_TURNS_PER_SECOND = 2;
