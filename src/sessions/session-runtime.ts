// Over 400 lines: the registry and its lifecycle (open, route a message, passivate, stop) share the live map.
/**
 * The session runtime: one live actor per conversation in this process (a registry), persisted to PostgreSQL at
 * every turn end, passivated when idle and restored on the next message. Across processes a turn runs only where
 * the session's database lease is held, so two engines on one PostgreSQL never run one session's turn at once.
 *
 * It renders replies for their channel and streams what happens to listeners (the dashboard's SSE, the channels). The
 * machine's I/O actors are in session-actors.ts, the lease rounds in session-leases.ts, the handoff rule in handoff.ts.
 */
import { randomUUID } from 'node:crypto';
import { createActor, type Actor } from 'xstate';
import {
  SESSION_MACHINE_VERSION,
  type AgentRef,
  type HandlerChangeReason,
  type HandoffRequest,
  type HandoffResult,
  type BotLinkSummary,
  type ReplySource,
  type SessionEmitted,
  type SessionEvent,
  type TurnState,
} from '../../machines/session-types.ts';
import { groupCommit } from '../../db/group-commit.ts';
import type { MessageRecord, SaveTurnInput, SessionsRepository } from '../../db/repositories/sessions.repository.ts';
import type { HandledBy, MessageFrom } from '../../db/schema.ts';
import { phrase } from '../ai/phrases.ts';
import type { Channel } from '../words.ts';
import type { LiveBus } from '../events/live-bus.ts';
import type { Logger } from '../log.ts';
import { createReplyStream, type ReplyStream } from './reply-stream.ts';
import type { ReplyRenderer } from './reply-renderer.ts';
import { provideSessionMachine, type ProvidedSessionMachine, type SessionActorDeps } from './session-actors.ts';
import { createSessionLeases, SESSION_HELD_LEASE_MS, type LeasedSession } from './session-leases.ts';
import { conversationState, handlerColumns, handlerOf, sessionRecord, turnRecord } from './turn-record.ts';
import type { InboxEvents } from './inbox-events.ts';

export type { Credentials } from './session-actors.ts';
export { SESSION_HELD_LEASE_MS, SESSION_LEASE_MS, SESSION_LEASE_WAIT_MS } from './session-leases.ts';

/** How long an idle session stays live before it is passivated (state kept in the database). */
export const SESSION_IDLE_MS = 5 * 60_000;
/**
 * A phone session still open in the database but quiet this long with no lease in force is ended by the sweep
 * (`endAbandonedCalls`): nobody will continue it. Long enough for a call handed back on SIGTERM to reconnect.
 */
export const SESSION_ABANDONED_CALL_MS = 5 * 60_000;

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
  leaseMs?: number;
  leaseWaitMs?: number;
  heldLeaseMs?: number;
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
  turnId?: string;
  /**
   * Streaming (the phone): each piece of the reply, rendered for speech, as soon as it is ready (an LLM that streams
   * writes the answer sentence by sentence). The turn's result then carries the rest in `unsent`.
   */
  onText?: (text: string) => void;
  /** The customer asked for a person (the phone's key 0, the web chat's escalation): the turn is the handoff. */
  handoff?: HandoffRequest;
}

export type TurnResult =
  | {
      cancelled: false;
      sessionId: string;
      turnId: string;
      /** Rendered for the channel: spoken form on the phone, WhatsApp text, web chat text. The whole reply. */
      text: string;
      /** The part of `text` not yet given to the message's `onText` (all of it when nothing was streamed). */
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

/** What a change of the handler region did (`control`). */
export interface HandlerOutcome {
  sessionId: string;
  /** The event changed who handles the conversation (and it was written). */
  applied: boolean;
  handledBy: HandledBy;
  closed: boolean;
  agent: AgentRef | null;
  waitingSince: number | null;
  language: string;
  /** Why it changed, when it did. */
  reason: HandlerChangeReason | null;
}

/** The events of the handler region a user or the sweep sends (machines/session-types.ts). */
export type HandlerEvent = Extract<SessionEvent, { type: 'takeover' | 'handback' | 'close' | 'handback_due' }>;

/** How long a change of the handler region waits for this process's running turn of the session to end. */
const CONTROL_WAIT_MS = 30_000;

export type SessionStreamEvent =
  | { type: 'turn_started'; sessionId: string; turnId: string; message: string; at: string }
  /** A sentence of a streamed reply, as it was spoken (the phone with an LLM); the `reply` event still follows. */
  | { type: 'reply_piece'; sessionId: string; turnId: string; text: string }
  | { type: 'reply'; sessionId: string; turnId: string; text: string; source: ReplySource; handoff: HandoffResult | null }
  | { type: 'turn_completed'; sessionId: string; turnId: string; timings: Record<string, number>; botlink: BotLinkSummary | null }
  | { type: 'turn_cancelled'; sessionId: string; turnId: string; reason: string }
  | { type: 'state'; sessionId: string; state: string; status: 'active' | 'ended' }
  /** Who handles the conversation changed (docs/architecture.md, "Who handles a conversation"). */
  | { type: 'handled_by'; sessionId: string; handled_by: HandledBy; agent: ConversationMessage['agent']; waiting_since: string | null; reason: HandlerChangeReason }
  /** A message of a chat conversation: the customer's, the bot's or an agent's. */
  | { type: 'message'; sessionId: string; message: ConversationMessage }
  /** An agent's WhatsApp message changed its delivery status (Meta's status webhooks, or the send's answer). */
  | { type: 'message_status'; sessionId: string; message_id: string; status: string; failure: { http_status: number | null; code: number | null; reason: string | null } | null };

type SessionActor = Actor<ProvidedSessionMachine>;

/** Answers a message's turn; `fail`: the message could not be stored (the channel tries it again). */
type Waiter = ((result: TurnResult) => void) & { fail?: (err: Error) => void };

interface Live extends LeasedSession {
  channel: Channel;
  actor: SessionActor;
  lastActivity: number;
  waiters: Map<string, Waiter>;
  completed: TurnState | null;
  /** The running turn's streamed reply, when its message asked for one (`onText`). */
  stream: ReplyStream | null;
  /** The rendered reply of each turn that replied and is not saved yet (stored as the bot's message on chat channels). */
  replies: Map<string, { text: string; source: ReplySource; at: number }>;
}

/** The agent as the API shows it. */
export function agentView(agent: AgentRef | null): { user_id: string; email: string; name: string | null } | null {
  return agent ? { user_id: agent.userId, email: agent.email, name: agent.name } : null;
}

export function createSessionRuntime(deps: SessionRuntimeDeps) {
  const now = deps.now ?? Date.now;
  const owner = deps.instanceId ?? `engine-${randomUUID()}`;
  const idleMs = deps.idleMs ?? SESSION_IDLE_MS;
  const heldLeaseMs = deps.heldLeaseMs ?? SESSION_HELD_LEASE_MS;
  const live = new Map<string, Live>();
  // Turn ends of all sessions are written in groups: under load one statement stores many turns (db/group-commit.ts).
  const turnWrites = groupCommit<SaveTurnInput>({ write: (batch) => deps.sessions.saveTurns(batch), lingerMs: deps.turnWriteLingerMs ?? 0 });
  const loading = new Map<string, Promise<Live>>();
  const listeners = new Map<string, Set<(event: SessionStreamEvent) => void>>();
  let stopping = false;

  const teamAvailable = deps.teamAvailable ?? ((workspaceId: string) => deps.sessions.teamAvailable(workspaceId));
  const machine = provideSessionMachine({ ...deps, now, teamAvailable }, (workspaceId, channel, externalId, turnId) => {
    const entry = live.get(key(workspaceId, channel, externalId));
    if (!entry) return null;
    const stream = turnId !== undefined && entry.stream?.turnId === turnId ? entry.stream : null;
    return {
      sessionId: entry.id,
      stream: stream && {
        speak: (piece, language, signal) => speak(entry, stream, piece, language, signal),
        record: (step) => stream.record(step),
      },
    };
  });
  const leases = createSessionLeases<Live>({
    sessions: deps.sessions,
    owner,
    logger: deps.logger,
    now,
    ...(deps.leaseMs === undefined ? {} : { leaseMs: deps.leaseMs }),
    ...(deps.leaseWaitMs === undefined ? {} : { leaseWaitMs: deps.leaseWaitMs }),
    heldLeaseMs,
    held: () => [...live.values()].filter((e) => e.held),
    reload(entry, row) {
      entry.actor.stop();
      // A turn still waiting on the stale copy cannot be answered from it; the newer state answers the next message.
      for (const [turnId, resolve] of entry.waiters) resolve({ cancelled: true, sessionId: entry.id, turnId, reason: 'barge_in' });
      entry.waiters.clear();
      const fresh = createLive(entry.id, entry.key, entry.workspaceId, entry.channel, row.external_id, row.snapshot, row.machine_version, null);
      live.set(entry.key, fresh);
      return fresh;
    },
  });

  function publish(sessionId: string, event: SessionStreamEvent): void {
    // Through the live bus, the streams of every engine get it (src/events/live-bus.ts); without one, this process's.
    if (deps.live) return deps.live.publish('session', sessionId, event);
    for (const listener of listeners.get(sessionId) ?? []) {
      try {
        listener(event);
      } catch (err) {
        deps.logger.warn({ err, sessionId }, 'session listener failed');
      }
    }
  }

  /** The chat messages of a turn end (the customer's and the bot's reply); none on the phone. */
  function turnMessages(entry: Live, turn: TurnState, completed: boolean): MessageRecord[] {
    const reply = entry.replies.get(turn.id);
    entry.replies.delete(turn.id);
    if (entry.channel === 'phone') return [];
    const messages: MessageRecord[] = [];
    if (turn.message.trim() !== '') {
      messages.push({ id: randomUUID(), session_id: entry.id, from: 'customer', text: turn.message, source: null, agent_user_id: null, turn_id: turn.id, outbound_id: null, at: new Date(turn.startedAt).toISOString() });
    }
    if (completed && reply && reply.text !== '') {
      messages.push({ id: randomUUID(), session_id: entry.id, from: 'bot', text: reply.text, source: reply.source, agent_user_id: null, turn_id: turn.id, outbound_id: null, at: new Date(Math.max(reply.at, turn.startedAt + 1)).toISOString() });
    }
    return messages;
  }

  /** Messages written: shown live on the session's stream and in the workspace's inbox. */
  function announceMessages(entry: Live, messages: readonly MessageRecord[]): void {
    for (const m of messages) {
      publish(entry.id, { type: 'message', sessionId: entry.id, message: { id: m.id, from: m.from, text: m.text, at: m.at, source: m.source } });
    }
    const last = messages.at(-1);
    if (last) inboxChange(entry, 'message', { from: last.from, text: last.text, at: last.at });
  }

  function inboxChange(entry: Live, reason: 'handled_by' | 'message', lastMessage: { from: MessageFrom; text: string; at: string } | null): void {
    const h = handlerOf(entry.actor.getSnapshot());
    deps.inbox?.publish({
      workspaceId: entry.workspaceId,
      sessionId: entry.id,
      channel: entry.channel,
      reason,
      handledBy: h.handledBy,
      agent: agentView(h.agent) ?? null,
      waitingSince: h.waitingSince === null ? null : new Date(h.waitingSince).toISOString(),
      lastMessage,
    });
  }

  function render(entry: Live, e: Extract<SessionEmitted, { type: 'reply' }>): string {
    const text = e.text.trim().length > 0 ? e.text : phrase('dont_know', e.language);
    return deps.renderers[entry.channel]({ text, source: e.source, language: e.language });
  }

  /** One streamed piece of the answer, rendered for speech, to the channel (unless the turn is over or the room is). */
  function speak(entry: Live, stream: ReplyStream, piece: string, language: string, signal: AbortSignal): void {
    if (signal.aborted || entry.stream !== stream) return;
    const text = stream.speak(piece, language);
    if (text === null) return;
    try {
      stream.onText(text);
    } catch (err) {
      deps.logger.warn({ err, sessionId: entry.id }, 'a streamed reply listener failed');
    }
    publish(entry.id, { type: 'reply_piece', sessionId: entry.id, turnId: stream.turnId, text });
  }

  function enqueue(entry: Live, work: () => Promise<void>): Promise<void> {
    entry.writes = entry.writes.then(work).catch((err: unknown) => deps.logger.error({ err, sessionId: entry.id }, 'session write failed'));
    return entry.writes;
  }

  function attach(entry: Live): void {
    const { actor } = entry;
    const log = deps.logger.child({ sessionId: entry.id, workspaceId: entry.workspaceId });
    actor.on('reply', (e) => {
      const stream = entry.stream?.turnId === e.turnId && entry.stream.sent.length > 0 ? entry.stream : null;
      entry.stream = null;
      const unsent = stream ? stream.rest(e) : render(entry, e);
      const text = stream ? [...stream.sent, unsent].filter((t) => t !== '').join(' ') : unsent;
      publish(entry.id, { type: 'reply', sessionId: entry.id, turnId: e.turnId, text, source: e.source, handoff: e.handoff });
      // Kept until the turn is written (turnMessages); the phone keeps none: its turns are the record.
      if (entry.channel !== 'phone') entry.replies.set(e.turnId, { text, source: e.source, at: now() });
      const { source, language, handoff } = e;
      const result = { cancelled: false as const, sessionId: entry.id, turnId: e.turnId, text, unsent, source, language, handoff };
      entry.waiters.get(e.turnId)?.(result);
      entry.waiters.delete(e.turnId);
    });
    actor.on('turn_completed', (e) => {
      entry.completed = e.turn;
    });
    actor.on('turn_cancelled', (e) => {
      if (entry.stream?.turnId === e.turn.id) entry.stream = null;
      entry.waiters.get(e.turn.id)?.({ cancelled: true, sessionId: entry.id, turnId: e.turn.id, reason: e.reason });
      entry.waiters.delete(e.turn.id);
      publish(entry.id, { type: 'turn_cancelled', sessionId: entry.id, turnId: e.turn.id, reason: e.reason });
      const messages = turnMessages(entry, e.turn, false);
      void enqueue(entry, () => turnWrites.add({ turn: turnRecord(entry.id, e.turn, 'cancelled', now()), session: sessionRecord(entry.id, entry.actor, false), messages })).then(() =>
        announceMessages(entry, messages),
      );
    });
    // A customer message while a person handles the conversation: stored, shown, and the lease given back.
    actor.on('held', (e) => {
      const language = actor.getSnapshot().context.language;
      const waiter = entry.waiters.get(e.turnId);
      entry.waiters.delete(e.turnId);
      const message: MessageRecord = { id: randomUUID(), session_id: entry.id, from: 'customer', text: e.text, source: null, agent_user_id: null, turn_id: e.turnId, outbound_id: null, at: new Date(e.at).toISOString() };
      // Answered once it is stored: the channel acknowledges a message the team will see, or tries it again.
      let failure: Error | null = null;
      void enqueue(entry, () =>
        deps.sessions.addMessage(message, entry.held ? null : owner).catch((err: unknown) => {
          failure = err instanceof Error ? err : new Error(String(err));
          return deps.sessions.releaseLease(entry.id, owner).catch(() => undefined);
        }),
      ).then(() => {
        if (failure) return waiter?.fail?.(failure);
        waiter?.({ cancelled: false, held: true, sessionId: entry.id, turnId: e.turnId, text: '', unsent: '', source: 'fallback', language, handoff: null });
        announceMessages(entry, [message]);
      });
    });
    actor.on('handler_changed', (e) => {
      publish(entry.id, {
        type: 'handled_by',
        sessionId: entry.id,
        handled_by: e.handledBy,
        agent: agentView(e.agent),
        waiting_since: e.waitingSince === null ? null : new Date(e.waitingSince).toISOString(),
        reason: e.reason,
      });
    });
    // A turn is persisted once the machine has settled in idle (history updated, turn cleared).
    actor.subscribe({
      next(snapshot) {
        if (snapshot.status === 'done') {
          void enqueue(entry, () => deps.sessions.saveSnapshot({ id: entry.id, state: 'ended', status: 'ended', snapshot: actor.getPersistedSnapshot(), machineVersion: SESSION_MACHINE_VERSION }));
          publish(entry.id, { type: 'state', sessionId: entry.id, state: 'ended', status: 'ended' });
          return;
        }
        const turn = entry.completed;
        if (turn && snapshot.matches({ conversation: 'idle' })) {
          entry.completed = null;
          publish(entry.id, { type: 'turn_completed', sessionId: entry.id, turnId: turn.id, timings: turn.timings, botlink: turn.botlink });
          const messages = turnMessages(entry, turn, true);
          const waits = turn.handoff?.waiting !== undefined;
          void enqueue(entry, () => turnWrites.add({ turn: turnRecord(entry.id, turn, 'completed', now()), session: sessionRecord(entry.id, entry.actor, !entry.held), messages })).then(() => {
            announceMessages(entry, messages);
            if (waits) inboxChange(entry, 'handled_by', null);
          });
        }
      },
      // Every invoke has onError, so this is the last line: log, answer waiters, and drop the actor (the database
      // keeps the last good state).
      error(err) {
        log.error({ err }, 'session actor failed');
        for (const [turnId, resolve] of entry.waiters) {
          const text = phrase('dont_know', actor.getSnapshot().context.language);
          resolve({ cancelled: false, sessionId: entry.id, turnId, text, unsent: text, source: 'fallback', language: actor.getSnapshot().context.language, handoff: null });
        }
        entry.waiters.clear();
        live.delete(entry.key);
        void enqueue(entry, () => deps.sessions.releaseLease(entry.id, owner));
      },
    });
  }

  async function load(workspaceId: string, channel: Channel, externalId: string, message: InboundMessage | null): Promise<Live> {
    const k = key(workspaceId, channel, externalId);
    const existing = live.get(k);
    if (existing) return existing;
    let pending = loading.get(k);
    if (!pending) {
      pending = (async () => {
        const row = await deps.sessions.findOrCreate({
          id: randomUUID(),
          workspace_id: workspaceId,
          channel,
          external_id: externalId,
          language: message?.language ?? 'en',
          customer_phone: message?.customerPhone ?? null,
          machine_version: SESSION_MACHINE_VERSION,
        });
        const entry = createLive(row.id, k, workspaceId, channel, externalId, row.snapshot, row.machine_version, message);
        live.set(k, entry);
        return entry;
      })().finally(() => loading.delete(k));
      loading.set(k, pending);
    }
    return pending;
  }

  function createLive(
    id: string,
    k: string,
    workspaceId: string,
    channel: Channel,
    externalId: string,
    snapshot: unknown,
    version: number,
    message: InboundMessage | null,
  ): Live {
    const input = { sessionId: externalId, workspaceId, channel, language: message?.language ?? 'en', customerPhone: message?.customerPhone ?? null };
    // A snapshot of another machine version restarts the session idle: its history is in session_turns.
    const restorable = snapshot != null && version === SESSION_MACHINE_VERSION && (snapshot as { status?: string }).status === 'active';
    const actor = createActor(machine, restorable ? { snapshot: snapshot as never, input } : { input });
    const entry: Live = {
      id,
      key: k,
      workspaceId,
      channel,
      actor,
      lastActivity: now(),
      waiters: new Map(),
      writes: Promise.resolve(),
      completed: null,
      held: false,
      stream: null,
      replies: new Map(),
      turnCount: () => actor.getSnapshot().context.turnCount,
      handlerRevision: () => actor.getSnapshot().context.handlerRevision ?? 0,
    };
    attach(entry);
    actor.start();
    return entry;
  }

  return {
    owner,

    /** Runs one turn and answers with its reply (or that it was cancelled by a newer message). */
    async handleMessage(message: InboundMessage): Promise<TurnResult> {
      if (stopping) throw new Error('The session runtime is stopping.');
      let entry = await load(message.workspaceId, message.channel, message.externalId, message);
      const busy = !entry.actor.getSnapshot().matches({ conversation: 'idle' });
      // A barge-in goes straight to the running actor (this process holds the lease); otherwise take the lease.
      if (!busy && !entry.held) entry = await leases.lease(entry);
      const turnId = message.turnId ?? randomUUID();
      entry.lastActivity = now();
      const result = new Promise<TurnResult>((resolve, reject) => entry.waiters.set(turnId, Object.assign((r: TurnResult) => resolve(r), { fail: reject })));
      // A newer message's stream replaces a barged-in turn's: pieces of the old answer are no longer spoken.
      entry.stream = message.onText ? createReplyStream(turnId, message.onText, deps.renderers[entry.channel]) : null;
      publish(entry.id, { type: 'turn_started', sessionId: entry.id, turnId, message: message.text, at: new Date(now()).toISOString() });
      // Customers' words reach a log line only here, at debug, and only with LOG_CUSTOMER_DATA=on (src/log.ts).
      deps.logger.debug({ sessionId: entry.id, turnId, text: message.text, customerPhone: message.customerPhone ?? null }, 'customer message');
      entry.actor.send({ type: 'message', turnId, text: message.text, at: now(), ...(message.language ? { language: message.language } : {}), ...(message.handoff ? { handoff: message.handoff } : {}) });
      return result;
    },

    /**
     * Loads the session now, restoring its actor from the database when it was passivated, without a turn: a channel
     * calls it when a conversation opens (the phone's `setup`) so the first prompt finds the actor warm.
     *
     * `hold`: the conversation stays in this process until `end()` (the phone: its socket is here). The lease is taken
     * now and kept, renewed in the background, so the turns do not each take and give back the lease (one database
     * round trip less on every turn's critical path); the session is not passivated while held.
     */
    async open(input: {
      workspaceId: string;
      channel: Channel;
      externalId: string;
      language?: string;
      customerPhone?: string | null;
      hold?: boolean;
    }): Promise<{ sessionId: string }> {
      const { hold, ...message } = input;
      let entry = await load(input.workspaceId, input.channel, input.externalId, { ...message, text: '' });
      if (hold && !entry.held) entry = await leases.hold(entry);
      entry.lastActivity = now();
      return { sessionId: entry.id };
    },

    /**
     * Phone: the caller spoke over the reply (`spoken`: what the bridge says was heard of it, when it says). The reply
     * handle of the running turn (reply-stream.ts) knows whether that turn had begun to speak: then what was heard
     * belongs to it (it stays in the history, cut to that; without the bridge's word, to what was sent).
     */
    interrupt(workspaceId: string, channel: Channel, externalId: string, spoken?: string): void {
      const entry = live.get(key(workspaceId, channel, externalId));
      const stream = entry?.stream ?? null;
      const midTurn = stream !== null && stream.sent.length > 0;
      const heard = spoken ?? (midTurn ? stream.sent.join(' ') : undefined);
      entry?.actor.send({ type: 'interrupt', ...(heard === undefined ? {} : { spoken: heard }), ...(midTurn ? { midTurn } : {}) });
      if (entry && !entry.held) void enqueue(entry, () => deps.sessions.releaseLease(entry.id, owner));
    },

    /** The conversation is over: final state persisted, actor stopped. */
    async end(workspaceId: string, channel: Channel, externalId: string): Promise<void> {
      const entry = live.get(key(workspaceId, channel, externalId));
      if (!entry) return;
      entry.actor.send({ type: 'end' });
      entry.held = false;
      await entry.writes;
      await deps.sessions.releaseLease(entry.id, owner);
      entry.actor.stop();
      live.delete(entry.key);
    },

    /**
     * A change of who handles the conversation (take-over, hand-back, close, the hand-back deadline): applied to the
     * session's actor under its lease, after this process's running turn of it ended, and written only over the
     * revision it was made from (sessions.handler_revision), so two processes cannot both take one conversation.
     */
    async control(target: { workspaceId: string; channel: Channel; externalId: string }, event: HandlerEvent): Promise<HandlerOutcome> {
      if (stopping) throw new Error('The session runtime is stopping.');
      let entry = await load(target.workspaceId, target.channel, target.externalId, null);
      const waitUntil = now() + CONTROL_WAIT_MS;
      while ((!entry.actor.getSnapshot().matches({ conversation: 'idle' }) || entry.waiters.size > 0) && now() < waitUntil) {
        await new Promise((r) => setTimeout(r, 20));
        entry = live.get(entry.key) ?? entry;
      }
      if (!entry.held) entry = await leases.lease(entry);
      entry.lastActivity = now();
      const before = handlerOf(entry.actor.getSnapshot());
      let reason: HandlerChangeReason | null = null;
      const sub = entry.actor.on('handler_changed', (e) => (reason = e.reason));
      entry.actor.send(event);
      sub.unsubscribe();
      const snapshot = entry.actor.getSnapshot();
      const after = handlerOf(snapshot);
      const outcome = (applied: boolean): HandlerOutcome => ({
        sessionId: entry.id,
        applied,
        handledBy: after.handledBy,
        closed: after.closed,
        agent: after.agent,
        waitingSince: after.waitingSince,
        language: snapshot.context.language,
        reason: applied ? reason : null,
      });
      if (after.revision === before.revision) {
        if (!entry.held) await enqueue(entry, () => deps.sessions.releaseLease(entry.id, owner));
        return outcome(false);
      }
      let written = false;
      const current = entry;
      await enqueue(current, async () => {
        written = await deps.sessions.saveHandler(
          {
            id: current.id,
            state: conversationState(snapshot),
            status: after.closed ? 'ended' : 'active',
            snapshot: current.actor.getPersistedSnapshot(),
            machineVersion: SESSION_MACHINE_VERSION,
            ...handlerColumns(snapshot),
          },
          before.revision,
          owner,
        );
      });
      if (!written) {
        // Another process changed who handles it meanwhile: this copy is stale; the next use reloads it.
        current.actor.stop();
        live.delete(current.key);
        await deps.sessions.releaseLease(current.id, owner);
        const row = await deps.sessions.findById(current.workspaceId, current.id);
        const fresh = await load(target.workspaceId, target.channel, target.externalId, null);
        const h = handlerOf(fresh.actor.getSnapshot());
        return { sessionId: current.id, applied: false, handledBy: h.handledBy, closed: h.closed, agent: h.agent, waitingSince: h.waitingSince, language: row?.language ?? 'en', reason: null };
      }
      inboxChange(current, 'handled_by', null);
      return outcome(true);
    },

    /** Shows an event on a session's live stream (an agent's message, a delivery status). */
    notify(event: SessionStreamEvent): void {
      publish(event.sessionId, event);
    },

    subscribe(sessionId: string, listener: (event: SessionStreamEvent) => void): () => void {
      if (deps.live) return deps.live.subscribe('session', sessionId, (event) => listener(event as SessionStreamEvent));
      let set = listeners.get(sessionId);
      if (!set) listeners.set(sessionId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(sessionId);
      };
    },

    /** Stops idle actors untouched since `idleMs` (their state is already in the database). Returns how many. */
    async passivateIdle(at: number = now()): Promise<number> {
      let count = 0;
      for (const entry of [...live.values()]) {
        if (entry.held || at - entry.lastActivity < idleMs || !entry.actor.getSnapshot().matches({ conversation: 'idle' }) || entry.waiters.size > 0) continue;
        await entry.writes;
        entry.actor.stop();
        live.delete(entry.key);
        count++;
      }
      return count;
    },

    /**
     * Ends the phone sessions nobody continues (docs/phone.md, SIGTERM): handed back and never reconnected, or left by
     * a process that died. Their last state is kept; only the status changes. Returns how many.
     */
    async endAbandonedCalls(quietMs: number = SESSION_ABANDONED_CALL_MS): Promise<number> {
      const ended = await deps.sessions.endAbandonedCalls(quietMs);
      if (ended > 0) deps.logger.info({ ended }, 'phone sessions nobody continued were ended');
      return ended;
    },

    liveCount(): number {
      return live.size;
    },

    /** Finished writes for a session (tests, drain). */
    async settled(): Promise<void> {
      await Promise.all([...live.values()].map((e) => e.writes));
    },

    /** SIGTERM: no new turns; running turns finish (up to `graceMs`), everything is written, actors stop. */
    async stop(graceMs = 10_000): Promise<void> {
      stopping = true;
      leases.stop();
      const deadline = now() + graceMs;
      while ([...live.values()].some((e) => e.waiters.size > 0) && now() < deadline) await new Promise((r) => setTimeout(r, 20));
      for (const entry of live.values()) {
        await entry.writes;
        entry.actor.stop();
      }
      live.clear();
      // Every lease of this process at once (the held ones of open calls included): another process takes over.
      await deps.sessions.releaseLeasesOf(owner);
    },
  };
}

export type SessionRuntime = ReturnType<typeof createSessionRuntime>;

function key(workspaceId: string, channel: Channel, externalId: string): string {
  return `${workspaceId}\u0000${channel}\u0000${externalId}`;
}
