/**
 * The data a session actor holds and the shapes of its I/O actors. Everything here is plain JSON, so a snapshot can
 * be persisted and restored as it is.
 */
import type { EndpointWait } from '../src/botlink/endpoint-health.ts';
import type { AiStep, AiStepInput, ConversationTurn } from '../src/ai/types.ts';
import type { Channel } from '../src/channels-and-handoffs.ts';
import type { ResponseProblem } from '../src/botlink/channel-response.ts';
import type { Handoff } from '../src/channels-and-handoffs.ts';
import type { ToolInvocation, ToolOutcome, ToolSpec } from '../src/botlink/tools-types.ts';
import type { KnowledgePassage } from '../src/knowledge/types.ts';

/**
 * Bumped whenever a change makes older persisted snapshots unreadable. A snapshot of an older version is upgraded when
 * it is restored (src/sessions/snapshot-upgrade.ts: v1 had no attendant region, v2 called the conversation's channel
 * id `sessionId`, v3 called the attendant region `handler`). v1 and v2 are upgraded only when idle: caught mid-turn,
 * the session restarts idle.
 */
export const SESSION_MACHINE_VERSION = 4;
/** How many earlier turns the AI sees. */
export const MAX_HISTORY_TURNS = 10;

export type ReplySource = 'integrator' | 'ai' | 'knowledge_base' | 'fallback';

/** What the Bot Link gave for one turn, kept small and serialisable. */
export interface BotLinkSummary {
  outcome: 'answer' | 'no_answer';
  /** 'answer' or why not (status, timeout, …); 'not_configured' when the workspace has no integration. */
  reason: string;
  reply: string | null;
  handled: boolean | null;
  handoff: Handoff | null;
  customer: { email?: string; name?: string };
  problems: ResponseProblem[];
  httpStatus: number | null;
  latencyMs: number;
  firstByteMs: number | null;
  /** What the turn did about the endpoint's health (src/botlink/endpoint-health.ts); absent before health existed. */
  endpoint?: EndpointWait;
}

export interface KnowledgeSummary {
  passages: KnowledgePassage[];
  confident: boolean;
  tookMs: number;
}

export interface ToolRound {
  calls: ToolInvocation[];
  outcomes: ToolOutcome[];
}

/**
 * Who asked for a handoff: the integrator's reply (protocol §2.2), or the customer (the phone's key 0, the chat's button,
 * their own words on any channel, or a yes to the bot's offer of a person).
 */
export type HandoffRequester = 'integrator' | 'customer';

/**
 * A customer's own request for a person: carried by their message (the phone's key 0, the web chat's button), or found
 * in their words by the session machine.
 */
export interface HandoffRequest {
  kind: Handoff;
  requestedBy: HandoffRequester;
}

export interface HandoffResult {
  kind: Handoff;
  /** A person takes over now (phone, team available). */
  connected: boolean;
  /** What the customer is told; '' when the reply already said it (src/sessions/handoff.ts). */
  sentence: string;
  /** Absent in turns stored before it was recorded: those were the integrator's. */
  requestedBy?: HandoffRequester;
  /**
   * WhatsApp and web chat: a person was asked for, so the conversation waits for a colleague in the inbox (the
   * statechart's `attendant` region goes to `waiting`); `handbackAt` (ms) is when it goes back to the bot when nobody
   * took it (the workspace's handback_after_minutes), null: never.
   */
  waiting?: { since: number; handbackAt: number | null };
}

/** Who handles the conversation: the statechart's `attendant` region (docs/architecture.md, "Who handles a conversation"). */
export type HandledBy = 'bot' | 'waiting' | 'agent';

/** The person holding a conversation. */
export interface AgentRef {
  userId: string;
  email: string;
  name: string | null;
}

export interface TurnState {
  id: string;
  /** 1 for the session's first turn; a barged-in turn and its successor have their own numbers. */
  ordinal: number;
  message: string;
  language: string;
  /** ms since epoch. */
  startedAt: number;
  /** The moment the integrator is given up on (protocol §8), kept as a timestamp so a restored turn honours it. */
  botlinkDeadlineAt: number | null;
  botlink: BotLinkSummary | null;
  knowledge: KnowledgeSummary | null;
  tools: ToolSpec[];
  rounds: ToolRound[];
  /** protocol §1.3: with handled false the reply is extra context for the AI only. */
  integratorContext: string | null;
  reply: { text: string; source: ReplySource } | null;
  /** The customer asked for a person with this message: the turn goes straight to the handoff. */
  requestedHandoff?: HandoffRequest | null;
  handoff: HandoffResult | null;
  /** Where the time went, in ms from the start of the turn. */
  timings: Record<string, number>;
  errors: string[];
}

export interface SessionContext {
  /**
   * The conversation's id on its channel (the call SID, the WhatsApp sender, the web chat conversation): the
   * `session_id` the integrator sees (protocol §2.1). Our own row id of a session (`sessionId` everywhere outside the
   * machine) is never in the machine; the runtime holds it.
   */
  conversationId: string;
  workspaceId: string;
  channel: Channel;
  language: string;
  customer: { phone: string | null; email: string | null; name: string | null };
  history: ConversationTurn[];
  turnCount: number;
  handoff: HandoffResult | null;
  /**
   * The last reply offered the customer a person (the fallback sentence "shall I connect you with the team?" does), so
   * a plain yes as the very next message asks for one (src/text/person-request.ts). Absent in older snapshots: no offer.
   */
  personOffered?: boolean;
  turn: TurnState | null;
  /** The person holding the conversation while the attendant region is in `agent`; null otherwise. */
  agent: AgentRef | null;
  /** When the conversation began waiting for a person (ms); null when nobody is waited for. */
  waitingSince: number | null;
  /** When a waiting conversation goes back to the bot (ms), a deadline kept as a timestamp; null: never. */
  handbackAt: number | null;
  /** Bumped by every change of the attendant region, so a change is written only over the one it was made from. */
  attendantRevision: number;
}

export interface SessionInput {
  /** The conversation's id on its channel (see SessionContext). */
  conversationId: string;
  workspaceId: string;
  channel: Channel;
  language?: string;
  customerPhone?: string | null;
}

export type SessionEvent =
  /** A customer message (a final prompt on the phone). A message during a running turn cancels that turn (barge-in). */
  | { type: 'message'; turnId: string; text: string; language?: string; at: number; handoff?: HandoffRequest }
  /**
   * Phone: the caller spoke over the reply; `spoken` is what was heard of it. Cancels a running turn. `midTurn`: the
   * running turn had already begun to speak its reply (streaming), so `spoken` belongs to it, not to the last reply.
   */
  | { type: 'interrupt'; spoken?: string; midTurn?: boolean }
  /** The conversation is over (call ended, socket dropped). */
  | { type: 'end' }
  /** A user takes the conversation over (from bot or waiting; chat channels only). */
  | { type: 'takeover'; agent: AgentRef; at: number }
  /** The holder (or anyone, while waiting) gives the conversation back to the bot. */
  | { type: 'handback'; at: number }
  /** The team is done with the conversation: the bot answers whatever the customer writes next. */
  | { type: 'close'; at: number }
  /** The sweep found the waiting conversation's hand-back deadline passed (`at`, ms). */
  | { type: 'handback_due'; at: number }
  /** Raised by the turn that asked for a person on a chat channel: the conversation waits for a colleague. */
  | { type: 'wait'; since: number; handbackAt: number | null };

/** What the actor tells the runtime; the runtime delivers, records and streams it. */
export type SessionEmitted =
  /** `text`: the answer and the handoff sentence together; `answer`: the answer alone. */
  | { type: 'reply'; turnId: string; text: string; answer: string; source: ReplySource; language: string; handoff: HandoffResult | null }
  | { type: 'turn_completed'; turn: TurnState }
  | { type: 'turn_cancelled'; turn: TurnState; reason: 'barge_in' | 'interrupt' | 'end' }
  /** A customer message while a person handles the conversation: stored and shown, answered by nobody. */
  | { type: 'held'; turnId: string; text: string; at: number }
  /** The attendant region changed (who handles the conversation). */
  | { type: 'attendant_changed'; handledBy: HandledBy; agent: AgentRef | null; waitingSince: number | null; reason: AttendantChangeReason };

export type AttendantChangeReason = 'wait' | 'takeover' | 'handback' | 'close' | 'handback_timeout' | 'reopened';

export interface BotLinkInput {
  workspaceId: string;
  /** The running turn's id, for its trace (src/tracing.ts); absent in inputs restored from older snapshots. */
  turnId?: string;
  conversationId: string;
  channel: Channel;
  message: string;
  language: string;
  customerPhone: string | null;
  deadlineAt: number;
}

export interface KnowledgeInput {
  workspaceId: string;
  /** The running turn's id, for its trace (src/tracing.ts); absent in inputs restored from older snapshots. */
  turnId?: string;
  message: string;
  language: string;
}

/** What the AI port takes (its signal comes from the invoking state), plus whose turn it is. */
export type AiInput = Omit<AiStepInput, 'signal' | 'workspaceName' | 'onText'> & { workspaceId: string; conversationId: string; turnId: string };

/** The tools' manifest for a turn (the phone's gathering). */
export interface ToolsManifestInput {
  workspaceId: string;
  /** The conversation (its channel and its id as the integrator sees it); absent in inputs restored from older snapshots. */
  channel?: Channel;
  conversationId?: string;
  turnId?: string;
  deadlineAt: number | null;
}

export interface ToolsInput {
  workspaceId: string;
  /** The conversation's channel; absent in inputs restored from older snapshots. */
  channel?: Channel;
  /** The running turn's id, for its trace (src/tracing.ts); absent in inputs restored from older snapshots. */
  turnId?: string;
  conversationId: string;
  language: string;
  calls: ToolInvocation[];
}

export interface HandoffInput {
  workspaceId: string;
  /** The running turn's id, for its trace (src/tracing.ts); absent in inputs restored from older snapshots. */
  turnId?: string;
  conversationId: string;
  channel: Channel;
  language: string;
  kind: Handoff;
  requestedBy: HandoffRequester;
  message: string;
  /** The reply given with the handoff, so the handoff is announced once (src/sessions/handoff.ts). */
  reply: string;
}

export type { AiStep };
