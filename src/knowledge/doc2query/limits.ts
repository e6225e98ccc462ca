/**
 * Every limit and default of the questions the AI writes for each passage (docs/knowledge.md, "Questions written by
 * the AI"), in one place; every use imports from here.
 */
import { MAX_PHRASING_CHARS } from '../phrasing-limits.ts';

/** Most questions kept per passage and language: a customer's few ways of asking, not a list of every wording. */
export const MAX_QUESTIONS_PER_LANGUAGE = 5;
/** Longest question kept, in characters: a phrasing's own limit; a longer one is cut. */
export const MAX_QUESTION_CHARS = MAX_PHRASING_CHARS;
/**
 * Most languages a passage gets questions in: its own, then the workspace's most common other ones (each costs one
 * request per passage).
 */
export const MAX_QUESTION_LANGUAGES = 3;
/** Most characters of a passage sent to the model (a chunk holds at most about 250 words, so this is a guard). */
export const MAX_PASSAGE_CHARS = 6_000;
/** Requests to the model one engine has in flight at a time, all workspaces together. */
export const QUESTION_REQUESTS_PER_ENGINE = 2;
/** How often an engine looks for passages whose questions are missing or out of date. */
export const QUESTIONS_POLL_MS = 30_000;
/**
 * How often an engine looks at every workspace's passages, changed or not: a document written by an engine whose
 * clock lags could carry a time older than the last look, and is still found within this.
 */
export const QUESTIONS_FULL_SWEEP_MS = 60 * 60_000;
/** After the model failed (down, refusing, or an answer that is not a list of questions), the workspace waits this long. */
export const QUESTIONS_RETRY_MS = 5 * 60_000;
/** Passages read from the database at a time while a workspace's questions are written. */
export const QUESTIONS_BATCH = 50;
/** Deadline of one request to the model: the questions are not waited for by anyone, so longer than a turn's. */
export const QUESTIONS_TIMEOUT_MS = 60_000;
/** Sampling temperature: some variety in the wording is the point. */
export const QUESTIONS_TEMPERATURE = 0.7;
