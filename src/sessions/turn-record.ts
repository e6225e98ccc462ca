/** How the session runtime writes what its machine holds: a turn as its row, the state as a name, a bot-link summary. */
import type { Actor } from 'xstate';
import type { sessionMachine } from '../../machines/session.machine.ts';
import { SESSION_MACHINE_VERSION, type BotLinkSummary, type HandledBy, type SessionContext, type TurnState } from '../../machines/session-types.ts';

/** The machine's state value as one dotted name ('gathering.botlink'), as stored and shown. */
export function stateName(value: unknown): string {
  if (typeof value === 'string') return value;
  const [head, rest] = Object.entries(value as Record<string, unknown>)[0] ?? ['unknown', null];
  return rest == null ? head : `${head}.${stateName(rest)}`;
}

type Snapshot = ReturnType<Actor<typeof sessionMachine>['getSnapshot']>;

/** The conversation region's state as one dotted name ('turn.gathering.botlink'), as stored and shown in `state`. */
export function conversationState(snapshot: Pick<Snapshot, 'value'>): string {
  return stateName((snapshot.value as { conversation?: unknown }).conversation ?? snapshot.value);
}

/**
 * Who handles the conversation (the attendant region) as stored and shown: `bot`, `waiting` or `agent`; a closed
 * conversation is the bot's again. `closed`: the team closed it (the session's status is `ended` until the customer
 * writes again).
 */
export function attendantOf(snapshot: Pick<Snapshot, 'value' | 'context'>): {
  handledBy: HandledBy;
  closed: boolean;
  agent: SessionContext['agent'];
  waitingSince: number | null;
  handbackAt: number | null;
  revision: number;
} {
  const region = (snapshot.value as { attendant?: unknown }).attendant;
  const { context } = snapshot;
  const handledBy: HandledBy = region === 'waiting' ? 'waiting' : region === 'agent' ? 'agent' : 'bot';
  return { handledBy, closed: region === 'closed', agent: context.agent ?? null, waitingSince: context.waitingSince ?? null, handbackAt: context.handbackAt ?? null, revision: context.attendantRevision ?? 0 };
}

/** The session row's attendant columns (migration 0019) for this snapshot. */
export function attendantColumns(snapshot: Pick<Snapshot, 'value' | 'context'>) {
  const h = attendantOf(snapshot);
  return {
    handledBy: h.handledBy,
    agentUserId: h.agent?.userId ?? null,
    waitingSince: h.waitingSince === null ? null : new Date(h.waitingSince).toISOString(),
    handbackAt: h.handbackAt === null ? null : new Date(h.handbackAt).toISOString(),
    attendantRevision: h.revision,
  };
}

/** A bot-link summary of a turn that asked nobody (no integration, no time left), or of an outcome. */
export function summary(partial: Partial<BotLinkSummary> & Pick<BotLinkSummary, 'outcome' | 'reason'>): BotLinkSummary {
  return { reply: null, handled: null, handoff: null, customer: {}, problems: [], httpStatus: null, latencyMs: 0, firstByteMs: null, ...partial };
}

/** A turn as its row in `session_turns` (db/repositories/sessions.repository.ts, TurnRecord). */
export function turnRecord(sessionId: string, turn: TurnState, status: 'completed' | 'cancelled', endedAt: number) {
  return {
    id: turn.id,
    session_id: sessionId,
    ordinal: turn.ordinal,
    status,
    language: turn.language,
    customer_message: turn.message,
    reply: turn.reply?.text ?? null,
    source: turn.reply?.source ?? null,
    botlink: turn.botlink,
    // The passages' ids and scores tell what the answer stood on; their text is in the knowledge base.
    knowledge: turn.knowledge && {
      confident: turn.knowledge.confident,
      tookMs: turn.knowledge.tookMs,
      passages: turn.knowledge.passages.map((p) => ({ id: p.id, title: p.title, score: p.score })),
    },
    tool_rounds: turn.rounds,
    handoff: turn.handoff,
    timings: turn.timings,
    errors: turn.errors,
    started_at: new Date(turn.startedAt),
    ended_at: new Date(endedAt),
  };
}

/** The session's row as saved with a turn end (db/repositories/sessions.repository.ts, SaveTurnInput's session). */
export function sessionRecord(id: string, actor: Pick<Actor<typeof sessionMachine>, 'getSnapshot' | 'getPersistedSnapshot'>, releaseLease: boolean) {
  const snapshot = actor.getSnapshot();
  const { context } = snapshot;
  return {
    id,
    state: conversationState(snapshot),
    status: snapshot.status === 'done' || attendantOf(snapshot).closed ? ('ended' as const) : ('active' as const),
    language: context.language,
    customer: context.customer,
    handoff: context.handoff,
    turnCount: context.turnCount,
    snapshot: persistedSnapshot(actor),
    machineVersion: SESSION_MACHINE_VERSION,
    releaseLease,
    ...attendantColumns(snapshot),
  };
}

/**
 * The actor's snapshot as stored. A turn end finds the actor idle, with no child actor and no history state: then the
 * persisted form is the snapshot's plain values, and the context as it is (it holds only JSON data, no actor
 * references, and XState replaces it rather than changing it). XState's own `getPersistedSnapshot` walks the whole
 * context looking for actor references and copies the snapshot's keys: about 4 % of the phone engine's CPU samples at 500 turns/s
 * (docs/performance.md). Any other moment (a cancelled turn still has its actors) goes to XState.
 */
export function persistedSnapshot(actor: Pick<Actor<typeof sessionMachine>, 'getSnapshot' | 'getPersistedSnapshot'>): unknown {
  const snapshot = actor.getSnapshot();
  const { status, value, context, output, error, children, historyValue } = snapshot as typeof snapshot & { historyValue?: Record<string, unknown> };
  if (Object.keys(children).length > 0 || (historyValue !== undefined && Object.keys(historyValue).length > 0)) return actor.getPersistedSnapshot();
  return { status, value, historyValue: {}, context, children: {}, output, error };
}
