/**
 * A call's turns are bounded (docs/phone.md, "Floods"): at most PHONE_MAX_TURNS_IN_FLIGHT unsettled at once (a
 * superseded turn settles when the runtime has cancelled it), and at most PHONE_TURN_BURST started in a row, then
 * PHONE_TURNS_PER_SECOND (a token bucket). Beyond either, what the caller says waits, merged with whatever else
 * arrives, for the next free turn: a bridge that floods prompt frames gets a few turns, not one per frame, and the
 * caller's latest words are still answered.
 */
import { MAX_MESSAGE_CHARS } from '../../limits.ts';
import { PHONE_MAX_TURNS_IN_FLIGHT, PHONE_TURN_BURST, PHONE_TURNS_PER_SECOND } from './limits.ts';

export interface TurnBounds {
  /** Starts a turn for `message` now, or (calling `onMerge` first) keeps it merged with the words already waiting. */
  offer(message: string, onMerge: () => void): void;
  /** A turn outside the bounds began (key 0: one key press is one request and must not wait behind a flood). */
  started(): void;
  /** A turn settled: its slot is free, and the waiting words may start. */
  settled(): void;
  /** The call is over: nothing waiting starts any more. */
  cancel(): void;
}

/** `start` begins a turn (and must call `started()`); `open` says whether the call still takes turns. */
export function createTurnBounds(options: { start: (message: string) => void; open: () => boolean; now?: () => number }): TurnBounds {
  const now = options.now ?? (() => performance.now());
  let inFlight = 0;
  let tokens = PHONE_TURN_BURST;
  let tokensAt = now();
  let waiting: string | null = null;
  let waitingTimer: NodeJS.Timeout | null = null;

  /** One turn may start now: a slot is free and the bucket holds a token (which is taken). */
  function take(): boolean {
    const at = now();
    tokens = Math.min(PHONE_TURN_BURST, tokens + ((at - tokensAt) / 1000) * PHONE_TURNS_PER_SECOND);
    tokensAt = at;
    if (inFlight >= PHONE_MAX_TURNS_IN_FLIGHT || tokens < 1) return false;
    tokens -= 1;
    return true;
  }

  /** Starts the waiting words when a turn may start, or tries again when the bucket will hold a token. */
  function startWaiting(): void {
    if (waiting === null || !options.open() || waitingTimer) return;
    if (take()) {
      const next = waiting;
      waiting = null;
      return options.start(next);
    }
    // A settling turn calls this again; the timer covers the bucket.
    if (inFlight < PHONE_MAX_TURNS_IN_FLIGHT) {
      waitingTimer = setTimeout(() => {
        waitingTimer = null;
        startWaiting();
      }, Math.ceil(((1 - tokens) / PHONE_TURNS_PER_SECOND) * 1000));
    }
  }

  return {
    offer(message, onMerge) {
      if (waiting === null && take()) return options.start(message);
      onMerge();
      waiting = waiting === null ? message : lastChars(`${waiting} ${message}`, MAX_MESSAGE_CHARS);
      startWaiting();
    },
    started() {
      inFlight++;
    },
    settled() {
      inFlight--;
      startWaiting();
    },
    cancel() {
      if (waitingTimer) clearTimeout(waitingTimer);
      waitingTimer = null;
    },
  };
}

/** The last `max` code points of `text`: of a merged flood, the caller's latest words are the ones to answer. */
function lastChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const codePoints = Array.from(text);
  return codePoints.length <= max ? text : codePoints.slice(-max).join('').trimStart();
}
