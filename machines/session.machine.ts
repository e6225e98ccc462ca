// Over 400 lines: one statechart; split, its states would lose sight of their transitions.
/**
 * One conversation = one actor of this machine (protocol §1.3, §2.2–2.5, §7, §8). Pure statechart: its I/O (the Bot
 * Link, the knowledge base, the AI, the tools, the hand-off) are named promise actors that the session runtime
 * provides with `machine.provide`; leaving a state aborts their signal, so a cancelled turn really stops its work.
 *
 * Two parallel regions: `conversation` (the turns, below) and `handler`, who handles the conversation
 * (docs/architecture.md, "Who handles a conversation"):
 *
 *   handler:  bot ──wait (a person asked for, chat channels)──▶ waiting ──takeover──▶ agent
 *             bot ──takeover──▶ agent ;  waiting|agent ──handback──▶ bot ;  bot|waiting|agent ──close──▶ closed
 *             waiting ──handback_due (deadline passed)──▶ bot ;  closed ──message──▶ bot
 *   while waiting or agent, a customer message is `held`: stored and shown, answered by nobody.
 *
 *   conversation: idle ──message──▶ turn ──▶ idle   (a message during a turn restarts it: barge-in)
 *   turn, by channel:
 *     phone:    gathering ‖ (bot link 3.5 s | knowledge | tool manifest) ─▶ deciding
 *               a handled answer leaves at once; otherwise all three finish (the bot link never past its deadline)
 *     whatsapp: asking (bot link 6 s) ─handled─▶ answered, else ─▶ searching ─▶ thinking
 *     webchat:  searching ─▶ thinking        (knowledge base only, never the bot link)
 *   thinking ⇄ callingTools                  (at most three rounds, protocol §8; then the AI must answer)
 *   ─▶ checkingHandoff ─▶ handingOff? ─▶ replying ─▶ idle
 */
import { assign, emit, enqueueActions, fromPromise, or, setup, stateIn } from 'xstate';
import { errorText } from '../src/errors.ts';
import { CHANNEL_TIMEOUT_MS, MAX_TOOL_ROUNDS, PHONE_CHANNEL_TIMEOUT_MS } from '../src/limits.ts';
import { offersPerson, requestsPerson } from '../src/text/person-request.ts';
import type { ToolOutcome, ToolSpec } from '../src/botlink/tools-types.ts';
import {
  MAX_HISTORY_TURNS,
  type AiInput,
  type AiStep,
  type BotLinkInput,
  type BotLinkSummary,
  type HandoffInput,
  type HandoffRequest,
  type HandoffResult,
  type KnowledgeInput,
  type KnowledgeSummary,
  type SessionContext,
  type SessionEmitted,
  type SessionEvent,
  type SessionInput,
  type HandlerChangeReason,
  type HandledBy,
  type ToolsInput,
  type TurnState,
} from './session-types.ts';

const provided = (name: string) => () => Promise.reject(new Error(`The session runtime provides the ${name} actor.`));

type DoneEvent<T> = { output: T };
type ErrorEvent = { error: unknown };

/** The history with one more exchange, cut to the turns the AI sees. */
function withExchange(history: SessionContext['history'], message: string, reply: string): SessionContext['history'] {
  return [...history, { role: 'customer' as const, text: message }, { role: 'assistant' as const, text: reply }].slice(-2 * MAX_HISTORY_TURNS);
}

function newTurn(context: SessionContext, event: Extract<SessionEvent, { type: 'message' }>): TurnState {
  const language = event.language ?? context.language;
  return {
    id: event.turnId,
    ordinal: context.turnCount + 1,
    message: event.text,
    language,
    startedAt: event.at,
    botlinkDeadlineAt:
      context.channel === 'webchat' ? null : event.at + (context.channel === 'phone' ? PHONE_CHANNEL_TIMEOUT_MS : CHANNEL_TIMEOUT_MS),
    botlink: null,
    knowledge: null,
    tools: [],
    rounds: [],
    integratorContext: null,
    reply: null,
    requestedHandoff: event.handoff ?? requestInWords(context, event.text),
    handoff: null,
    timings: {},
    errors: [],
  };
}

/**
 * The customer asks for a person in their own words, or says yes right after a reply that offered one: a handoff
 * of kind `human`, on every channel; the handoff rule decides what it becomes there (src/sessions/handoff.ts).
 */
function requestInWords(context: SessionContext, text: string): HandoffRequest | null {
  return requestsPerson(text, context.personOffered === true) ? { kind: 'human', requestedBy: 'customer' } : null;
}

/** Whether the customer was offered a person by this completed turn's reply (the fallback sentence offers one). */
function offeredPerson(turn: TurnState): boolean {
  if (turn.handoff !== null || turn.reply === null) return false;
  return turn.reply.source === 'fallback' || offersPerson(turn.reply.text);
}

const handledAnswer = (b: BotLinkSummary | null | undefined): boolean => b?.outcome === 'answer' && b.handled === true && !!b.reply;

export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as SessionInput,
    emitted: {} as SessionEmitted,
  },
  actors: {
    callBotLink: fromPromise<BotLinkSummary, BotLinkInput>(provided('callBotLink')),
    searchKnowledge: fromPromise<KnowledgeSummary, KnowledgeInput>(provided('searchKnowledge')),
    loadTools: fromPromise<ToolSpec[], { workspaceId: string; deadlineAt: number | null }>(provided('loadTools')),
    aiStep: fromPromise<{ step: AiStep; elapsedMs: number }, AiInput>(provided('aiStep')),
    runTools: fromPromise<ToolOutcome[], ToolsInput>(provided('runTools')),
    handoff: fromPromise<HandoffResult, HandoffInput>(provided('handoff')),
  },
  guards: {
    isPhone: ({ context }) => context.channel === 'phone',
    isWhatsApp: ({ context }) => context.channel === 'whatsapp',
    botlinkHandled: ({ context }) => handledAnswer(context.turn?.botlink),
    outputHandled: (_, params: { output: BotLinkSummary }) => handledAnswer(params.output),
    wantsTools: ({ context }, params: { step: AiStep }) =>
      params.step.kind === 'tool_calls' && params.step.calls.length > 0 && (context.turn?.rounds.length ?? 0) < MAX_TOOL_ROUNDS && (context.turn?.tools.length ?? 0) > 0,
    isAnswer: (_, params: { step: AiStep }) => params.step.kind === 'answer' && params.step.text.trim().length > 0,
    hasHandoff: ({ context }) => context.turn != null && handoffOf(context.turn) != null,
    requestsHandoff: ({ context }) => context.turn?.requestedHandoff != null,
    isChat: ({ context }) => context.channel !== 'phone',
    personHandles: or([stateIn({ handler: 'waiting' }), stateIn({ handler: 'agent' })]),
    handbackDue: ({ context, event }) => event.type === 'handback_due' && context.handbackAt !== null && context.handbackAt <= event.at,
  },
  actions: {
    startTurn: assign(({ context, event }) => {
      if (event.type !== 'message') return {};
      const turn = newTurn(context, event);
      // An offer holds for the very next message only.
      return { turn, language: turn.language, turnCount: context.turnCount + 1, personOffered: false };
    }),
    recordBotLink: assign(({ context }, params: { output: BotLinkSummary }) => {
      const turn = context.turn!;
      const b = params.output;
      const saveCustomer = b.outcome === 'answer' && context.channel === 'whatsapp'; // protocol §2.2: WhatsApp only
      return {
        turn: {
          ...turn,
          botlink: b,
          // protocol §1.3: handled false → the reply is context for the AI only.
          integratorContext: b.outcome === 'answer' && b.handled === false ? b.reply : turn.integratorContext,
          timings: { ...turn.timings, botlink: Math.round(b.latencyMs), ...(b.firstByteMs == null ? {} : { botlinkFirstByte: Math.round(b.firstByteMs) }) },
        },
        customer: saveCustomer
          ? { ...context.customer, email: b.customer.email ?? context.customer.email, name: b.customer.name ?? context.customer.name }
          : context.customer,
      };
    }),
    recordBotLinkError: assign(({ context }, params: ErrorEvent) => ({
      turn: {
        ...context.turn!,
        botlink: { outcome: 'no_answer', reason: 'internal', reply: null, handled: null, handoff: null, customer: {}, problems: [], httpStatus: null, latencyMs: 0, firstByteMs: null } satisfies BotLinkSummary,
        errors: [...context.turn!.errors, `botlink: ${errorText(params.error)}`],
      },
    })),
    recordKnowledge: assign(({ context }, params: { output: KnowledgeSummary }) => ({
      turn: { ...context.turn!, knowledge: params.output, timings: { ...context.turn!.timings, knowledge: Math.round(params.output.tookMs) } },
    })),
    recordTools: assign(({ context }, params: { output: ToolSpec[] }) => ({ turn: { ...context.turn!, tools: params.output } })),
    recordError: assign(({ context }, params: { where: string; error: unknown }) => ({
      turn: { ...context.turn!, errors: [...context.turn!.errors, `${params.where}: ${errorText(params.error)}`] },
    })),
    answerFromIntegrator: assign(({ context }) => ({
      turn: { ...context.turn!, reply: { text: context.turn!.botlink!.reply!, source: 'integrator' as const } },
    })),
    recordAnswer: assign(({ context }, params: { step: AiStep; elapsedMs: number }) => {
      const turn = context.turn!;
      if (params.step.kind !== 'answer') return {};
      // A stream cut off midway: what was already spoken stands as the answer, and the turn says why it is short.
      const errors = params.step.cut ? [...turn.errors, `ai: the stream broke off (${params.step.cut}); the part already spoken is the answer`] : turn.errors;
      return {
        turn: { ...turn, reply: { text: params.step.text, source: params.step.source }, errors, timings: { ...turn.timings, [`ai${turn.rounds.length}`]: Math.round(params.elapsedMs) } },
      };
    }),
    startRound: assign(({ context }, params: { step: AiStep; elapsedMs: number }) => {
      const turn = context.turn!;
      if (params.step.kind !== 'tool_calls') return {};
      return {
        turn: {
          ...turn,
          rounds: [...turn.rounds, { calls: params.step.calls, outcomes: [] }],
          timings: { ...turn.timings, [`ai${turn.rounds.length}`]: Math.round(params.elapsedMs) },
        },
      };
    }),
    finishRound: assign(({ context }, params: { outcomes: ToolOutcome[] }) => {
      const turn = context.turn!;
      const rounds = turn.rounds.slice();
      const last = rounds.length - 1;
      rounds[last] = { ...rounds[last]!, outcomes: params.outcomes };
      const timings = { ...turn.timings };
      params.outcomes.forEach((o, i) => (timings[`tool${last}.${i}:${o.name}`] = Math.round(o.latencyMs)));
      return { turn: { ...turn, rounds, timings } };
    }),
    failRound: assign(({ context }, params: ErrorEvent) => {
      const turn = context.turn!;
      const rounds = turn.rounds.slice();
      const last = rounds.length - 1;
      const calls = rounds[last]!.calls;
      rounds[last] = {
        calls,
        outcomes: calls.map((c) => ({ id: c.id, name: c.name, ok: false, content: 'The tool could not be called.', failure: 'connection' as const, latencyMs: 0, httpStatus: null })),
      };
      return { turn: { ...turn, rounds, errors: [...turn.errors, `tools: ${errorText(params.error)}`] } };
    }),
    /** Nothing fitting: the runtime says the fallback sentence in the customer's language (empty text, source fallback). */
    answerFallback: assign(({ context }) => ({ turn: { ...context.turn!, reply: { text: '', source: 'fallback' as const } } })),
    recordHandoff: assign(({ context }, params: { output: HandoffResult }) => ({
      turn: { ...context.turn!, handoff: params.output },
      handoff: params.output,
    })),
    emitReply: emit(({ context }) => {
      const turn = context.turn!;
      const text = [turn.reply?.text ?? '', turn.handoff?.sentence ?? ''].filter((t) => t.length > 0).join(' ');
      return { type: 'reply' as const, turnId: turn.id, text, answer: turn.reply?.text ?? '', source: turn.reply?.source ?? 'fallback', language: turn.language, handoff: turn.handoff };
    }),
    completeTurn: assign(({ context }) => {
      const turn = context.turn!;
      return { history: withExchange(context.history, turn.message, turn.reply?.text ?? ''), turn: null, personOffered: offeredPerson(turn) };
    }),
    emitCompleted: emit(({ context }) => ({ type: 'turn_completed' as const, turn: context.turn! })),
    emitCancelled: emit(({ context }, params: { reason: 'barge_in' | 'interrupt' | 'end' }) => ({
      type: 'turn_cancelled' as const,
      turn: context.turn!,
      reason: params.reason,
    })),
    dropTurn: assign({ turn: null }),
    emitHeld: emit(({ event }) => {
      const e = event as Extract<SessionEvent, { type: 'message' }>;
      return { type: 'held' as const, turnId: e.turnId, text: e.text, at: e.at };
    }),
    /** A turn that asked for a person on a chat channel: the handler region goes to `waiting`. */
    waitIfAsked: enqueueActions(({ enqueue }, params: { output: HandoffResult }) => {
      const waiting = params.output.waiting;
      if (waiting) enqueue.raise({ type: 'wait', since: waiting.since, handbackAt: waiting.handbackAt });
    }),
    toWaiting: assign(({ context, event }) => {
      const e = event as Extract<SessionEvent, { type: 'wait' }>;
      return { agent: null, waitingSince: e.since, handbackAt: e.handbackAt, handlerRevision: context.handlerRevision + 1 };
    }),
    toAgent: assign(({ context, event }) => {
      const e = event as Extract<SessionEvent, { type: 'takeover' }>;
      return { agent: e.agent, waitingSince: null, handbackAt: null, handlerRevision: context.handlerRevision + 1 };
    }),
    toBot: assign(({ context }) => ({ agent: null, waitingSince: null, handbackAt: null, handlerRevision: context.handlerRevision + 1 })),
    emitHandler: emit(({ context }, params: { handledBy: HandledBy; reason: HandlerChangeReason }) => ({
      type: 'handler_changed' as const,
      handledBy: params.handledBy,
      agent: context.agent,
      waitingSince: context.waitingSince,
      reason: params.reason,
    })),
    /** Phone: a turn interrupted while its reply was being spoken stays in the history with what was heard of it. */
    keepSpokenPart: assign(({ context, event }) => {
      if (event.type !== 'interrupt' || event.midTurn !== true || !context.turn) return {};
      // An offer counts only when the caller heard it before speaking.
      return { history: withExchange(context.history, context.turn.message, event.spoken ?? ''), personOffered: offersPerson(event.spoken ?? '') };
    }),
    /** Phone: keep only what the caller really heard of the last reply. */
    cutHistoryToSpoken: assign(({ context, event }) => {
      if (event.type !== 'interrupt' || event.spoken === undefined || event.midTurn === true) return {};
      const history = context.history.slice();
      const last = history.at(-1);
      if (last?.role === 'assistant') history[history.length - 1] = { role: 'assistant', text: event.spoken };
      return { history, personOffered: context.personOffered === true && offersPerson(event.spoken) };
    }),
  },
}).createMachine({
  id: 'session',
  context: ({ input }) => ({
    sessionId: input.sessionId,
    workspaceId: input.workspaceId,
    channel: input.channel,
    language: input.language ?? 'en',
    customer: { phone: input.customerPhone ?? null, email: null, name: null },
    history: [],
    turnCount: 0,
    handoff: null,
    personOffered: false,
    turn: null,
    agent: null,
    waitingSince: null,
    handbackAt: null,
    handlerRevision: 0,
  }),
  type: 'parallel',
  states: {
    handler: {
      initial: 'bot',
      on: { end: '.ended' },
      states: {
        bot: {
          on: {
            wait: { guard: 'isChat', target: 'waiting', actions: ['toWaiting', { type: 'emitHandler', params: { handledBy: 'waiting', reason: 'wait' } }] },
            takeover: { guard: 'isChat', target: 'agent', actions: ['toAgent', { type: 'emitHandler', params: { handledBy: 'agent', reason: 'takeover' } }] },
            close: { guard: 'isChat', target: 'closed', actions: ['toBot', { type: 'emitHandler', params: { handledBy: 'bot', reason: 'close' } }] },
          },
        },
        waiting: {
          on: {
            takeover: { target: 'agent', actions: ['toAgent', { type: 'emitHandler', params: { handledBy: 'agent', reason: 'takeover' } }] },
            handback: { target: 'bot', actions: ['toBot', { type: 'emitHandler', params: { handledBy: 'bot', reason: 'handback' } }] },
            close: { target: 'closed', actions: ['toBot', { type: 'emitHandler', params: { handledBy: 'bot', reason: 'close' } }] },
            handback_due: { guard: 'handbackDue', target: 'bot', actions: ['toBot', { type: 'emitHandler', params: { handledBy: 'bot', reason: 'handback_timeout' } }] },
          },
        },
        // One named user holds it; another's take-over finds no transition here (the runtime answers 409 taken).
        agent: {
          on: {
            handback: { target: 'bot', actions: ['toBot', { type: 'emitHandler', params: { handledBy: 'bot', reason: 'handback' } }] },
            close: { target: 'closed', actions: ['toBot', { type: 'emitHandler', params: { handledBy: 'bot', reason: 'close' } }] },
          },
        },
        // The team is done: the bot answers whatever the customer writes next (and the conversation is open again).
        closed: {
          on: {
            message: { target: 'bot', actions: { type: 'emitHandler', params: { handledBy: 'bot', reason: 'reopened' } } },
            wait: { guard: 'isChat', target: 'waiting', actions: ['toWaiting', { type: 'emitHandler', params: { handledBy: 'waiting', reason: 'wait' } }] },
            takeover: { guard: 'isChat', target: 'agent', actions: ['toAgent', { type: 'emitHandler', params: { handledBy: 'agent', reason: 'takeover' } }] },
          },
        },
        ended: { type: 'final' },
      },
    },
    conversation: {
      initial: 'idle',
      on: {
        end: '.ended',
      },
      states: {
        idle: {
          on: {
            message: [
              // A person handles the conversation: the message is stored and shown, and nobody else answers it.
              { guard: 'personHandles', actions: 'emitHeld' },
              { target: 'turn', actions: 'startTurn' },
            ],
            interrupt: { actions: 'cutHistoryToSpoken' },
          },
        },
        turn: {
          initial: 'routing',
          on: {
            // Barge-in: the newer message wins; leaving the state aborts every actor of the old turn.
            message: { target: 'turn', reenter: true, actions: [{ type: 'emitCancelled', params: { reason: 'barge_in' } }, 'startTurn'] },
            interrupt: { target: 'idle', actions: [{ type: 'emitCancelled', params: { reason: 'interrupt' } }, 'keepSpokenPart', 'dropTurn', 'cutHistoryToSpoken'] },
            end: { target: 'ended', actions: [{ type: 'emitCancelled', params: { reason: 'end' } }, 'dropTurn'] },
          },
          states: {
            routing: {
              always: [
                // The customer asked for a person (key 0, the chat's button, their words, a yes to the offer of one): no
                // answer to look for, the handoff at once; the integrator is not asked (the customer was explicit).
                { guard: 'requestsHandoff', target: 'handingOff' },
                { guard: 'isPhone', target: 'gathering' },
                { guard: 'isWhatsApp', target: 'asking' },
                { target: 'searching' },
              ],
            },
            gathering: {
              type: 'parallel',
              onDone: 'deciding',
              states: {
                botlink: {
                  initial: 'calling',
                  states: {
                    calling: {
                      invoke: {
                        src: 'callBotLink',
                        input: ({ context }) => botlinkInput(context),
                        onDone: [
                          // A handled answer is used at once: leaving `gathering` cancels the rest.
                          { guard: { type: 'outputHandled', params: ({ event }) => ({ output: event.output }) }, target: '#session.conversation.turn.deciding', actions: { type: 'recordBotLink', params: ({ event }) => ({ output: event.output }) } },
                          { target: 'done', actions: { type: 'recordBotLink', params: ({ event }) => ({ output: event.output }) } },
                        ],
                        onError: { target: 'done', actions: { type: 'recordBotLinkError', params: ({ event }: { event: ErrorEvent }) => ({ error: event.error }) } },
                      },
                    },
                    done: { type: 'final' },
                  },
                },
                knowledge: {
                  initial: 'searching',
                  states: {
                    searching: {
                      invoke: {
                        src: 'searchKnowledge',
                        input: ({ context }) => knowledgeInput(context),
                        onDone: { target: 'done', actions: { type: 'recordKnowledge', params: ({ event }: { event: DoneEvent<KnowledgeSummary> }) => ({ output: event.output }) } },
                        onError: { target: 'done', actions: { type: 'recordError', params: ({ event }: { event: ErrorEvent }) => ({ where: 'knowledge', error: event.error }) } },
                      },
                    },
                    done: { type: 'final' },
                  },
                },
                tools: {
                  initial: 'loading',
                  states: {
                    loading: {
                      invoke: {
                        src: 'loadTools',
                        input: ({ context }) => ({ workspaceId: context.workspaceId, turnId: context.turn!.id, deadlineAt: context.turn!.botlinkDeadlineAt }),
                        onDone: { target: 'done', actions: { type: 'recordTools', params: ({ event }: { event: DoneEvent<ToolSpec[]> }) => ({ output: event.output }) } },
                        onError: { target: 'done', actions: { type: 'recordError', params: ({ event }: { event: ErrorEvent }) => ({ where: 'tools manifest', error: event.error }) } },
                      },
                    },
                    done: { type: 'final' },
                  },
                },
              },
            },
            asking: {
              invoke: {
                src: 'callBotLink',
                input: ({ context }) => botlinkInput(context),
                onDone: [
                  { guard: { type: 'outputHandled', params: ({ event }) => ({ output: event.output }) }, target: 'deciding', actions: { type: 'recordBotLink', params: ({ event }) => ({ output: event.output }) } },
                  { target: 'searching', actions: { type: 'recordBotLink', params: ({ event }) => ({ output: event.output }) } },
                ],
                onError: { target: 'searching', actions: { type: 'recordBotLinkError', params: ({ event }: { event: ErrorEvent }) => ({ error: event.error }) } },
              },
            },
            searching: {
              invoke: {
                src: 'searchKnowledge',
                input: ({ context }) => knowledgeInput(context),
                onDone: { target: 'thinking', actions: { type: 'recordKnowledge', params: ({ event }: { event: DoneEvent<KnowledgeSummary> }) => ({ output: event.output }) } },
                onError: { target: 'thinking', actions: { type: 'recordError', params: ({ event }: { event: ErrorEvent }) => ({ where: 'knowledge', error: event.error }) } },
              },
            },
            deciding: {
              always: [{ guard: 'botlinkHandled', target: 'checkingHandoff', actions: 'answerFromIntegrator' }, { target: 'thinking' }],
            },
            thinking: {
              invoke: {
                src: 'aiStep',
                input: ({ context }) => aiInput(context),
                onDone: [
                  { guard: { type: 'wantsTools', params: ({ event }) => ({ step: event.output.step }) }, target: 'callingTools', actions: { type: 'startRound', params: ({ event }) => event.output } },
                  { guard: { type: 'isAnswer', params: ({ event }) => ({ step: event.output.step }) }, target: 'checkingHandoff', actions: { type: 'recordAnswer', params: ({ event }) => event.output } },
                  { target: 'checkingHandoff', actions: 'answerFallback' },
                ],
                onError: { target: 'checkingHandoff', actions: [{ type: 'recordError', params: ({ event }: { event: ErrorEvent }) => ({ where: 'ai', error: event.error }) }, 'answerFallback'] },
              },
            },
            callingTools: {
              invoke: {
                src: 'runTools',
                input: ({ context }) => ({
                  workspaceId: context.workspaceId,
                  turnId: context.turn!.id,
                  sessionId: context.sessionId,
                  language: context.turn!.language,
                  calls: context.turn!.rounds.at(-1)!.calls,
                }),
                onDone: { target: 'thinking', actions: { type: 'finishRound', params: ({ event }: { event: DoneEvent<ToolOutcome[]> }) => ({ outcomes: event.output }) } },
                onError: { target: 'thinking', actions: { type: 'failRound', params: ({ event }: { event: ErrorEvent }) => ({ error: event.error }) } },
              },
            },
            checkingHandoff: {
              always: [{ guard: 'hasHandoff', target: 'handingOff' }, { target: 'replying' }],
            },
            handingOff: {
              invoke: {
                src: 'handoff',
                input: ({ context }) => ({
                  workspaceId: context.workspaceId,
                  turnId: context.turn!.id,
                  sessionId: context.sessionId,
                  channel: context.channel,
                  language: context.turn!.language,
                  ...handoffOf(context.turn!)!,
                  message: context.turn!.message,
                  reply: context.turn!.reply?.text ?? '',
                }),
                onDone: {
                  target: 'replying',
                  actions: [
                    { type: 'recordHandoff', params: ({ event }: { event: DoneEvent<HandoffResult> }) => ({ output: event.output }) },
                    { type: 'waitIfAsked', params: ({ event }: { event: DoneEvent<HandoffResult> }) => ({ output: event.output }) },
                  ],
                },
                onError: { target: 'replying', actions: { type: 'recordError', params: ({ event }: { event: ErrorEvent }) => ({ where: 'handoff', error: event.error }) } },
              },
            },
            replying: {
              entry: ['emitReply', 'emitCompleted', 'completeTurn'],
              always: '#session.conversation.idle',
            },
          },
        },
        ended: { type: 'final' },
      },
    },
  },
});

/** The handoff a turn asks for: the customer's own request first, else the integrator's answer's (protocol §2.2). */
function handoffOf(turn: TurnState): HandoffRequest | null {
  if (turn.requestedHandoff) return turn.requestedHandoff;
  const kind = turn.botlink?.outcome === 'answer' ? turn.botlink.handoff : null;
  return kind ? { kind, requestedBy: 'integrator' } : null;
}

function botlinkInput(context: SessionContext): BotLinkInput {
  const turn = context.turn!;
  return {
    workspaceId: context.workspaceId,
    turnId: turn.id,
    sessionId: context.sessionId,
    channel: context.channel,
    message: turn.message,
    language: turn.language,
    customerPhone: context.customer.phone,
    deadlineAt: turn.botlinkDeadlineAt!,
  };
}

function knowledgeInput(context: SessionContext): KnowledgeInput {
  return { workspaceId: context.workspaceId, turnId: context.turn!.id, message: context.turn!.message, language: context.turn!.language };
}

function aiInput(context: SessionContext): AiInput {
  const turn = context.turn!;
  return {
    workspaceId: context.workspaceId,
    sessionId: context.sessionId,
    turnId: turn.id,
    channel: context.channel,
    language: turn.language,
    message: turn.message,
    history: context.history,
    passages: turn.knowledge?.passages ?? [],
    integratorContext: turn.integratorContext,
    // protocol §8: after the third round the AI must answer without tools.
    tools: turn.rounds.length < MAX_TOOL_ROUNDS ? turn.tools : [],
    rounds: turn.rounds,
  };
}

export type SessionMachine = typeof sessionMachine;
