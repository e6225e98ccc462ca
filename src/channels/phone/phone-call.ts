/**
 * One phone call on one ConversationRelay WebSocket (docs/protocol.md; docs/phone.md; docs/architecture.md, "The
 * phone turn"): the adapter between the socket's frames and the call's statechart (machines/phone-call.machine.ts).
 *
 *   setup ──▶ the workspace answering `to`, the session (session_id = callSid, customer.phone = from)
 *   prompt, interrupt, dtmf ──▶ the call's turns while it is talking (call-turns.ts)
 *   socket closed ──▶ the session ends
 *
 * Frames are handled in order; only `setup` waits (for the database), turns run beside the queue. Which frames are
 * taken, when the call ends and what ends with it is the statechart's; sending frames, the admission count, the
 * session's opening and end are what this module gives it.
 */
import type { WebSocket } from 'ws';
import { createActor, fromPromise, waitFor } from 'xstate';
import { phoneCallMachine, type CallSetup, type OpenedCall } from '../../../machines/phone-call.machine.ts';
import type { Logger } from '../../log.ts';
import type { Admission } from '../../admission/admission.ts';
import { createCallTurns, type PhoneRuntime } from './call-turns.ts';
import { parseFrame, type DropReason, type HandoffData, type InboundFrame, type OutboundFrame } from './frames.ts';
import { createKeyEntry } from './key-entry.ts';
import type { PhoneMetrics } from './phone-metrics.ts';
import { normaliseE164 } from './phone-number.ts';
import { phrase } from '../../ai/phrases.ts';

export type { PhoneRuntime } from './call-turns.ts';

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
  /** Frames are handled in order; only `setup` waits (for the database), turns run beside the queue. */
  let queue: Promise<void> = Promise.resolve();
  let resolveFinished!: () => void;
  const finished = new Promise<void>((resolve) => (resolveFinished = resolve));

  function send(frame: OutboundFrame): void {
    if (ws.readyState !== ws.OPEN) return;
    ws.send(JSON.stringify(frame));
  }

  const opened = (): OpenedCall => call.getSnapshot().context.opened!;
  const turns = createCallTurns({
    runtime,
    metrics,
    fillerMs: deps.fillerMs,
    opened,
    log: () => log,
    send,
    takesTurns: () => call.getSnapshot().hasTag('takesTurns'),
    handoffConnected: (data) => call.send({ type: 'handoff_connected', data }),
  });
  const keys = createKeyEntry({ entryMs: deps.dtmfEntryMs, onEntry: (digits) => turns.keyEntry(digits) });

  const machine = phoneCallMachine.provide({
    actors: {
      admit: fromPromise(async () => (deps.admission ? deps.admission.admitCall() : true)),
      openCall: fromPromise(({ input }) => openCall(input)),
      endSession: fromPromise(async ({ input }) => {
        // open() first: a call silent for longer than the idle time was passivated, and end() only ends live actors.
        await runtime.open({ workspaceId: input.workspaceId, channel: 'phone', externalId: input.callSid });
        await runtime.end(input.workspaceId, 'phone', input.callSid);
      }),
    },
    actions: {
      setupSeen: (_, frame) => {
        log = deps.logger.child({ callSid: frame.callSid, relaySessionId: frame.relaySessionId });
      },
      setupTimedOut: () => log.warn('no setup frame in time; closing'),
      refuse: (_, { outcome }) => refuse(outcome),
      connected: (_, o) => {
        log = log.child({ sessionId: o.sessionId, workspaceId: o.workspaceId });
        metrics.calls.inc({ outcome: 'answered' });
        log.info('phone call connected');
      },
      endCall: (_, { data }) => send({ type: 'end', handoffData: JSON.stringify(data) }),
      closeSocket: (_, { code, reason }) => ws.close(code, reason),
      releaseAdmission: () => deps.admission?.callEnded(),
      dropFrame: (_, { reason, detail }) => drop(reason, detail),
      // The bridge tells us about something we sent (Twilio: error 64107 and kin); nothing to answer.
      logBridgeError: (_, { description }) => log.warn({ description }, 'bridge reported an error'),
      takePrompt: (_, { text, lang, last }) => turns.prompt(text, lang, last),
      takeInterrupt: (_, { spoken }) => turns.interrupt(spoken),
      takeKey: (_, { digit }) => keys.press(digit),
      logEndFailed: (_, { error }) => log.error({ err: error }, 'ending the phone session failed'),
    },
    delays: { setupTimeout: deps.setupTimeoutMs, endGrace: deps.endGraceMs },
  });
  const call = createActor(machine);
  call.subscribe({
    complete: () => resolveFinished(),
    error: (err) => {
      log.error({ err }, 'phone call machine failed');
      resolveFinished();
    },
  });

  /** The refusal sentence, then our end frame: the bridge ends the relay session. */
  function refuse(outcome: 'busy' | 'unknown_number' | 'failed'): void {
    metrics.calls.inc({ outcome });
    if (outcome === 'busy') {
      log.info('call refused: the engine is at its bound (busy sentence)');
      // Before the first prompt the caller's language is not known yet.
      send({ type: 'text', token: phrase('busy', 'en'), last: true });
      send({ type: 'end', handoffData: JSON.stringify({ reason: 'busy', session_id: '' } satisfies HandoffData) });
      return;
    }
    if (outcome === 'unknown_number') log.warn({ to: call.getSnapshot().context.setup?.to }, 'call to a number no workspace answers');
    send({ type: 'text', token: phrase('unknown_number', 'en'), last: true });
    send({ type: 'end' });
  }

  async function openCall(setup: CallSetup): Promise<OpenedCall | null> {
    const to = normaliseE164(setup.to);
    let workspaceId: string | undefined;
    try {
      workspaceId = to ? await deps.workspaceForNumber(to) : undefined;
      if (!workspaceId) return null;
      // The tools manifest is fetched while the session opens, so the first turn does not wait for it.
      deps.prepareCall?.(workspaceId);
      // protocol §2.1: customer.phone is the caller's number when known; withheld numbers arrive as '' or 'anonymous'.
      const customerPhone = normaliseE164(setup.from);
      // `hold`: the call's socket keeps the conversation in this process, so its turns skip the per-turn lease.
      const { sessionId } = await runtime.open({ workspaceId, channel: 'phone', externalId: setup.callSid, customerPhone, hold: true });
      return { workspaceId, sessionId, callSid: setup.callSid, customerPhone };
    } catch (err) {
      log.error({ err, workspaceId }, 'the phone session could not be opened');
      throw err;
    }
  }

  const handle: PhoneCall = {
    alive: true,
    finished,
    idle: () => turns.idle(),
    busy: () => turns.busy(),
    handBack() {
      call.send({ type: 'hand_back' });
    },
  };

  let dropsLogged = 0;
  function drop(reason: DropReason, detail: string): void {
    metrics.framesDropped.inc({ reason });
    // A bridge sending garbage in a loop must not flood the log: the first few per call at warn, the rest at debug.
    const level = dropsLogged++ < MAX_DROP_WARNINGS ? 'warn' : 'debug';
    log[level]({ reason, detail }, 'phone frame dropped');
  }

  async function take(frame: InboundFrame): Promise<void> {
    switch (frame.type) {
      case 'setup':
        call.send({ type: 'setup', callSid: frame.callSid, relaySessionId: frame.sessionId, from: frame.from, to: frame.to });
        // Later frames wait until the call is admitted and its session open (or the call is refused).
        await waitFor(call, (s) => !s.hasTag('settingUp'));
        return;
      case 'prompt':
        return void call.send({ type: 'prompt', text: frame.voicePrompt, lang: frame.lang, last: frame.last });
      case 'interrupt':
        return void call.send({ type: 'interrupt', spoken: frame.utteranceUntilInterrupt });
      case 'dtmf':
        return void call.send({ type: 'dtmf', digit: frame.digit });
      case 'error':
        return void call.send({ type: 'bridge_error', description: frame.description });
    }
  }

  metrics.activeCalls.inc();
  call.start();
  ws.on('pong', () => (handle.alive = true));
  ws.on('error', (err) => log.warn({ err }, 'phone socket error'));
  ws.on('message', (data, isBinary) => {
    handle.alive = true;
    if (isBinary) return drop('binary', 'binary frame');
    const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    if (bytes.length > deps.maxFrameBytes) return drop('too_large', `${bytes.length} bytes`);
    const parsed = parseFrame(bytes.toString('utf8'));
    if (!parsed.ok) return drop(parsed.reason, parsed.detail);
    const frame = parsed.frame;
    queue = queue.then(() => take(frame)).catch((err: unknown) => log.error({ err, frame: frame.type }, 'phone frame failed'));
  });
  ws.on('close', (code) => {
    keys.cancel();
    turns.close();
    metrics.activeCalls.dec();
    const handedBack = call.getSnapshot().matches({ admitted: 'handedBack' }) || call.getSnapshot().matches('handedBack');
    log.info({ code, handedBack }, 'phone call closed');
    call.send({ type: 'closed' });
  });

  return handle;
}

/** Dropped frames logged at warn per call; the metric counts them all. */
const MAX_DROP_WARNINGS = 10;
