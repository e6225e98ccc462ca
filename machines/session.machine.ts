/**
 * One conversation = one actor of this machine (protocol §1.3, §2.2–2.5, §7, §8). Pure statechart: its I/O (the Bot
 * Link, the knowledge base, the AI, the tools, the handoff) are named promise actors that the session runtime
 * provides with `machine.provide`; leaving a state aborts their signal, so a cancelled turn really stops its work.
 *
 * Two parallel regions: `conversation` (the turns, below) and `attendant`, who handles the conversation
 * (docs/architecture.md, "Who handles a conversation"):
 *
 *   attendant: bot ──wait (a person asked for, chat channels)──▶ waiting ──takeover──▶ agent
 *              bot ──takeover──▶ agent ;  waiting|agent ──handback──▶ bot ;  bot|waiting|agent ──close──▶ closed
 *              waiting ──handback_due (deadline passed)──▶ bot ;  closed ──message──▶ bot
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
 *
 * The guards and actions the states name, and the actors' declarations, are in machines/session-setup.ts; the
 * context's pure helpers (a new turn, the actors' inputs) in machines/session-turn.ts.
 */
import type { ToolOutcome, ToolSpec } from '../src/botlink/tools-types.ts';
import type { HandoffResult, KnowledgeSummary } from './session-types.ts';
import { sessionSetup, type DoneEvent, type ErrorEvent } from './session-setup.ts';
import { aiInput, botlinkInput, handoffOf, knowledgeInput } from './session-turn.ts';

export const sessionMachine = sessionSetup.createMachine({
  id: 'session',
  context: ({ input }) => ({
    conversationId: input.conversationId,
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
    attendantRevision: 0,
  }),
  type: 'parallel',
  states: {
    attendant: {
      initial: 'bot',
      on: { end: '.ended' },
      states: {
        bot: {
          on: {
            wait: { guard: 'isChat', target: 'waiting', actions: ['toWaiting', { type: 'emitAttendant', params: { handledBy: 'waiting', reason: 'wait' } }] },
            takeover: { guard: 'isChat', target: 'agent', actions: ['toAgent', { type: 'emitAttendant', params: { handledBy: 'agent', reason: 'takeover' } }] },
            close: { guard: 'isChat', target: 'closed', actions: ['toBot', { type: 'emitAttendant', params: { handledBy: 'bot', reason: 'close' } }] },
          },
        },
        waiting: {
          on: {
            takeover: { target: 'agent', actions: ['toAgent', { type: 'emitAttendant', params: { handledBy: 'agent', reason: 'takeover' } }] },
            handback: { target: 'bot', actions: ['toBot', { type: 'emitAttendant', params: { handledBy: 'bot', reason: 'handback' } }] },
            close: { target: 'closed', actions: ['toBot', { type: 'emitAttendant', params: { handledBy: 'bot', reason: 'close' } }] },
            handback_due: { guard: 'handbackDue', target: 'bot', actions: ['toBot', { type: 'emitAttendant', params: { handledBy: 'bot', reason: 'handback_timeout' } }] },
          },
        },
        // One named user holds it; another's take-over finds no transition here (the runtime answers 409 taken).
        agent: {
          on: {
            handback: { target: 'bot', actions: ['toBot', { type: 'emitAttendant', params: { handledBy: 'bot', reason: 'handback' } }] },
            close: { target: 'closed', actions: ['toBot', { type: 'emitAttendant', params: { handledBy: 'bot', reason: 'close' } }] },
          },
        },
        // The team is done: the bot answers whatever the customer writes next (and the conversation is open again).
        closed: {
          on: {
            message: { target: 'bot', actions: { type: 'emitAttendant', params: { handledBy: 'bot', reason: 'reopened' } } },
            wait: { guard: 'isChat', target: 'waiting', actions: ['toWaiting', { type: 'emitAttendant', params: { handledBy: 'waiting', reason: 'wait' } }] },
            takeover: { guard: 'isChat', target: 'agent', actions: ['toAgent', { type: 'emitAttendant', params: { handledBy: 'agent', reason: 'takeover' } }] },
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
                        input: ({ context }) => ({
                          workspaceId: context.workspaceId,
                          channel: context.channel,
                          conversationId: context.conversationId,
                          turnId: context.turn!.id,
                          deadlineAt: context.turn!.botlinkDeadlineAt,
                        }),
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
                  channel: context.channel,
                  turnId: context.turn!.id,
                  conversationId: context.conversationId,
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
                  conversationId: context.conversationId,
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

export type SessionMachine = typeof sessionMachine;
