/**
 * One phone call's lifecycle on its ConversationRelay socket (docs/architecture.md, "The phone turn"; docs/phone.md):
 *
 *   setup ──setup frame──▶ admitting ──admitted──▶ admitted.opening ──the session is open──▶ admitted.talking
 *     │                        └──refused (busy)──▶ refused ──end frame, grace──▶ (socket closed) ──▶ done
 *     └──no setup in time──▶ leaving (socket closed by us) ──▶ done
 *   admitted.opening ──no workspace answers `to`, or the session cannot open──▶ admitted.ending
 *   admitted.talking ──a turn connected a person──▶ admitted.handingOff (end frame with reason human)
 *   SIGTERM (hand_back) ──▶ handedBack (admitted.handedBack once admitted): the socket closes with 1001; a talking
 *       call's bridge is first asked to reconnect, and its session stays open for that
 *   the socket closed ──▶ closing (the session ends) ──▶ done
 *
 * Pure: the frames out, the admission count, the session's opening and end are actions and actors the channel
 * (src/channels/phone/phone-call.ts) provides. While `talking` (tag `takesTurns`) the caller's words start turns;
 * frames before the setup are dropped, frames after our end frame are ignored. Not persisted: a call lives on its
 * socket, so the delays (the setup time-out, the end grace) are XState's own.
 */
import { and, assign, fromPromise, setup } from 'xstate';

/** The setup frame's fields the call needs. */
export interface CallSetup {
  callSid: string;
  relaySessionId: string | null;
  from: string;
  to: string;
}

/** The call's session once it is open. */
export interface OpenedCall {
  workspaceId: string;
  sessionId: string;
  callSid: string;
  customerPhone: string | null;
}

/** The JSON our `end` frame carries (docs/phone.md): why the call ends, and the session it belonged to. */
export interface CallEndData {
  reason: string;
  session_id: string;
  requested_by?: string;
}

export type RefusalOutcome = 'busy' | 'unknown_number' | 'failed';

export type PhoneCallEvent =
  | ({ type: 'setup' } & CallSetup)
  | { type: 'prompt'; text: string; lang: string | null; last: boolean }
  | { type: 'interrupt'; spoken: string | null }
  | { type: 'dtmf'; digit: string }
  /** The bridge reports something about what we sent (Twilio: error 64107 and kin). */
  | { type: 'bridge_error'; description: string }
  /** A turn's handoff connected a person: our end frame hands the call over. */
  | { type: 'handoff_connected'; data: CallEndData }
  /** SIGTERM: the bridge is asked to connect the call again elsewhere. */
  | { type: 'hand_back' }
  /** The socket closed (either side). */
  | { type: 'closed' };

export interface PhoneCallContext {
  setup: CallSetup | null;
  opened: OpenedCall | null;
  /** The socket closed while the session was opening: it is ended as soon as it is open. */
  closedEarly: boolean;
}

type SetupEvent = Extract<PhoneCallEvent, { type: 'setup' }>;

const provided = (name: string) => () => Promise.reject(new Error(`The phone channel provides the ${name} actor.`));

export const phoneCallMachine = setup({
  types: {
    context: {} as PhoneCallContext,
    events: {} as PhoneCallEvent,
  },
  actors: {
    /** Admission control: whether the engine takes one more call (counted until the socket closes). */
    admit: fromPromise<boolean>(provided('admit')),
    /** The workspace answering `to` and the call's session, opened and held; null: no workspace answers the number. */
    openCall: fromPromise<OpenedCall | null, CallSetup>(provided('openCall')),
    /** The call is over: its session ends. */
    endSession: fromPromise<void, OpenedCall>(provided('endSession')),
  },
  actions: {
    /** The setup frame arrived (the channel binds its log to the call). */
    setupSeen: (_, _params: CallSetup) => {},
    setupTimedOut: () => {},
    /** The call is not taken: the sentence for `outcome`, then our end frame (`busy` with its reason). */
    refuse: (_, _params: { outcome: RefusalOutcome }) => {},
    connected: (_, _params: OpenedCall) => {},
    /** Our end frame with `data`: the bridge ends the relay session (and Twilio asks the <Connect> action what next). */
    endCall: (_, _params: { data: CallEndData }) => {},
    closeSocket: (_, _params: { code: number; reason: string }) => {},
    /** Admission control stops counting the call. */
    releaseAdmission: () => {},
    dropFrame: (_, _params: { reason: 'before_setup' | 'duplicate_setup'; detail: string }) => {},
    logBridgeError: (_, _params: { description: string }) => {},
    takePrompt: (_, _params: { text: string; lang: string | null; last: boolean }) => {},
    takeInterrupt: (_, _params: { spoken: string | null }) => {},
    takeKey: (_, _params: { digit: string }) => {},
    logEndFailed: (_, _params: { error: unknown }) => {},
    recordSetup: assign(({ event }) => {
      const e = event as SetupEvent;
      return { setup: { callSid: e.callSid, relaySessionId: e.relaySessionId, from: e.from, to: e.to } };
    }),
    recordOpened: assign((_, params: { opened: OpenedCall }) => ({ opened: params.opened })),
    markClosedEarly: assign({ closedEarly: true }),
  },
  guards: {
    admitted: ({ event }) => (event as unknown as { output: boolean }).output === true,
    noWorkspace: ({ event }) => (event as unknown as { output: OpenedCall | null }).output === null,
    closedEarly: ({ context }) => context.closedEarly,
  },
  delays: {
    /** A socket without a setup frame this long is closed. */
    setupTimeout: 10_000,
    /** How long after our `end` frame we close the socket ourselves if the bridge has not. */
    endGrace: 1_000,
  },
}).createMachine({
  id: 'phoneCall',
  context: { setup: null, opened: null, closedEarly: false },
  initial: 'setup',
  states: {
    setup: {
      after: { setupTimeout: { target: 'leaving', actions: ['setupTimedOut', { type: 'closeSocket', params: { code: 1008, reason: 'setup expected' } }] } },
      on: {
        setup: {
          target: 'admitting',
          actions: ['recordSetup', { type: 'setupSeen', params: ({ event }) => ({ callSid: event.callSid, relaySessionId: event.relaySessionId, from: event.from, to: event.to }) }],
        },
        prompt: { actions: { type: 'dropFrame', params: { reason: 'before_setup', detail: 'prompt before setup' } } },
        interrupt: { actions: { type: 'dropFrame', params: { reason: 'before_setup', detail: 'interrupt before setup' } } },
        dtmf: { actions: { type: 'dropFrame', params: { reason: 'before_setup', detail: 'dtmf before setup' } } },
        bridge_error: { actions: { type: 'logBridgeError', params: ({ event }) => ({ description: event.description }) } },
        hand_back: { target: 'handedBack', actions: { type: 'closeSocket', params: { code: 1001, reason: 'server shutting down' } } },
        closed: 'done',
      },
    },
    // Before any database work: past its bound the engine says so at once rather than answering nobody well.
    admitting: {
      tags: ['settingUp'],
      invoke: {
        src: 'admit',
        onDone: [
          { guard: and(['admitted', 'closedEarly']), target: 'done', actions: 'releaseAdmission' },
          { guard: 'admitted', target: 'admitted' },
          { guard: 'closedEarly', target: 'done' },
          { target: 'refused', actions: { type: 'refuse', params: { outcome: 'busy' } } },
        ],
        onError: [
          { guard: 'closedEarly', target: 'done' },
          { target: 'refused', actions: { type: 'refuse', params: { outcome: 'busy' } } },
        ],
      },
      on: {
        hand_back: { target: 'handedBack', actions: { type: 'closeSocket', params: { code: 1001, reason: 'server shutting down' } } },
        // Counted or not, admission control's answer settles it (onDone).
        closed: { actions: 'markClosedEarly' },
      },
    },
    refused: {
      after: { endGrace: { actions: { type: 'closeSocket', params: { code: 1000, reason: 'call ended' } } } },
      on: {
        hand_back: { target: 'handedBack', actions: { type: 'closeSocket', params: { code: 1001, reason: 'server shutting down' } } },
        closed: 'done',
      },
    },
    // Counted by admission control until the socket closes.
    admitted: {
      initial: 'opening',
      on: {
        closed: { target: 'closing', actions: 'releaseAdmission' },
        hand_back: { target: '.handedBack', actions: { type: 'closeSocket', params: { code: 1001, reason: 'server shutting down' } } },
      },
      states: {
        opening: {
          tags: ['settingUp'],
          invoke: {
            src: 'openCall',
            input: ({ context }) => context.setup!,
            onDone: [
              {
                guard: and(['noWorkspace', 'closedEarly']),
                target: '#phoneCall.done',
                actions: { type: 'refuse', params: { outcome: 'unknown_number' } },
              },
              {
                guard: 'noWorkspace',
                target: 'ending',
                actions: { type: 'refuse', params: { outcome: 'unknown_number' } },
              },
              {
                guard: 'closedEarly',
                target: '#phoneCall.closing',
                actions: [{ type: 'recordOpened', params: ({ event }) => ({ opened: event.output! }) }, { type: 'connected', params: ({ event }) => event.output! }],
              },
              {
                target: 'talking',
                actions: [{ type: 'recordOpened', params: ({ event }) => ({ opened: event.output! }) }, { type: 'connected', params: ({ event }) => event.output! }],
              },
            ],
            // No session, no conversation: an apology rather than silence, and the bridge ends the call.
            onError: [
              { guard: 'closedEarly', target: '#phoneCall.done', actions: { type: 'refuse', params: { outcome: 'failed' } } },
              { target: 'ending', actions: { type: 'refuse', params: { outcome: 'failed' } } },
            ],
          },
          // The socket closed while the session opens: it still ends once open (the admission count stops now).
          on: { closed: { actions: ['releaseAdmission', 'markClosedEarly'] } },
        },
        talking: {
          tags: ['takesTurns'],
          on: {
            prompt: { actions: { type: 'takePrompt', params: ({ event }) => ({ text: event.text, lang: event.lang, last: event.last }) } },
            interrupt: { actions: { type: 'takeInterrupt', params: ({ event }) => ({ spoken: event.spoken }) } },
            dtmf: { actions: { type: 'takeKey', params: ({ event }) => ({ digit: event.digit }) } },
            setup: { actions: { type: 'dropFrame', params: { reason: 'duplicate_setup', detail: 'a second setup' } } },
            bridge_error: { actions: { type: 'logBridgeError', params: ({ event }) => ({ description: event.description }) } },
            handoff_connected: { target: 'handingOff', actions: { type: 'endCall', params: ({ event }) => ({ data: event.data }) } },
            hand_back: {
              target: 'handedBack',
              actions: [
                { type: 'endCall', params: ({ context }) => ({ data: { reason: 'reconnect', session_id: context.opened!.sessionId } }) },
                { type: 'closeSocket', params: { code: 1001, reason: 'server shutting down' } },
              ],
            },
          },
        },
        // Our end frame went with a handoff to a person; the bridge closes, or we do after the grace.
        handingOff: {
          after: { endGrace: { actions: { type: 'closeSocket', params: { code: 1000, reason: 'call ended' } } } },
        },
        // Our end frame went after the refusal sentence (no workspace, no session): nothing to end but the socket.
        ending: {
          after: { endGrace: { actions: { type: 'closeSocket', params: { code: 1000, reason: 'call ended' } } } },
          on: { closed: { target: '#phoneCall.done', actions: 'releaseAdmission' } },
        },
        // SIGTERM: the session stays open for the reconnect; the runtime persists it when it stops.
        handedBack: {
          on: { closed: { target: '#phoneCall.done', actions: 'releaseAdmission' }, hand_back: {} },
        },
      },
    },
    // We closed the socket (no setup in time): waiting for it to close.
    leaving: {
      on: { closed: 'done' },
    },
    // SIGTERM before the call was admitted: nothing to keep, the socket is closing.
    handedBack: {
      on: { closed: 'done' },
    },
    closing: {
      invoke: {
        src: 'endSession',
        input: ({ context }) => context.opened!,
        onDone: 'done',
        onError: { target: 'done', actions: { type: 'logEndFailed', params: ({ event }) => ({ error: event.error }) } },
      },
    },
    done: { type: 'final' },
  },
});
