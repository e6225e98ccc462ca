/**
 * The session machine's pure turn helpers (machines/session.machine.ts): a new turn from a message, the history with
 * one more exchange, whether the customer asked for or was offered a person, and the inputs of the I/O actors built
 * from the context. No I/O: plain functions of the machine's context.
 */
import { CHANNEL_TIMEOUT_MS, MAX_TOOL_ROUNDS, PHONE_CHANNEL_TIMEOUT_MS } from '../src/limits.ts';
import { offersPerson, requestsPerson } from '../src/text/person-request.ts';
import {
  MAX_HISTORY_TURNS,
  type AiInput,
  type BotLinkInput,
  type BotLinkSummary,
  type HandoffRequest,
  type KnowledgeInput,
  type SessionContext,
  type SessionEvent,
  type TurnState,
} from './session-types.ts';

/** The history with one more exchange, cut to the turns the AI sees. */
export function withExchange(history: SessionContext['history'], message: string, reply: string): SessionContext['history'] {
  return [...history, { role: 'customer' as const, text: message }, { role: 'assistant' as const, text: reply }].slice(-2 * MAX_HISTORY_TURNS);
}

export function newTurn(context: SessionContext, event: Extract<SessionEvent, { type: 'message' }>): TurnState {
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
export function requestInWords(context: SessionContext, text: string): HandoffRequest | null {
  return requestsPerson(text, context.personOffered === true) ? { kind: 'human', requestedBy: 'customer' } : null;
}

/** Whether the customer was offered a person by this completed turn's reply (the fallback sentence offers one). */
export function offeredPerson(turn: TurnState): boolean {
  if (turn.handoff !== null || turn.reply === null) return false;
  return turn.reply.source === 'fallback' || offersPerson(turn.reply.text);
}

export const handledAnswer = (b: BotLinkSummary | null | undefined): boolean => b?.outcome === 'answer' && b.handled === true && !!b.reply;

/** The handoff a turn asks for: the customer's own request first, else the integrator's answer's (protocol §2.2). */
export function handoffOf(turn: TurnState): HandoffRequest | null {
  if (turn.requestedHandoff) return turn.requestedHandoff;
  const kind = turn.botlink?.outcome === 'answer' ? turn.botlink.handoff : null;
  return kind ? { kind, requestedBy: 'integrator' } : null;
}

/** Whose turn it is and what the customer said, as the integrator's and the AI's inputs both begin. */
function turnMessage(context: SessionContext) {
  const turn = context.turn!;
  const { workspaceId, conversationId, channel } = context;
  return { workspaceId, conversationId, turnId: turn.id, channel, language: turn.language, message: turn.message };
}

export function botlinkInput(context: SessionContext): BotLinkInput {
  return { ...turnMessage(context), customerPhone: context.customer.phone, deadlineAt: context.turn!.botlinkDeadlineAt! };
}

export function knowledgeInput(context: SessionContext): KnowledgeInput {
  return { workspaceId: context.workspaceId, turnId: context.turn!.id, message: context.turn!.message, language: context.turn!.language };
}

export function aiInput(context: SessionContext): AiInput {
  const turn = context.turn!;
  return {
    ...turnMessage(context),
    history: context.history,
    passages: turn.knowledge?.passages ?? [],
    integratorContext: turn.integratorContext,
    // protocol §8: after the third round the AI must answer without tools.
    tools: turn.rounds.length < MAX_TOOL_ROUNDS ? turn.tools : [],
    rounds: turn.rounds,
  };
}
