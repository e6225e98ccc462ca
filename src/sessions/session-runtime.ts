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
import { SESSION_MACHINE_VERSION, type HandoffRequest, type HandoffResult, type BotLinkSummary, type ReplySource, type SessionEmitted, type TurnState } from '../../machines/session-types.ts';
import { groupCommit } from '../../db/group-commit.ts';
import type { SaveTurnInput, SessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { phrase } from '../ai/phrases.ts';
import type { Channel } from '../words.ts';
import type { LiveBus } from '../events/live-bus.ts';
import type { Logger } from '../log.ts';
import { createReplyStream, type ReplyStream } from './reply-stream.ts';
import type { ReplyRenderer } from './reply-renderer.ts';
import { provideSessionMachine, type ProvidedSessionMachine, type SessionActorDeps } from './session-actors.ts';
import { createSessionLeases, SESSION_HELD_LEASE_MS, type LeasedSession } from './session-leases.ts';
import { sessionRecord, turnRecord } from './turn-record.ts';

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
    }
  | { cancelled: true; sessionId: string; turnId: string; reason: 'barge_in' | 'interrupt' | 'end' };

export type SessionStreamEvent =
  | { type: 'turn_started'; sessionId: string; turnId: string; message: string; at: string }
  /** A sentence of a streamed reply, as it was spoken (the phone with an LLM); the `reply` event still follows. */
  | { type: 'reply_piece'; sessionId: string; turnId: string; text: string }
  | { type: 'reply'; sessionId: string; turnId: string; text: string; source: ReplySource; handoff: HandoffResult | null }
  | { type: 'turn_completed'; sessionId: string; turnId: string; timings: Record<string, number>; botlink: BotLinkSummary | null }
  | { type: 'turn_cancelled'; sessionId: string; turnId: string; reason: string }
  | { type: 'state'; sessionId: string; state: string; status: 'active' | 'ended' };

type SessionActor = Actor<ProvidedSessionMachine>;

interface Live extends LeasedSession {
  channel: Channel;
  actor: SessionActor;
  lastActivity: number;
  waiters: Map<string, (result: TurnResult) => void>;
  completed: TurnState | null;
  /** The running turn's streamed reply, when its message asked for one (`onText`). */
  stream: ReplyStream | null;
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
      void enqueue(entry, () => turnWrites.add({ turn: turnRecord(entry.id, e.turn, 'cancelled', now()), session: sessionRecord(entry.id, entry.actor, false) }));
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
        if (turn && snapshot.matches('idle')) {
          entry.completed = null;
          publish(entry.id, { type: 'turn_completed', sessionId: entry.id, turnId: turn.id, timings: turn.timings, botlink: turn.botlink });
          void enqueue(entry, () => turnWrites.add({ turn: turnRecord(entry.id, turn, 'completed', now()), session: sessionRecord(entry.id, entry.actor, !entry.held) }));
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
      turnCount: () => actor.getSnapshot().context.turnCount,
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
      const busy = !entry.actor.getSnapshot().matches('idle');
      // A barge-in goes straight to the running actor (this process holds the lease); otherwise take the lease.
      if (!busy && !entry.held) entry = await leases.lease(entry);
      const turnId = message.turnId ?? randomUUID();
      entry.lastActivity = now();
      const result = new Promise<TurnResult>((resolve) => entry.waiters.set(turnId, resolve));
      // A newer message's stream replaces a barged-in turn's: pieces of the old answer are no longer spoken.
      entry.stream = message.onText ? createReplyStream(turnId, message.onText, deps.renderers[entry.channel]) : null;
      publish(entry.id, { type: 'turn_started', sessionId: entry.id, turnId, message: message.text, at: new Date(now()).toISOString() });
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
        if (entry.held || at - entry.lastActivity < idleMs || !entry.actor.getSnapshot().matches('idle') || entry.waiters.size > 0) continue;
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
