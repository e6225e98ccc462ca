/** The bounds of test scenarios and their runs (docs/scenarios.md, "Limits"), in one place. */

/** Scenarios a workspace keeps. */
export const MAX_SCENARIOS = 500;
/** The customer's turns of one scenario. */
export const MAX_SCENARIO_TURNS = 30;
/** How many times one run plays a scenario (`runs`, in the scenario or the run's request); default 1. */
export const MAX_SCENARIO_RUNS = 20;
export const DEFAULT_SCENARIO_RUNS = 1;
/** A scenario's name, in characters. */
export const MAX_SCENARIO_NAME_CHARS = 120;
/** One customer message, as the widget takes it (docs/webchat.md, "Limits"). */
export const MAX_SCENARIO_MESSAGE_CHARS = 2_000;
/** A `matches` pattern, in characters: short, and checked for ReDoS shapes before it is kept. */
export const MAX_PATTERN_CHARS = 200;
/** One `contains` or `not_contains` text, and how many of each a turn may have. */
export const MAX_EXPECTED_TEXT_CHARS = 500;
export const MAX_EXPECTED_TEXTS = 20;
/** Tools a scenario mocks. */
export const MAX_TOOL_MOCKS = 20;
/** The largest `max_ms` ceiling: two minutes. */
export const MAX_LATENCY_CEILING_MS = 120_000;
/** Runs of one workspace waiting or running at a time; more are refused (429) until some finish. */
export const MAX_OPEN_RUNS = 20;
/** The runs of each scenario that are kept (with their transcripts and test conversations); older ones go. */
export const RUNS_KEPT_PER_SCENARIO = 20;
/** Failures kept per run (the first ones): enough to read, bounded for a scenario that fails everywhere. */
export const MAX_FAILURES_KEPT = 200;
/** Runs one engine plays at a time. */
export const RUN_CONCURRENCY = 2;
/** How often an engine looks for runs nobody claimed (a backstop: a new run wakes the engine that took it in). */
export const RUN_POLL_MS = 1_000;
/** Claims of one run: a run whose engines stopped this often mid-run is finished as failed. */
export const MAX_RUN_ATTEMPTS = 3;

// ── The AI judge (docs/scenarios.md, "The AI judge") ────────────────────────────────────────────────────────────

/** Criteria of one scenario's rubric, and the characters of one criterion. */
export const MAX_JUDGE_CRITERIA = 10;
export const MAX_CRITERION_CHARS = 300;
/**
 * The transcript the judge reads, in characters: each line (a customer's message or a reply) cut to
 * MAX_JUDGE_LINE_CHARS, and the whole to MAX_JUDGE_TRANSCRIPT_CHARS, the oldest lines left out first (and said so).
 */
export const MAX_JUDGE_LINE_CHARS = 2_000;
export const MAX_JUDGE_TRANSCRIPT_CHARS = 16_000;
/** The knowledge the bot used, as the judge reads it: the first passages, each cut, and all together. */
export const MAX_JUDGE_PASSAGES = 8;
export const MAX_JUDGE_PASSAGE_CHARS = 1_500;
export const MAX_JUDGE_KNOWLEDGE_CHARS = 8_000;
/** A verdict's reason as kept with the run and quoted in a failure. */
export const MAX_JUDGE_REASON_CHARS = 500;
/** Deadline of the judge's one request: nobody waits for it as a customer waits for a reply, so longer than a turn's. */
export const JUDGE_TIMEOUT_MS = 30_000;
/** A judge should give the same verdict on the same conversation. */
export const JUDGE_TEMPERATURE = 0;

// ── Answers a knowledge change moved (docs/scenarios.md, "Answers a knowledge change moved") ──────────────────────

/** Saved checks a workspace keeps: each re-run asks each one once (a model call each, with a model). */
export const MAX_KNOWLEDGE_CHECKS = 50;
/**
 * A re-run waits until the workspace's knowledge had no write for this long, so the pages of one sync batch, one
 * website sync or one editing session make one re-run, not one per page.
 */
export const RECHECK_QUIET_MS = 30_000;
/** …but no longer than this after the first write: a website sync writing for an hour still gets its re-runs. */
export const RECHECK_MAX_WAIT_MS = 5 * 60_000;
/** How often an engine looks for workspaces whose re-run is due. */
export const RECHECK_POLL_MS = 10_000;
/** A re-run that failed (the database) waits this long before the next try; the mark stays. */
export const RECHECK_RETRY_MS = 60_000;
/** Web-chat scenarios a re-run plays again (by name), within the workspace's MAX_OPEN_RUNS. */
export const RECHECK_SCENARIOS = 10;
/** Re-runs kept per workspace (the newest; GET /v1/knowledge/changes shows the latest). */
export const RECHECKS_KEPT = 10;

// ── Simulated customers (docs/scenarios.md, "Simulated customers") ─────────────────────────────────────────────────

/**
 * The simulated customer's messages in one play (`persona.max_turns`, default and ceiling): each costs a request to
 * the model and a turn of the engine, and a goal that needs more is a conversation nobody should have to have.
 */
export const DEFAULT_PERSONA_TURNS = 8;
export const MAX_PERSONA_TURNS = 20;
/** A persona's goal and manner, in characters: a sentence or two each, as an owner writes them. */
export const MAX_PERSONA_GOAL_CHARS = 500;
export const MAX_PERSONA_STYLE_CHARS = 300;
/**
 * Deadline of one request for the customer's next message: as the judge's, nobody waits for it as a customer waits
 * for a reply.
 */
export const PERSONA_TIMEOUT_MS = 30_000;
/**
 * Deadline of a play's simulated part (its customer's requests and the engine's turns together): the bound that keeps
 * a slow model from holding a run (and its lease) for max_turns × 30 s. A request in flight at the deadline is
 * cancelled; a turn in flight ends by its own deadlines.
 */
export const PERSONA_DEADLINE_MS = 180_000;
/** A customer should not say the same thing in every play: the variance is what `runs` measures. */
export const PERSONA_TEMPERATURE = 0.7;
/** Why the customer stopped (reached, abandoned), as kept on the transcript and quoted in a failure. */
export const MAX_PERSONA_REASON_CHARS = 300;

// ── The starter suite (docs/scenarios.md, "A starter suite") ────────────────────────────────────────────────────────

/** Drafts one request answers at most; more in the model's answer are left out (and counted). */
export const MAX_STARTER_SCENARIOS = 10;
/** The unanswered questions the model reads: the most asked of the last STARTER_QUESTION_DAYS, each cut. */
export const STARTER_QUESTIONS = 10;
export const STARTER_QUESTION_DAYS = 30;
export const MAX_STARTER_QUESTION_CHARS = 300;
/** The passages the model reads: the first of the most recently changed documents, each cut, and all together. */
export const STARTER_PASSAGES = 8;
export const MAX_STARTER_PASSAGE_CHARS = 1_500;
export const MAX_STARTER_KNOWLEDGE_CHARS = 8_000;
/** Deadline of the one request: an owner waits for it on the screen, so no longer than a judge's. */
export const STARTER_TIMEOUT_MS = 30_000;
/** Drafts should stick to the passages' facts. */
export const STARTER_TEMPERATURE = 0.2;
/** Why drafts were left out, as answered (the first ones). */
export const MAX_STARTER_SKIP_REASONS = 20;

// ── The judge of replay's changed answers (docs/integrators.md, "Judged replay") ───────────────────────────────────

/** Changed answers judged at a time: a replay answers in one HTTP request, so its judging runs side by side. */
export const REPLAY_JUDGE_CONCURRENCY = 4;
/**
 * All of a replay's judging together, in ms: the caller waits for the report, so a slow model cannot hold it for
 * long (200 changed answers, 4 at a time, at the model's 30 s each would be 25 minutes). Answers not judged by then say so.
 */
export const REPLAY_JUDGE_BUDGET_MS = 60_000;
