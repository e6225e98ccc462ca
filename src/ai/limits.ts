/**
 * Every limit and default of the AI adapters and of rendering, in one place (the spec's own numbers stay in
 * `src/limits.ts`). Every use imports from here.
 */
import { KNOWLEDGE_CONFIDENCE_THRESHOLD } from '../knowledge/limits.ts';
import { MAX_REPLY_CHARS } from '../limits.ts';

// ── Embedded answerer ───────────────────────────────────────────────────────────────────────────────────────────

/**
 * Lowest passage score (0..1, the knowledge base's normalised ts_rank_cd) the embedded answerer answers from. Below
 * it a passage shares too little with the question to be read out as an answer; the customer is offered the team.
 * It is the knowledge base's own confidence threshold, so "confident" and "answerable" cannot disagree.
 */
export const ANSWER_THRESHOLD = KNOWLEDGE_CONFIDENCE_THRESHOLD;
/** How many of the best passages (above the threshold) the embedded answerer picks sentences from. */
export const MAX_ANSWER_PASSAGES = 3;
/** Most sentences in an embedded answer: what a caller can take in at once. */
export const MAX_ANSWER_SENTENCES = 3;
/** Most characters in an embedded answer (about 25 seconds of speech). */
export const MAX_ANSWER_CHARS = 400;
/**
 * A further sentence joins the best one only when its relevance is at least this share of the best sentence's, so a
 * strong answer is not diluted by loosely related lines.
 */
export const FOLLOW_SENTENCE_MIN_SHARE = 0.5;

// ── OpenAI-compatible adapter ───────────────────────────────────────────────────────────────────────────────────

/** Deadline of one chat-completions request (connect, headers and body together). */
export const LLM_TIMEOUT_MS = 8_000;
/** Most response bytes read from the LLM; a completion is a few KB, so more means something is wrong. */
export const MAX_LLM_RESPONSE_BYTES = 1024 * 1024;
/** Low temperature: a service assistant should answer the same question the same way. */
export const LLM_TEMPERATURE = 0.2;
/** Most tool calls of one step that are honoured; further ones are dropped (each costs a round trip of up to 4 s). */
export const MAX_TOOL_CALLS_PER_ROUND = 5;
/**
 * Most earlier messages (a customer's message or a reply: 20 is the session's ten exchanges, MAX_HISTORY_TURNS in
 * machines/session-types.ts) put into the prompt; the session already cuts its history, this bounds the request
 * regardless.
 */
export const MAX_PROMPT_HISTORY_TURNS = 20;
/**
 * The conversation memory's budget (docs/architecture.md, "Conversation memory"): at most this many characters
 * (Unicode code points) of earlier messages go into the prompt, the newest kept and the oldest dropped whole. 8,000
 * (about 2,000 tokens) always holds the latest exchange whole (a message of at most 2,000 characters, protocol §8, and
 * a reply of at most 4,096) and typically the last four or five of a chat.
 */
export const MAX_PROMPT_HISTORY_CHARS = 8_000;
/** Most knowledge passages put into the prompt. */
export const MAX_PROMPT_PASSAGES = 6;
/** Most characters of the integrator's context put into the prompt (protocol §2.2, §8: a reply has at most 2000). */
export const MAX_PROMPT_CONTEXT_CHARS = MAX_REPLY_CHARS;
/** How much of an LLM error body is quoted in an AiError message (for the operator's log, never for customers). */
export const LLM_ERROR_EXCERPT_CHARS = 300;

// ── Rendering ───────────────────────────────────────────────────────────────────────────────────────────────────

/** Longest reply spoken on the phone (about 40 seconds); cut at a sentence boundary. */
export const MAX_SPOKEN_CHARS = 600;
/**
 * How much of a streamed answer is cut into sentences as it arrives (src/ai/chat-stream.ts): several times what may be
 * spoken, markdown and all. The rest is still read (up to MAX_LLM_RESPONSE_BYTES) but none of it would be spoken.
 */
export const MAX_STREAMED_CHARS = 8 * MAX_SPOKEN_CHARS;
/** A spoken list keeps its first items and says "and more" after them. */
export const MAX_SPOKEN_LIST_ITEMS = 3;
/** WhatsApp Cloud API: the body of a text message has at most 4096 characters. */
export const MAX_WHATSAPP_TEXT_CHARS = 4_096;
/** Website chat replies: the same bound as WhatsApp, so one answer fits every text channel. */
export const MAX_WEBCHAT_TEXT_CHARS = 4_096;
