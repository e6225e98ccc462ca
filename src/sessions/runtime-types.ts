/**
 * The shapes the session runtime (session-runtime.ts) answers and streams, and the live session its stages share
 * (session-events.ts, attendant-control.ts).
 */
import type { Actor } from 'xstate';
import type {
  AgentRef,
  AttendantChangeReason,
  BotLinkSummary,
  HandoffRequest,
  HandoffResult,
  ReplySource,
  SessionEvent,
  TurnState,
} from '../../machines/session-types.ts';
import type { GroupCommit } from '../../db/group-commit.ts';
import type { SaveTurnInput, SessionsRepository } from '../../db/repositories/sessions.repository.ts';
import type { HandledBy, MessageFrom } from '../../db/schema.ts';
import type { LiveBus } from '../events/live-bus.ts';
import type { Logger } from '../log.ts';
import type { Channel } from '../channels-and-handoffs.ts';
import type { InboxEvents } from './inbox-events.ts';
import type { ReplyRenderer } from './reply-renderer.ts';
import type { ProvidedSessionMachine, SessionActorDeps } from './session-actors.ts';
import type { TestConversation } from './test-conversation.ts';
import type { createSessionLeases, LeasedSession } from './session-leases.ts';
import type { SpokenTurn } from './spoken-turn.ts';

export interface SessionRuntimeDeps extends Omit<SessionActorDeps, 'now' | 'sessions' | 'teamAvailable'> {
  sessions: SessionsRepository;
  /** Each channel's renderer (src/channels/renderers.ts): the runtime never branches on the channel's name. */
  renderers: Record<Channel, ReplyRenderer>;
  logger: Logger;
  /** Live events across engines (src/events/live-bus.ts); absent: this process's listeners only. */
  live?: Pick<LiveBus, 'publish' | 'subscribe'>;
  /** Names this process in the lease column; default a random id. */
  instanceId?: string;
  idleMs?: number;
  /** The session lease; default LEASE_MS (src/leases/durations.ts), renewed every third of it while a turn runs. */
  leaseMs?: number;
  leaseWaitMs?: number;
  /**
   * How long a turn's write waits for other sessions' writes to share its statement (db/group-commit.ts `lingerMs`);
   * default 0. The embedded engine sets EMBEDDED_TURN_WRITE_LINGER_MS (src/admission/limits.ts).
   */
  turnWriteLingerMs?: number;
  now?: () => number;
  /** Whether the team can take a person now (src/sessions/handoff.ts); absent: the manual switch alone. */
  teamAvailable?: (workspaceId: string) => Promise<boolean>;
  /** Where changes of the team's inbox go (src/sessions/inbox-events.ts); absent: nowhere. */
  inbox?: Pick<InboxEvents, 'publish'>;
}

export interface InboundMessage {
  workspaceId: string;
  channel: Channel;
  /** The conversation's id on its channel: the call id, the WhatsApp conversation id, the web chat id. */
  externalId: string;
  text: string;
  language?: string;
  customerPhone?: string | null;
  /** The turn's id; default the spoken turn's, else a new one. */
  turnId?: string;
  /**
   * The phone: the turn's one owner of what the caller hears (spoken-turn.ts). The reply is spoken through it piece by
   * piece as soon as each is ready (an LLM that streams writes the answer sentence by sentence); the turn's result
   * then carries the rest in `unsent`.
   */
  speech?: SpokenTurn;
  /** The customer asked for a person (the phone's key 0, the web chat's escalation): the turn is the handoff. */
  handoff?: HandoffRequest;
  /** A test conversation of a scenario run (docs/scenarios.md): marked as such, and asking whom the scenario says. */
  test?: TestConversation;
}

export type TurnResult =
  | {
      cancelled: false;
      sessionId: string;
      turnId: string;
      /** Rendered for the channel: spoken form on the phone, WhatsApp text, web chat text. The whole reply. */
      text: string;
      /** The part of `text` not yet spoken through the message's `speech` (all of it when nothing was streamed). */
      unsent: string;
      source: ReplySource;
      language: string;
      handoff: HandoffResult | null;
      /**
       * A person handles the conversation (waiting or agent): the message was stored and shown to the team, and
       * nobody answered it (`text` is empty).
       */
      held?: true;
    }
  | { cancelled: true; sessionId: string; turnId: string; reason: 'barge_in' | 'interrupt' | 'end' };

/** A message of a chat conversation as the API and the live streams show it. */
export interface ConversationMessage {
  id: string;
  from: MessageFrom;
  text: string;
  at: string;
  source?: string | null;
  agent?: { user_id: string; email: string; name: string | null } | null;
  /** WhatsApp agent messages: the delivery status (queued, sent, delivered, read, failed). */
  status?: string;
}

/** What a change of the attendant region did (`control`). */
export interface AttendantOutcome {
  sessionId: string;
  /** The event changed who handles the conversation (and it was written). */
  applied: boolean;
  handledBy: HandledBy;
  closed: boolean;
  agent: AgentRef | null;
  waitingSince: number | null;
  language: string;
  /** Why it changed, when it did. */
  reason: AttendantChangeReason | null;
}

/** The events of the attendant region a user or the sweep sends (machines/session-types.ts). */
export type AttendantEvent = Extract<SessionEvent, { type: 'takeover' | 'handback' | 'close' | 'handback_due' }>;

export type SessionStreamEvent =
  | { type: 'turn_started'; sessionId: string; turnId: string; message: string; at: string }
  /** A sentence of a streamed reply, as it was spoken (the phone with an LLM); the `reply` event still follows. */
  | { type: 'reply_piece'; sessionId: string; turnId: string; text: string }
  | { type: 'reply'; sessionId: string; turnId: string; text: string; source: ReplySource; handoff: HandoffResult | null }
  | { type: 'turn_completed'; sessionId: string; turnId: string; timings: Record<string, number>; botlink: BotLinkSummary | null }
  | { type: 'turn_cancelled'; sessionId: string; turnId: string; reason: string }
  | { type: 'state'; sessionId: string; state: string; status: 'active' | 'ended' }
  /** Who handles the conversation changed (docs/architecture.md, "Who handles a conversation"). */
  | { type: 'handled_by'; sessionId: string; handled_by: HandledBy; agent: ConversationMessage['agent']; waiting_since: string | null; reason: AttendantChangeReason }
  /** A message of a chat conversation: the customer's, the bot's or an agent's. */
  | { type: 'message'; sessionId: string; message: ConversationMessage }
  /** An agent's WhatsApp message changed its delivery status (Meta's status webhooks, or the send's answer). */
  | { type: 'message_status'; sessionId: string; message_id: string; status: string; failure: { http_status: number | null; code: number | null; reason: string | null } | null }
  /** The web chat visitor is typing (docs/webchat.md, "Typing"): shown until `until` unless another comes. */
  | { type: 'typing'; sessionId: string; from: 'visitor'; until: string }
  /** A private note of the team (src/inbox/notes.ts), new or edited: on the team's streams only, never the customer's. */
  | {
      type: 'note';
      sessionId: string;
      note: { id: string; from: 'note'; text: string; at: string; author: { user_id: string | null; name: string }; mentions: { user_id: string; name: string }[]; edited_at: string | null };
    }
  /** A private note was deleted. */
  | { type: 'note_deleted'; sessionId: string; note_id: string };

export type SessionActor = Actor<ProvidedSessionMachine>;

/** Answers a message's turn; `fail`: the message could not be stored (the channel tries it again). */
export type Waiter = ((result: TurnResult) => void) & { fail?: (err: Error) => void };

/** One live session of this process: its actor, the turns waiting for their reply, what is not written yet. */
export interface Live extends LeasedSession {
  channel: Channel;
  actor: SessionActor;
  lastActivity: number;
  waiters: Map<string, Waiter>;
  completed: TurnState | null;
  /** The running turn's spoken turn, when its message came with one (`speech`: the phone). */
  speech: SpokenTurn | null;
  /** The rendered reply of each turn that replied and is not saved yet (stored as the bot's message on chat channels). */
  replies: Map<string, { text: string; source: ReplySource; at: number }>;
  /** A scenario's test conversation (docs/scenarios.md): kept from the team's side; null for a customer's. */
  test: TestConversation | null;
}

/** The runtime's state in one place, shared by its stages (the registry, the actor's events, the attendant changes). */
export interface RuntimeCore {
  readonly deps: SessionRuntimeDeps;
  readonly now: () => number;
  /** This process's name in the lease column. */
  readonly owner: string;
  /** One live session per conversation key (`workspace, channel, external id`). */
  readonly live: Map<string, Live>;
  /** Turn ends of all sessions, written in groups (db/group-commit.ts). */
  readonly turnWrites: GroupCommit<SaveTurnInput>;
  readonly leases: ReturnType<typeof createSessionLeases<Live>>;
  /** To the live streams of every engine (or this process's listeners). */
  publish(sessionId: string, event: SessionStreamEvent): void;
  /** Chains a write of the session after its earlier ones (a failure is logged, never thrown). */
  enqueue(entry: Live, work: () => Promise<void>): Promise<void>;
  /** The live session, restored from the database or created when it is not live here. */
  load(workspaceId: string, channel: Channel, externalId: string, message: InboundMessage | null): Promise<Live>;
}

/** The agent as the API shows it. */
export function agentView(agent: AgentRef | null): { user_id: string; email: string; name: string | null } | null {
  return agent ? { user_id: agent.userId, email: agent.email, name: agent.name } : null;
}
