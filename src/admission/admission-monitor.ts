/**
 * Admission control wired to the process (docs/operations.md, "Overload"): the event loop's delay is read every
 * LOOP_DELAY_WINDOW_MS into the rules (admission.ts), the state goes to the metrics, and the log gets one `warn` line
 * when shedding starts, at most one a minute while it goes on (with how much was turned away since), and one when it
 * stops. The embedded engine (PGlite) gets the bounds of ./limits.ts; an engine on PostgreSQL is unbounded.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { createAdmission, UNBOUNDED, type Admission, type AdmissionChange, type AdmissionLimits, type ShedCause } from './admission.ts';
import {
  EMBEDDED_MAX_CALLS,
  EMBEDDED_MAX_TURNS_IN_FLIGHT,
  EMBEDDED_MIN_SHED_MS,
  EMBEDDED_RESUME_LOOP_DELAY_MS,
  EMBEDDED_SHED_LOOP_DELAY_MS,
  EMBEDDED_SHED_MIN_TURNS_IN_FLIGHT,
  EMBEDDED_SHED_WINDOWS,
  LOOP_DELAY_WINDOW_MS,
  SHED_LOG_INTERVAL_MS,
} from './limits.ts';

/** The bounds of the embedded engine (PGlite in this process). */
export const EMBEDDED_LIMITS: AdmissionLimits = {
  maxCalls: EMBEDDED_MAX_CALLS,
  maxTurnsInFlight: EMBEDDED_MAX_TURNS_IN_FLIGHT,
  shedLoopDelayMs: EMBEDDED_SHED_LOOP_DELAY_MS,
  shedWindows: EMBEDDED_SHED_WINDOWS,
  shedMinTurnsInFlight: EMBEDDED_SHED_MIN_TURNS_IN_FLIGHT,
  resumeLoopDelayMs: EMBEDDED_RESUME_LOOP_DELAY_MS,
  minShedMs: EMBEDDED_MIN_SHED_MS,
};

export interface AdmissionMonitor extends Admission {
  stop(): void;
}

const CAUSE_WORDS: Record<ShedCause, string> = {
  loop_delay: 'the event loop is falling behind (the embedded database cannot keep up)',
  turns_in_flight: 'too many turns are running',
  open_calls: 'the open phone calls reached their bound',
};

export function startAdmissionMonitor(deps: {
  /** The embedded default (PGlite on this event loop): its bounds; otherwise none. */
  embedded: boolean;
  metrics: Pick<Metrics, 'admissionShedding' | 'admissionShed' | 'admissionOpenCalls' | 'admissionTurnsInFlight'>;
  logger: Logger;
  /** Tests: other bounds than the embedded defaults. */
  limits?: AdmissionLimits;
  now?: () => number;
}): AdmissionMonitor {
  const now = deps.now ?? Date.now;
  const limits = deps.limits ?? (deps.embedded ? EMBEDDED_LIMITS : UNBOUNDED);
  const log = deps.logger.child({ component: 'admission' });
  let lastLogAt = 0;
  let lastCauseLogAt = -Infinity;
  let shedAtLastLog = 0;
  const shedTotal = () => {
    const { shed } = admission.state();
    return shed.call + shed.webchat;
  };

  function onChange(change: AdmissionChange): void {
    deps.metrics.admissionShedding.reset();
    if (change.shedding && change.since !== undefined) {
      deps.metrics.admissionShedding.set({ cause: change.cause }, 1);
      // The metric follows every change of cause; the log at most once per interval, like the reminder.
      if (change.at - lastCauseLogAt < SHED_LOG_INTERVAL_MS) return;
      lastCauseLogAt = change.at;
      log.warn({ cause: change.cause, shedMs: change.at - change.since }, `shedding goes on, now because ${CAUSE_WORDS[change.cause]}`);
    } else if (change.shedding) {
      deps.metrics.admissionShedding.set({ cause: change.cause }, 1);
      const { openCalls, turnsInFlight, loopDelayMs } = admission.state();
      const bounds = { maxCalls: limits.maxCalls, maxTurnsInFlight: limits.maxTurnsInFlight };
      log.warn(
        { cause: change.cause, openCalls, turnsInFlight, loopDelayMs: Math.round(loopDelayMs), limits: bounds },
        `shedding started: ${CAUSE_WORDS[change.cause]}; new calls hear the busy sentence, web chat gets 503 (docs/operations.md, "Overload")`,
      );
      lastLogAt = change.at;
      shedAtLastLog = shedTotal();
    } else {
      deps.metrics.admissionShedding.set({ cause: 'none' }, 0);
      log.warn({ shedMs: change.shedMs, turnedAway: shedTotal() - shedAtLastLog }, 'shedding stopped: new work is admitted again');
    }
  }

  const admission = createAdmission(limits, { now, onChange });
  deps.metrics.admissionShedding.set({ cause: 'none' }, 0);

  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  let timer: NodeJS.Timeout | null = null;
  if (Number.isFinite(limits.shedLoopDelayMs)) {
    loopDelay.enable();
    timer = setInterval(() => {
      admission.observeLoopDelay(loopDelay.percentile(99) / 1e6);
      loopDelay.reset();
      const state = admission.state();
      // While it goes on, a reminder at most once a minute with what was turned away since the last line.
      if (state.shedding && now() - lastLogAt >= SHED_LOG_INTERVAL_MS) {
        const total = shedTotal();
        log.warn({ cause: state.cause, turnedAway: total - shedAtLastLog, openCalls: state.openCalls, turnsInFlight: state.turnsInFlight }, 'still shedding');
        lastLogAt = now();
        shedAtLastLog = total;
      }
    }, LOOP_DELAY_WINDOW_MS);
    timer.unref();
  }

  return {
    ...admission,
    admitCall() {
      const admitted = admission.admitCall();
      if (admitted) deps.metrics.admissionOpenCalls.inc();
      else deps.metrics.admissionShed.inc({ kind: 'call' });
      return admitted;
    },
    callEnded() {
      admission.callEnded();
      deps.metrics.admissionOpenCalls.dec();
    },
    turnStarted() {
      admission.turnStarted();
      deps.metrics.admissionTurnsInFlight.inc();
    },
    turnEnded() {
      admission.turnEnded();
      deps.metrics.admissionTurnsInFlight.dec();
    },
    admitWebchat() {
      const admitted = admission.admitWebchat();
      if (!admitted) deps.metrics.admissionShed.inc({ kind: 'webchat' });
      return admitted;
    },
    stop() {
      if (timer) clearInterval(timer);
      loopDelay.disable();
    },
  };
}
