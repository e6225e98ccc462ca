/**
 * The embedded engine's bounds under overload (docs/operations.md, "Overload"). PGlite runs inside the engine's own
 * process, on its event loop: every statement it executes holds that loop, so past its capacity the turns of every
 * call wait behind the database and the engine collapses (50 of 30,000 prompts answered, 7 s stalls). These
 * bounds keep it below that point: work beyond them is turned away at the door, politely, and what was let in is
 * answered. Measured with bench/embedded-capacity.bench.ts (docs/performance.md).
 *
 * PostgreSQL runs in its own processes, so an engine on DATABASE_URL has no such bound (add engines instead).
 */

import { PHONE_CHANNEL_TIMEOUT_MS } from '../limits.ts';

/**
 * The turns per second the embedded engine is sized for: two thirds of its measured capacity. bench/embedded-capacity
 * measured 600 turns/s (p99 overhead at most 50 ms, nothing unanswered) on the 2-core reference machine when quiet
 * (docs/performance.md); the third kept back is for what shares the machine in real use (web chat, WhatsApp, the
 * dashboard, other processes). The call bound is sized from it; the loop-delay rule below sheds earlier when the
 * machine is busier than that.
 */
export const EMBEDDED_CAPACITY_TURNS_PER_S = 400;

/**
 * Open phone calls the embedded engine takes at once; the next call hears the busy sentence and is hung up. Sized
 * from the measured capacity (EMBEDDED_CAPACITY_TURNS_PER_S) for callers who speak every 2 s, the bench's cadence and
 * about the fastest a real caller speaks (a reply of a sentence or two is spoken in about that time).
 */
export const EMBEDDED_MAX_CALLS = EMBEDDED_CAPACITY_TURNS_PER_S * 2;

/**
 * Turns running at once, all channels; beyond it web chat answers 503 with Retry-After and new calls are turned
 * away. Turns of calls already admitted always run (a caller in a call is never left without an answer). A turn runs
 * while it waits for the integrator or the AI, which costs the engine almost nothing, so the bound is what the sized
 * rate gives when every turn waits the phone's whole deadline: 400 turns/s × 3.5 s. The engine's own load is the
 * loop-delay rule's to see.
 */
export const EMBEDDED_MAX_TURNS_IN_FLIGHT = Math.round((EMBEDDED_CAPACITY_TURNS_PER_S * PHONE_CHANNEL_TIMEOUT_MS) / 1_000);

/**
 * Event-loop delay, p99 over the last second (ms), at which the engine starts shedding new work (new calls, web chat
 * messages): the loop is where PGlite's statements, every turn and every socket wait, so its delay is the one signal
 * that sees the database falling behind. 100 ms: twice the capacity's bound on a turn's overhead (50 ms).
 */
export const EMBEDDED_SHED_LOOP_DELAY_MS = 100;
/** Windows in a row (of LOOP_DELAY_WINDOW_MS) the delay must reach EMBEDDED_SHED_LOOP_DELAY_MS: one slow second is a start-up or a collection. */
export const EMBEDDED_SHED_WINDOWS = 2;
/**
 * The loop delay counts only with at least this many turns in flight (about 50 ms of turns at the capacity above): under
 * light traffic a slow loop is the machine's (other processes, a start-up, a restart's recovery), and turning a few
 * customers away would not relieve it.
 */
export const EMBEDDED_SHED_MIN_TURNS_IN_FLIGHT = 20;
/** Shedding stops once the loop delay is below this (ms) and the turns in flight are below 80 % of their bound. */
export const EMBEDDED_RESUME_LOOP_DELAY_MS = 40;
/** Shedding lasts at least this long (ms), so that the engine does not flap between admitting and refusing. */
export const EMBEDDED_MIN_SHED_MS = 5_000;
/** How often the event-loop delay is read and its histogram reset (ms). */
export const LOOP_DELAY_WINDOW_MS = 1_000;

/** The Retry-After web chat's 503 carries while shedding, in seconds. */
export const SHED_RETRY_AFTER_SECONDS = 5;
/** While shedding goes on, at most one `warn` line per this interval (ms), with the number turned away since the last. */
export const SHED_LOG_INTERVAL_MS = 60_000;

/**
 * How long a turn's write waits for company on PGlite (ms): under load the turn ends of many sessions go in one
 * statement (db/group-commit.ts), so PGlite parses, plans and syncs its files once per batch instead of once per turn.
 * The write is off the caller's path (the answer is already spoken), and a crash loses nothing more than a turn not
 * yet written would have (the lease and the snapshot follow the same write).
 */
export const EMBEDDED_TURN_WRITE_LINGER_MS = 50;

/** The RSS the embedded engine stays under at any offered load (MiB); the overload phase of the bench checks it. */
export const EMBEDDED_RSS_CEILING_MIB = 900;
