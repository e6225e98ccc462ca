/**
 * The session machine's implementations (machines/session.machine.ts holds the statechart): its I/O actors, named
 * here and provided by the session runtime with `machine.provide`, its guards and its actions. Pure: the actions
 * assign to the context, emit to the runtime, or raise an event; none does I/O.
 */
import { assign, emit, enqueueActions, fromPromise, or, setup, stateIn } from 'xstate';
import { errorText } from '../src/errors.ts';
import { MAX_TOOL_ROUNDS } from '../src/limits.ts';
import { offersPerson } from '../src/text/person-request.ts';
import type { ToolOutcome, ToolSpec } from '../src/botlink/tools-types.ts';
import type {
  AiInput,
  AiStep,
  BotLinkInput,
  BotLinkSummary,
  HandoffInput,
  HandoffResult,
  KnowledgeInput,
  KnowledgeSummary,
  SessionContext,
  SessionEmitted,
  SessionEvent,
  SessionInput,
  AttendantChangeReason,
  HandledBy,
  ToolsInput,
  ToolsManifestInput,
} from './session-types.ts';
import { handledAnswer, handoffOf, newTurn, offeredPerson, withExchange } from './session-turn.ts';

const provided = (name: string) => () => Promise.reject(new Error(`The session runtime provides the ${name} actor.`));

export type DoneEvent<T> = { output: T };
export type ErrorEvent = { error: unknown };

export const sessionSetup = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as SessionInput,
    emitted: {} as SessionEmitted,
  },
  actors: {
    callBotLink: fromPromise<BotLinkSummary, BotLinkInput>(provided('callBotLink')),
    searchKnowledge: fromPromise<KnowledgeSummary, KnowledgeInput>(provided('searchKnowledge')),
    loadTools: fromPromise<ToolSpec[], ToolsManifestInput>(provided('loadTools')),
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
    personHandles: or([stateIn({ attendant: 'waiting' }), stateIn({ attendant: 'agent' })]),
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
    /** A turn that asked for a person on a chat channel: the attendant region goes to `waiting`. */
    waitIfAsked: enqueueActions(({ enqueue }, params: { output: HandoffResult }) => {
      const waiting = params.output.waiting;
      if (waiting) enqueue.raise({ type: 'wait', since: waiting.since, handbackAt: waiting.handbackAt });
    }),
    toWaiting: assign(({ context, event }) => {
      const e = event as Extract<SessionEvent, { type: 'wait' }>;
      return { agent: null, waitingSince: e.since, handbackAt: e.handbackAt, attendantRevision: context.attendantRevision + 1 };
    }),
    toAgent: assign(({ context, event }) => {
      const e = event as Extract<SessionEvent, { type: 'takeover' }>;
      return { agent: e.agent, waitingSince: null, handbackAt: null, attendantRevision: context.attendantRevision + 1 };
    }),
    toBot: assign(({ context }) => ({ agent: null, waitingSince: null, handbackAt: null, attendantRevision: context.attendantRevision + 1 })),
    emitAttendant: emit(({ context }, params: { handledBy: HandledBy; reason: AttendantChangeReason }) => ({
      type: 'attendant_changed' as const,
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
});
