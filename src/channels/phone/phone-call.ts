// Over 400 lines: one call's frame loop (setup, prompts, the talk cycle and its turns), whose state every handler shares; keys and the flood bounds are their own modules.
/**
 * One phone call on one ConversationRelay WebSocket (docs/interfaces.md, Channels → Phone; docs/phone.md):
 *
 *   setup ──▶ the workspace answering `to`, the session (session_id = callSid, customer.phone = from)
 *   prompt (last:false)* prompt (last:true) ──▶ one turn of the session runtime ──▶ text frames: the sentences of
 *       a streamed answer (last:false) as the AI writes them, then the rest (last:true); one frame when not streamed
 *       nothing after PHONE_FILLER_MS ──▶ a filler text frame, preemptible, once a turn
 *   interrupt ──▶ the turn is cancelled; what the caller heard is kept as the reply in the history (of this turn
 *       when it had begun to speak, of the last one otherwise)
 *   dtmf ──▶ a key entry (ends with '#' or a pause): "0" asks for a person, anything else is said as the message
 *   socket closed ──▶ the session ends
 *
 * A turn's answer is spoken only while that turn is the current one: an interrupt, a newer prompt or a closed socket
 * makes it stale, and a stale answer is never sent (no answer to a question the caller already moved on from).
 */
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import { phrase } from '../../ai/phrases.ts';
import { cutToChars } from '../../text/cut.ts';
import { normaliseLanguage } from '../../text/language.ts';
import { MAX_MESSAGE_CHARS } from '../../limits.ts';
import type { Logger } from '../../log.ts';
import type { Admission } from '../../admission/admission.ts';
import type { SessionRuntime, TurnResult } from '../../sessions/session-runtime.ts';
import type { HandoffRequest } from '../../../machines/session-types.ts';
import { parseFrame, type DropReason, type HandoffData, type InboundFrame, type OutboundFrame, type SetupFrame } from './frames.ts';
import { createKeyEntry } from './key-entry.ts';
import type { PhoneMetrics } from './phone-metrics.ts';
import { normaliseE164 } from './phone-number.ts';
import { createTurnBounds } from './turn-bounds.ts';

/** What a call needs of the session runtime. */
export type PhoneRuntime = Pick<SessionRuntime, 'handleMessage' | 'open' | 'interrupt' | 'end'>;

export interface PhoneCallDeps {
  runtime: PhoneRuntime;
  /** Admission control (src/admission): a call beyond the engine's bound is refused with the busy sentence. */
  admission?: Pick<Admission, 'admitCall' | 'callEnded'>;
  workspaceForNumber: (number: string) => Promise<string | undefined>;
  /** Starts loading what the call's turns will need (the tools manifest) without waiting for it; never throws. */
  prepareCall?: (workspaceId: string) => void;
  metrics: PhoneMetrics;
  logger: Logger;
  fillerMs: number;
  dtmfEntryMs: number;
  maxFrameBytes: number;
  setupTimeoutMs: number;
  /** How long after our `end` frame we close the socket ourselves if the bridge has not. */
  endGraceMs: number;
}

interface Turn {
  id: string;
  startedAt: number;
  fillerTimer: NodeJS.Timeout | null;
  fillerAtMs: number | null;
  firstTextMs: number | null;
  /** Pieces of the answer went out already (last:false); the reply ends with the rest, last:true. */
  streamed: boolean;
  /** The caller pressed 0: a handoff the turn ends with was asked for by key (otherwise by the caller's words). */
  keyed: boolean;
}

interface Opened {
  workspaceId: string;
  sessionId: string;
  callSid: string;
  customerPhone: string | null;
}

export interface PhoneCall {
  /** Resolves when every turn and handoff that was running has settled. */
  idle(): Promise<void>;
  /** Whether a turn or handoff is running. */
  busy(): boolean;
  /** SIGTERM: asks the bridge to connect the call again (handoffData reason 'reconnect'), then closes with 1001. */
  handBack(): void;
  /** Resolves once the socket is closed and the session ended (or kept, after a hand-back). */
  readonly finished: Promise<void>;
  /** Liveness for the heartbeat: false until the next pong. */
  alive: boolean;
}

export function startPhoneCall(ws: WebSocket, deps: PhoneCallDeps): PhoneCall {
  const { runtime, metrics } = deps;
  let log = deps.logger;
  let opened: Opened | null = null;
  let setupSeen = false;
  /** Counted by admission control until the socket closes. */
  let admitted = false;
  let closed = false;
  let ending = false;
  let handedBack = false;
  /** The caller's language as the recogniser reports it (BCP 47) and its two-letter form for the bot link. */
  let lang: string | null = null;
  let language = 'en';
  let partial: string[] = [];
  let partialChars = 0;
  let current: Turn | null = null;
  let endTimer: NodeJS.Timeout | null = null;
  /** A person connected because the caller pressed 0: written on the session row once the session has ended. */
  const running = new Set<Promise<unknown>>();
  /** A call's turns are bounded; beyond the bounds the caller's words wait, merged (turn-bounds.ts). */
  const bounds = createTurnBounds({ start: (message) => startTurn(message), open: () => !closed && !ending });
  /** Frames are handled in order; only `setup` waits (for the database), turns run beside the queue. */
  let queue: Promise<void> = Promise.resolve();
  const keys = createKeyEntry({
    entryMs: deps.dtmfEntryMs,
    onEntry: (digits) => {
      if (closed || ending) return;
      // "0" on its own asks for a person; a longer entry (an order or phone number, which may start with 0) is said.
      if (digits === '0') askForPerson();
      else requestTurn(digits);
    },
  });
  let resolveFinished!: () => void;
  const finished = new Promise<void>((resolve) => (resolveFinished = resolve));

  metrics.activeCalls.inc();
  const setupTimer = setTimeout(() => {
    if (setupSeen || closed) return;
    log.warn('no setup frame in time; closing');
    ws.close(1008, 'setup expected');
  }, deps.setupTimeoutMs);

  const call: PhoneCall = {
    alive: true,
    finished,
    idle: async () => {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    busy: () => running.size > 0,
    handBack() {
      if (closed) return;
      handedBack = true;
      if (opened && !ending) send({ type: 'end', handoffData: JSON.stringify({ reason: 'reconnect', session_id: opened.sessionId } satisfies HandoffData) });
      ws.close(1001, 'server shutting down');
    },
  };

  ws.on('pong', () => (call.alive = true));
  ws.on('error', (err) => log.warn({ err }, 'phone socket error'));
  ws.on('message', (data, isBinary) => {
    call.alive = true;
    if (isBinary) return drop('binary', 'binary frame');
    const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    if (bytes.length > deps.maxFrameBytes) return drop('too_large', `${bytes.length} bytes`);
    const parsed = parseFrame(bytes.toString('utf8'));
    if (!parsed.ok) return drop(parsed.reason, parsed.detail);
    const frame = parsed.frame;
    queue = queue.then(() => handle(frame)).catch((err: unknown) => log.error({ err, frame: frame.type }, 'phone frame failed'));
  });
  ws.on('close', (code) => {
    closed = true;
    clearTimeout(setupTimer);
    keys.cancel();
    if (endTimer) clearTimeout(endTimer);
    bounds.cancel();
    if (current?.fillerTimer) clearTimeout(current.fillerTimer);
    current = null;
    metrics.activeCalls.dec();
    if (admitted) deps.admission?.callEnded();
    log.info({ code, handedBack }, 'phone call closed');
    // Wait for setup still in the queue, so a call closed right after setup still ends its session.
    void queue
      .then(async () => {
        // After a hand-back the session stays open for the reconnect; the runtime persists it when it stops.
        if (!opened || handedBack) return;
        // open() first: a call silent for longer than the idle time was passivated, and end() only ends live actors.
        await runtime.open({ workspaceId: opened.workspaceId, channel: 'phone', externalId: opened.callSid });
        await runtime.end(opened.workspaceId, 'phone', opened.callSid);
      })
      .catch((err: unknown) => log.error({ err }, 'ending the phone session failed'))
      .finally(resolveFinished);
  });

  let dropsLogged = 0;
  function drop(reason: DropReason, detail: string): void {
    metrics.framesDropped.inc({ reason });
    // A bridge sending garbage in a loop must not flood the log: the first few per call at warn, the rest at debug.
    const level = dropsLogged++ < MAX_DROP_WARNINGS ? 'warn' : 'debug';
    log[level]({ reason, detail }, 'phone frame dropped');
  }

  function send(frame: OutboundFrame): void {
    if (closed || ws.readyState !== ws.OPEN) return;
    ws.send(JSON.stringify(frame));
  }

  function sendText(token: string, options: { preemptible?: boolean; last?: boolean } = {}): void {
    send({ type: 'text', token, last: options.last ?? true, ...(lang ? { lang } : {}), ...(options.preemptible ? { preemptible: true } : {}) });
  }

  /** Our `end` frame: the bridge ends the relay session (and Twilio asks the <Connect> action what next). */
  function sendEnd(handoffData?: HandoffData): void {
    if (ending) return;
    ending = true;
    send({ type: 'end', ...(handoffData ? { handoffData: JSON.stringify(handoffData) } : {}) });
    endTimer = setTimeout(() => ws.close(1000, 'call ended'), deps.endGraceMs);
  }

  function track<T>(work: Promise<T>): Promise<T> {
    running.add(work);
    void work.finally(() => running.delete(work)).catch(() => {});
    return work;
  }

  async function handle(frame: InboundFrame): Promise<void> {
    if (closed || ending) return;
    if (frame.type === 'setup') return setup(frame);
    if (frame.type === 'error') {
      // The bridge tells us about something we sent (Twilio: error 64107 and kin); nothing to answer.
      log.warn({ description: frame.description }, 'bridge reported an error');
      return;
    }
    if (!opened) return drop('before_setup', `${frame.type} before setup`);
    switch (frame.type) {
      case 'prompt':
        return prompt(frame.voicePrompt, frame.lang, frame.last);
      case 'interrupt':
        return interrupt(frame.utteranceUntilInterrupt);
      case 'dtmf':
        return keys.press(frame.digit);
    }
  }

  async function setup(frame: SetupFrame): Promise<void> {
    if (setupSeen) return drop('duplicate_setup', 'a second setup');
    setupSeen = true;
    clearTimeout(setupTimer);
    log = deps.logger.child({ callSid: frame.callSid, relaySessionId: frame.sessionId });
    if (deps.admission) {
      // Before any database work: past its bound the engine says so at once rather than answering nobody well.
      if (!deps.admission.admitCall()) {
        metrics.calls.inc({ outcome: 'busy' });
        log.info('call refused: the engine is at its bound (busy sentence)');
        sendText(phrase('busy', language));
        sendEnd({ reason: 'busy', session_id: '' });
        return;
      }
      admitted = true;
    }
    const to = normaliseE164(frame.to);
    const workspaceId = to ? await deps.workspaceForNumber(to) : undefined;
    if (!workspaceId) {
      metrics.calls.inc({ outcome: 'unknown_number' });
      log.warn({ to: frame.to }, 'call to a number no workspace answers');
      sendText(phrase('unknown_number', 'en'));
      sendEnd();
      return;
    }
    // The tools manifest is fetched while the session opens, so the first turn does not wait for it.
    deps.prepareCall?.(workspaceId);
    // protocol §2.1: customer.phone is the caller's number when known; withheld numbers arrive as '' or 'anonymous'.
    const customerPhone = normaliseE164(frame.from);
    // If the socket closes meanwhile, the close handler (queued behind this) still ends the session. `hold`: the call's
    // socket keeps the conversation in this process, so its turns skip the per-turn lease.
    let sessionId: string;
    try {
      ({ sessionId } = await runtime.open({ workspaceId, channel: 'phone', externalId: frame.callSid, customerPhone, hold: true }));
    } catch (err) {
      // No session, no conversation: an apology rather than silence, and the bridge ends the call.
      log.error({ err, workspaceId }, 'the phone session could not be opened');
      metrics.calls.inc({ outcome: 'failed' });
      sendText(phrase('unknown_number', 'en'));
      sendEnd();
      return;
    }
    opened = { workspaceId, sessionId, callSid: frame.callSid, customerPhone };
    log = log.child({ sessionId, workspaceId });
    metrics.calls.inc({ outcome: 'answered' });
    log.info('phone call connected');
  }

  function prompt(text: string, promptLang: string | null, last: boolean): void {
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
  }

  /** The recogniser reports another language: speak it too (a `language` frame), and ask the bot link in it. */
  function switchLanguage(tag: string): void {
    const next = normaliseLanguage(tag);
    const changed = lang !== null && next !== normaliseLanguage(lang);
    lang = tag;
    language = next;
    if (changed) send({ type: 'language', ttsLanguage: tag, transcriptionLanguage: tag });
  }

  function cancelCurrent(): void {
    if (current?.fillerTimer) clearTimeout(current.fillerTimer);
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
    const o = opened!;
    if (current?.streamed) {
      // The caller spoke (or keyed) while a streamed answer was going out and the bridge sent no interrupt: its talk
      // cycle is closed, and the turn is kept in the history with what was sent of it.
      sendText('', { last: true });
      interrupt(null);
    }
    cancelCurrent();
    const turn: Turn = {
      id: randomUUID(),
      startedAt: performance.now(),
      fillerTimer: null,
      fillerAtMs: null,
      firstTextMs: null,
      streamed: false,
      keyed: handoff !== undefined,
    };
    current = turn;
    if (message === '') {
      // Nothing intelligible was heard: ask again rather than send an empty question to the integrator.
      sendText(phrase('not_heard', language));
      current = null;
      return;
    }
    turn.fillerTimer = setTimeout(() => {
      turn.fillerTimer = null;
      if (current !== turn || closed) return;
      turn.fillerAtMs = performance.now() - turn.startedAt;
      turn.firstTextMs ??= turn.fillerAtMs;
      metrics.fillers.inc();
      metrics.firstText.observe(turn.fillerAtMs / 1000);
      // preemptible: the answer, when ready, cuts the filler off instead of waiting for it to finish.
      sendText(phrase('filler', language), { preemptible: true });
    }, deps.fillerMs);
    bounds.started();
    const work = runtime
      .handleMessage({
        workspaceId: o.workspaceId,
        channel: 'phone',
        externalId: o.callSid,
        text: message,
        language,
        customerPhone: o.customerPhone,
        turnId: turn.id,
        onText: (text) => speakPiece(turn, text),
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

  /** A sentence of a streamed answer: spoken at once (last:false), unless the caller has moved on. */
  function speakPiece(turn: Turn, text: string): void {
    if (current !== turn || closed) return;
    if (turn.fillerTimer) clearTimeout(turn.fillerTimer);
    turn.fillerTimer = null;
    if (turn.firstTextMs == null) {
      turn.firstTextMs = performance.now() - turn.startedAt;
      metrics.firstText.observe(turn.firstTextMs / 1000);
    }
    turn.streamed = true;
    // The bridge joins the tokens of a talk cycle as they come: the space between sentences is ours to send.
    sendText(`${text} `, { last: false });
  }

  function finishTurn(turn: Turn, result: TurnResult): void {
    if (turn.fillerTimer) clearTimeout(turn.fillerTimer);
    if (result.cancelled || current !== turn || closed) {
      if (!result.cancelled) metrics.staleReplies.inc();
      log.info({ turnId: turn.id, cancelled: result.cancelled ? result.reason : 'stale' }, 'phone turn not spoken');
      return;
    }
    current = null;
    const replyMs = performance.now() - turn.startedAt;
    if (turn.firstTextMs == null) {
      turn.firstTextMs = replyMs;
      metrics.firstText.observe(replyMs / 1000);
    }
    metrics.reply.observe(replyMs / 1000);
    // One talk cycle: after streamed sentences the rest (maybe empty) closes it; otherwise the whole reply at once.
    sendText(turn.streamed ? result.unsent : result.text);
    log.info(
      {
        turnId: turn.id,
        source: result.source,
        replyMs: round(replyMs),
        firstTextMs: round(turn.firstTextMs),
        fillerAtMs: turn.fillerAtMs == null ? null : round(turn.fillerAtMs),
        streamed: turn.streamed,
        handoff: result.handoff?.kind ?? null,
      },
      'phone turn answered',
    );
    if (result.handoff?.connected) {
      const requestedBy = result.handoff.requestedBy === 'customer' ? (turn.keyed ? 'dtmf' : 'speech') : 'integrator';
      sendEnd({ reason: 'human', session_id: result.sessionId, requested_by: requestedBy });
    }
  }

  function failTurn(turn: Turn, err: unknown): void {
    if (turn.fillerTimer) clearTimeout(turn.fillerTimer);
    log.error({ err, turnId: turn.id }, 'phone turn failed');
    if (current !== turn || closed) return;
    current = null;
    // No dead air even when the engine fails: the caller hears the honest fallback sentence (and a streamed talk
    // cycle is closed by it).
    sendText(phrase('dont_know', language));
  }

  function interrupt(spoken: string | null): void {
    const o = opened!;
    cancelCurrent();
    // The session's reply handle knows what of the running turn went out; the bridge's `spoken`, when given, what was heard.
    runtime.interrupt(o.workspaceId, 'phone', o.callSid, spoken ?? undefined);
  }

  /** Key 0: a turn that asks for a person, answered by the session's one handoff rule (team available: connected). */
  function askForPerson(): void {
    if (current) interrupt(null);
    log.info('caller asked for a person (dtmf 0)');
    // Not rate-limited like spoken prompts: one key press is one request, and it must not wait behind a flood.
    startTurn('0', { kind: 'human', requestedBy: 'customer' });
  }

  return call;
}

/** Dropped frames logged at warn per call; the metric counts them all. */
const MAX_DROP_WARNINGS = 10;

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
