/**
 * The turns of one phone call while it is talking (docs/architecture.md, "The phone turn"; docs/phone.md):
 *
 *   prompt (last:false)* prompt (last:true) ──▶ one turn of the session runtime, spoken through its SpokenTurn: the
 *       sentences of a streamed answer (last:false) as the AI writes them, then the rest (last:true); one frame when
 *       not streamed; nothing after the filler time ──▶ a filler text frame, preemptible, once a turn
 *   interrupt ──▶ the turn is cancelled; what the caller heard is kept as the reply in the history (of this turn when
 *       it had begun to speak, of the last one otherwise)
 *   a key entry ──▶ "0" asks for a person, anything else is said as the message
 *
 * A turn's answer is spoken only while that turn is the current one: an interrupt, a newer prompt or a closed socket
 * cancels it, and a cancelled turn says nothing more (no answer to a question the caller already moved on from).
 */
import { randomUUID } from 'node:crypto';
import type { OpenedCall } from '../../../machines/phone-call.machine.ts';
import type { HandoffRequest } from '../../../machines/session-types.ts';
import { phrase } from '../../ai/phrases.ts';
import { MAX_MESSAGE_CHARS } from '../../limits.ts';
import type { Logger } from '../../log.ts';
import type { SessionRuntime, TurnResult } from '../../sessions/session-runtime.ts';
import { SpokenTurn } from '../../sessions/spoken-turn.ts';
import { cutToChars } from '../../text/cut.ts';
import { normaliseLanguage } from '../../text/language.ts';
import type { HandoffData, OutboundFrame } from './frames.ts';
import type { PhoneMetrics } from './phone-metrics.ts';
import { createTurnBounds } from './turn-bounds.ts';

/** What a call needs of the session runtime. */
export type PhoneRuntime = Pick<SessionRuntime, 'handleMessage' | 'open' | 'interrupt' | 'end'>;

export interface CallTurnsDeps {
  runtime: PhoneRuntime;
  metrics: PhoneMetrics;
  fillerMs: number;
  /** The call's session (the call is talking, so it is open). */
  opened: () => OpenedCall;
  log: () => Logger;
  send: (frame: OutboundFrame) => void;
  /** Whether the call still takes turns (the call machine's tag `takesTurns`). */
  takesTurns: () => boolean;
  /** A turn's handoff connected a person: the call is handed over. */
  handoffConnected: (data: HandoffData) => void;
}

export interface CallTurns {
  prompt(text: string, lang: string | null, last: boolean): void;
  interrupt(spoken: string | null): void;
  /** A finished key entry. */
  keyEntry(digits: string): void;
  /** The socket closed: the current turn says nothing more and no waiting words start. */
  close(): void;
  /** Resolves when every turn that was running has settled. */
  idle(): Promise<void>;
  /** Whether a turn is running. */
  busy(): boolean;
  /** The caller's language as the recogniser reports it (BCP 47), when it has. */
  readonly lang: string | null;
}

export function createCallTurns(deps: CallTurnsDeps): CallTurns {
  const { runtime, metrics } = deps;
  /** The caller's language as the recogniser reports it (BCP 47) and its two-letter form for the bot link. */
  let lang: string | null = null;
  let language = 'en';
  let partial: string[] = [];
  let partialChars = 0;
  let current: SpokenTurn | null = null;
  const running = new Set<Promise<unknown>>();
  /** A call's turns are bounded; beyond the bounds the caller's words wait, merged (turn-bounds.ts). */
  const bounds = createTurnBounds({ start: (message) => startTurn(message), open: deps.takesTurns });

  function sendText(token: string, options: { preemptible?: boolean; last?: boolean } = {}): void {
    deps.send({ type: 'text', token, last: options.last ?? true, ...(lang ? { lang } : {}), ...(options.preemptible ? { preemptible: true } : {}) });
  }

  const voice = {
    say: (text: string, options: { last: boolean; preemptible?: boolean }) => sendText(text, options),
    firstText: (ms: number) => metrics.firstText.observe(ms / 1000),
  };

  function track<T>(work: Promise<T>): Promise<T> {
    running.add(work);
    void work.finally(() => running.delete(work)).catch(() => {});
    return work;
  }

  /** The recogniser reports another language: speak it too (a `language` frame), and ask the bot link in it. */
  function switchLanguage(tag: string): void {
    const next = normaliseLanguage(tag);
    const changed = lang !== null && next !== normaliseLanguage(lang);
    lang = tag;
    language = next;
    if (changed) deps.send({ type: 'language', ttsLanguage: tag, transcriptionLanguage: tag });
  }

  function cancelCurrent(): void {
    current?.cancel();
    current = null;
  }

  /** A turn for what the caller said, or, beyond the bounds, a place among the waiting words (counted as merged). */
  function requestTurn(message: string): void {
    if (message === '') return startTurn(message);
    bounds.offer(message, () => {
      metrics.promptsMerged.inc();
      // The caller has moved on: the answer in flight is no longer theirs to hear.
      cancelCurrent();
    });
  }

  /**
   * `handoff`: the caller asked for a person (key 0); the session's handoff rule answers (src/sessions/handoff.ts). A
   * request in words is found by the session itself, as on every channel (src/text/person-request.ts).
   */
  function startTurn(message: string, handoff?: HandoffRequest): void {
    const o = deps.opened();
    // The caller spoke (or keyed) while a streamed answer was going out and the bridge sent no interrupt: its talk
    // cycle is closed, and the turn is kept in the history with what was sent of it.
    if (current?.closeTalkCycle()) interrupt(null);
    cancelCurrent();
    if (message === '') {
      // Nothing intelligible was heard: ask again rather than send an empty question to the integrator.
      sendText(phrase('not_heard', language));
      return;
    }
    const turn = new SpokenTurn({ id: randomUUID(), voice, keyed: handoff !== undefined });
    current = turn;
    turn.startFiller(
      deps.fillerMs,
      () => phrase('filler', language),
      () => metrics.fillers.inc(),
    );
    bounds.started();
    const work = runtime
      .handleMessage({
        workspaceId: o.workspaceId,
        channel: 'phone',
        externalId: o.callSid,
        text: message,
        language,
        customerPhone: o.customerPhone,
        speech: turn,
        ...(handoff ? { handoff } : {}),
      })
      .then(
        (result) => finishTurn(turn, result),
        (err: unknown) => failTurn(turn, err),
      )
      .finally(() => {
        bounds.settled();
      });
    track(work);
  }

  function finishTurn(turn: SpokenTurn, result: TurnResult): void {
    const log = deps.log();
    const spoken = result.cancelled ? (turn.stopFiller(), null) : turn.finish(result);
    if (result.cancelled || spoken === null) {
      if (!result.cancelled) metrics.staleReplies.inc();
      log.info({ turnId: turn.id, cancelled: result.cancelled ? result.reason : 'stale' }, 'phone turn not spoken');
      return;
    }
    if (current === turn) current = null;
    metrics.reply.observe(spoken.replyMs / 1000);
    log.info(
      {
        turnId: turn.id,
        source: result.source,
        replyMs: round(spoken.replyMs),
        firstTextMs: round(spoken.firstTextMs),
        fillerAtMs: spoken.fillerAtMs == null ? null : round(spoken.fillerAtMs),
        streamed: spoken.streamed,
        handoff: result.handoff?.kind ?? null,
      },
      'phone turn answered',
    );
    if (result.handoff?.connected) {
      const requestedBy = result.handoff.requestedBy === 'customer' ? (turn.keyed ? 'dtmf' : 'speech') : 'integrator';
      deps.handoffConnected({ reason: 'human', session_id: result.sessionId, requested_by: requestedBy });
    }
  }

  function failTurn(turn: SpokenTurn, err: unknown): void {
    deps.log().error({ err, turnId: turn.id }, 'phone turn failed');
    // No dead air even when the engine fails: the caller hears the honest fallback sentence.
    if (turn.fail(phrase('dont_know', language)) && current === turn) current = null;
  }

  function interrupt(spoken: string | null): void {
    const o = deps.opened();
    cancelCurrent();
    // The spoken turn knows what of the running turn went out; the bridge's `spoken`, when given, what was heard.
    runtime.interrupt(o.workspaceId, 'phone', o.callSid, spoken ?? undefined);
  }

  /** Key 0: a turn that asks for a person, answered by the session's one handoff rule (team available: connected). */
  function askForPerson(): void {
    if (current) interrupt(null);
    deps.log().info('caller asked for a person (dtmf 0)');
    // Not rate-limited like spoken prompts: one key press is one request, and it must not wait behind a flood.
    startTurn('0', { kind: 'human', requestedBy: 'customer' });
  }

  return {
    prompt(text, promptLang, last) {
      if (promptLang) switchLanguage(promptLang);
      // A partial transcript: keep it until the utterance is final (one turn per utterance).
      if (partialChars < MAX_MESSAGE_CHARS) {
        partial.push(text);
        partialChars += text.length + 1;
      }
      if (!last) return;
      const message = cutToChars(partial.join(' ').replace(/\s+/g, ' ').trim(), MAX_MESSAGE_CHARS);
      partial = [];
      partialChars = 0;
      requestTurn(message);
    },
    interrupt,
    keyEntry(digits) {
      if (!deps.takesTurns()) return;
      // "0" on its own asks for a person; a longer entry (an order or phone number, which may start with 0) is said.
      if (digits === '0') askForPerson();
      else requestTurn(digits);
    },
    close() {
      bounds.cancel();
      cancelCurrent();
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    busy: () => running.size > 0,
    get lang() {
      return lang;
    },
  };
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
