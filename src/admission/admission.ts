/**
 * Admission control (docs/operations.md, "Overload"): whether the engine takes new work now. Pure: it counts what runs
 * (open calls, turns in flight), is told the event loop's delay, and answers; the clock is given. The wiring (the
 * event-loop monitor, the metric, the log line) is admission-monitor.ts.
 *
 * The rules:
 * - A new phone call is admitted below `maxCalls` open calls and while not shedding; otherwise it is refused (the
 *   caller hears the busy sentence). A call admitted keeps every turn: its prompts are always answered.
 * - A web chat message is admitted while not shedding and below `maxTurnsInFlight`; otherwise 503 with Retry-After.
 * - Shedding starts when the loop delay reaches `shedLoopDelayMs` with real work in flight, the turns in flight reach `maxTurnsInFlight` or a
 *   call is refused at `maxCalls`; it stops when, after at least `minShedMs`, the delay is below `resumeLoopDelayMs`,
 *   the turns in flight are below 80 % of their bound and the open calls below 90 % of theirs.
 * - WhatsApp is never refused: its events are stored before they are acknowledged, and the worker takes them from
 *   the database at the pace the engine can answer.
 */

export interface AdmissionLimits {
  /** Open phone calls; Infinity for none. */
  maxCalls: number;
  /** Turns running at once, all channels; Infinity for none. */
  maxTurnsInFlight: number;
  /**
   * Event-loop delay (ms, p99 over a window) at which shedding starts, when `shedWindows` windows in a row reach it
   * (one slow window is a start-up or a collection, not overload); Infinity: never on the delay.
   */
  shedLoopDelayMs: number;
  shedWindows: number;
  /**
   * The loop delay counts only with at least this many turns in flight: a slow loop under light traffic is the
   * machine's (other processes, a start-up), and turning a few customers away would not relieve it.
   */
  shedMinTurnsInFlight: number;
  /** Shedding stops below this delay (ms). */
  resumeLoopDelayMs: number;
  /** Shedding lasts at least this long (ms). */
  minShedMs: number;
}

/** No bound at all (an engine on PostgreSQL). */
export const UNBOUNDED: AdmissionLimits = {
  maxCalls: Infinity,
  maxTurnsInFlight: Infinity,
  shedLoopDelayMs: Infinity,
  shedWindows: 1,
  shedMinTurnsInFlight: 0,
  resumeLoopDelayMs: Infinity,
  minShedMs: 0,
};

/** What was turned away: a new call, or a web chat message. */
export type ShedKind = 'call' | 'webchat';
/**
 * Why shedding started: the event loop fell behind, too many turns run, or the open calls reached their bound (then
 * only new calls are refused; web chat still runs while the loop keeps up).
 */
export type ShedCause = 'loop_delay' | 'turns_in_flight' | 'open_calls';

/** Shedding started, its cause changed while it went on (`since`: when it started), or it stopped. */
export type AdmissionChange =
  | { shedding: true; cause: ShedCause; at: number; since?: number }
  | { shedding: false; at: number; shedMs: number };

export interface AdmissionState {
  shedding: boolean;
  cause: ShedCause | null;
  openCalls: number;
  turnsInFlight: number;
  loopDelayMs: number;
  /** Turned away since the start, by kind. */
  shed: Record<ShedKind, number>;
}

export interface Admission {
  /** A new phone call: true to take it (count it until `callEnded`), false to refuse it. */
  admitCall(): boolean;
  callEnded(): void;
  /** A web chat message: true to run it (then `turnStarted`/`turnEnded` count it like any turn). */
  admitWebchat(): boolean;
  turnStarted(): void;
  turnEnded(): void;
  /** The event loop's delay over the last window (ms). */
  observeLoopDelay(ms: number): void;
  state(): AdmissionState;
}

export function createAdmission(limits: AdmissionLimits, options: { now: () => number; onChange?: (change: AdmissionChange) => void }): Admission {
  const { now } = options;
  let openCalls = 0;
  let turnsInFlight = 0;
  let loopDelayMs = 0;
  /** Windows in a row whose delay reached shedLoopDelayMs. */
  let slowWindows = 0;
  let shedding = false;
  let cause: ShedCause | null = null;
  let shedSince = 0;
  const shed: Record<ShedKind, number> = { call: 0, webchat: 0 };

  function start(started: ShedCause, at: number): void {
    shedding = true;
    cause = started;
    shedSince = at;
    options.onChange?.({ shedding: true, cause: started, at });
  }

  function update(): void {
    const at = now();
    // Too many turns: from the bound while not shedding for it, down to 80 % of it while shedding for it (no flapping).
    const turnsHigh = turnsInFlight >= (cause === 'turns_in_flight' ? 0.8 : 1) * limits.maxTurnsInFlight;
    const overloaded: ShedCause | null =
      slowWindows >= limits.shedWindows && turnsInFlight >= limits.shedMinTurnsInFlight ? 'loop_delay' : turnsHigh ? 'turns_in_flight' : null;
    if (!shedding) {
      if (overloaded !== null) start(overloaded, at);
      return;
    }
    const callsHigh = openCalls >= 0.9 * limits.maxCalls;
    // The loop delay counts here as it does for starting: only with enough turns running to be the engine's own.
    const loopCalm = loopDelayMs < limits.resumeLoopDelayMs || turnsInFlight < limits.shedMinTurnsInFlight;
    const calm = loopCalm && turnsInFlight < 0.8 * limits.maxTurnsInFlight && !callsHigh;
    // The cause that holds now: the loop or the turns falling behind refuse every new message; calls at (or near)
    // their bound refuse calls only. The recorded cause follows it, so the metric and web chat see the present reason.
    const current: ShedCause | null = overloaded ?? (callsHigh ? 'open_calls' : null);
    if (current !== null && current !== cause && (overloaded !== null || !calm)) {
      cause = current;
      options.onChange?.({ shedding: true, cause: current, at, since: shedSince });
      return;
    }
    if (calm && at - shedSince >= limits.minShedMs) {
      shedding = false;
      cause = null;
      options.onChange?.({ shedding: false, at, shedMs: at - shedSince });
    }
  }

  return {
    admitCall() {
      update();
      if (!shedding && openCalls >= limits.maxCalls) start('open_calls', now());
      if (shedding) {
        shed.call++;
        return false;
      }
      openCalls++;
      return true;
    },
    callEnded() {
      openCalls = Math.max(0, openCalls - 1);
      if (shedding) update();
    },
    admitWebchat() {
      update();
      if ((shedding && cause !== 'open_calls') || turnsInFlight >= limits.maxTurnsInFlight) {
        shed.webchat++;
        return false;
      }
      return true;
    },
    turnStarted() {
      turnsInFlight++;
      if (turnsInFlight >= limits.maxTurnsInFlight) update();
    },
    turnEnded() {
      turnsInFlight = Math.max(0, turnsInFlight - 1);
      if (shedding) update();
    },
    observeLoopDelay(ms) {
      loopDelayMs = ms;
      slowWindows = ms >= limits.shedLoopDelayMs ? slowWindows + 1 : 0;
      update();
    },
    state: () => ({ shedding, cause, openCalls, turnsInFlight, loopDelayMs, shed: { ...shed } }),
  };
}
