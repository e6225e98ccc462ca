/**
 * The session runtime: one live actor per conversation in this process (a registry), persisted to PostgreSQL at
 * every turn end, passivated when idle and restored on the next message. Across processes a turn runs only where
 * the session's database lease is held, so two engines on one PostgreSQL never run one session's turn at once.
 *
 * It renders replies for their channel and streams what happens to listeners (the dashboard's SSE, the channels). Its
 * stages share one state (RuntimeCore, runtime-types.ts): the registry here, what the actor's events do in
 * session-events.ts, the changes of who handles a conversation in attendant-control.ts. The machine's I/O actors are in
 * session-actors.ts, the lease rounds in session-leases.ts, the handoff rule in handoff.ts, and a phone turn's spoken
 * reply in spoken-turn.ts.
 */
import { randomUUID } from 'node:crypto';
import { createActor } from 'xstate';
import { SESSION_MACHINE_VERSION } from '../../machines/session-types.ts';
import { upgradeSessionSnapshot } from './snapshot-upgrade.ts';
import { groupCommit } from '../../db/group-commit.ts';
import type { SaveTurnInput } from '../../db/repositories/sessions.repository.ts';
import type { Channel } from '../channels-and-handoffs.ts';
import { controlSession } from './attendant-control.ts';
import type {
  AttendantEvent,
  AttendantOutcome,
  InboundMessage,
  Live,
  RuntimeCore,
  SessionRuntimeDeps,
  SessionStreamEvent,
  TurnResult,
} from './runtime-types.ts';
import type { TestConversation } from './test-conversation.ts';
import { provideSessionMachine } from './session-actors.ts';
import { attachSession } from './session-events.ts';
import { createSessionLeases } from './session-leases.ts';
import type { SpokenTurn } from './spoken-turn.ts';
import { endTurnSpan, inSpan, startTurnSpan } from '../tracing.ts';

export type { Credentials } from './session-actors.ts';
export { SESSION_LEASE_WAIT_MS } from './session-leases.ts';
export { agentView } from './runtime-types.ts';
export type {
  AttendantEvent,
  AttendantOutcome,
  ConversationMessage,
  InboundMessage,
  SessionRuntimeDeps,
  SessionStreamEvent,
  TurnResult,
} from './runtime-types.ts';
export type { TestConversation } from './test-conversation.ts';

/** How long an idle session stays live before it is passivated (state kept in the database). */
export const SESSION_IDLE_MS = 5 * 60_000;
/**
 * A phone session still open in the database but quiet this long with no lease in force is ended by the sweep
 * (`endAbandonedCalls`): nobody will continue it. Long enough for a call handed back on SIGTERM to reconnect.
 */
export const SESSION_ABANDONED_CALL_MS = 5 * 60_000;

/** The runtime's shared state and the stages every other stage uses: publish, the write chain, the registry. */
function createRuntimeCore(deps: SessionRuntimeDeps) {
  const now = deps.now ?? Date.now;
  const owner = deps.instanceId ?? `engine-${randomUUID()}`;
  const live = new Map<string, Live>();
  // Turn ends of all sessions are written in groups: under load one statement stores many turns (db/group-commit.ts).
  const turnWrites = groupCommit<SaveTurnInput>({ write: (batch) => deps.sessions.saveTurns(batch), lingerMs: deps.turnWriteLingerMs ?? 0 });
  const loading = new Map<string, Promise<Live>>();
  const listeners = new Map<string, Set<(event: SessionStreamEvent) => void>>();

  const teamAvailable = deps.teamAvailable ?? ((workspaceId: string) => deps.sessions.teamAvailable(workspaceId));
  const machine = provideSessionMachine({ ...deps, now, teamAvailable }, (workspaceId, channel, externalId, turnId) => {
    const entry = live.get(key(workspaceId, channel, externalId));
    if (!entry) return null;
    const speech = turnId !== undefined && entry.speech?.id === turnId ? entry.speech : null;
    return {
      sessionId: entry.id,
      test: entry.test,
      stream: speech && {
        speak: (piece, language, signal) => speak(entry, speech, piece, language, signal),
        record: (step) => speech.record(step),
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
    reload(entry, row) {
      entry.actor.stop();
      // The stale copy's lease (when it had one) passes to the fresh copy with the round that reloads it.
      leases.released(entry);
      // A turn still waiting on the stale copy cannot be answered from it; the newer state answers the next message.
      for (const [turnId, resolve] of entry.waiters) resolve({ cancelled: true, sessionId: entry.id, turnId, reason: 'barge_in' });
      entry.waiters.clear();
      const test = testOf(row, entry.test);
      const fresh = createLive(entry.id, entry.key, entry.workspaceId, entry.channel, row.external_id, row.snapshot, row.machine_version, null, test);
      live.set(entry.key, fresh);
      return fresh;
    },
  });

  /** One streamed piece of the answer, rendered for speech, to the caller (unless the turn is over or the room is). */
  function speak(entry: Live, speech: SpokenTurn, piece: string, language: string, signal: AbortSignal): void {
    if (signal.aborted || entry.speech !== speech) return;
    const text = speech.fit(piece, language, deps.renderers[entry.channel]);
    if (text === null) return;
    try {
      speech.deliver(text);
    } catch (err) {
      deps.logger.warn({ err, sessionId: entry.id }, 'a streamed reply listener failed');
    }
    core.publish(entry.id, { type: 'reply_piece', sessionId: entry.id, turnId: speech.id, text });
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
    test: TestConversation | null,
  ): Live {
    const input = { conversationId: externalId, workspaceId, channel, language: message?.language ?? 'en', customerPhone: message?.customerPhone ?? null };
    // An idle snapshot of an older machine version is upgraded; any other restarts the session idle (its turns are in
    // session_turns).
    const restorable = upgradeSessionSnapshot(snapshot, version);
    const actor = createActor(machine, restorable ? { snapshot: restorable as never, input } : { input });
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
      lease: null,
      speech: null,
      replies: new Map(),
      test,
      turnCount: () => actor.getSnapshot().context.turnCount,
      attendantRevision: () => actor.getSnapshot().context.attendantRevision ?? 0,
    };
    attachSession(core, entry);
    actor.start();
    return entry;
  }

  const core: RuntimeCore & { listeners: typeof listeners } = {
    deps,
    now,
    owner,
    live,
    turnWrites,
    leases,
    listeners,
    publish(sessionId, event) {
      // Through the live bus, the streams of every engine get it (src/events/live-bus.ts); without one, this process's.
      if (deps.live) return deps.live.publish('session', sessionId, event);
      for (const listener of listeners.get(sessionId) ?? []) {
        try {
          listener(event);
        } catch (err) {
          deps.logger.warn({ err, sessionId }, 'session listener failed');
        }
      }
    },
    enqueue(entry, work) {
      entry.writes = entry.writes.then(work).catch((err: unknown) => deps.logger.error({ err, sessionId: entry.id }, 'session write failed'));
      return entry.writes;
    },
    async load(workspaceId, channel, externalId, message) {
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
            // Marked when the row is made: the Overview's roll-ups leave it out from its first row on (migration 0039).
            // A scenario's customer email and name are the conversation's from its start (docs/scenarios.md).
            ...(message?.test
              ? { test_run_id: message.test.runId, customer_email: message.test.customer?.email ?? null, customer_name: message.test.customer?.name ?? null }
              : {}),
          });
          const entry = createLive(row.id, k, workspaceId, channel, externalId, row.snapshot, row.machine_version, message, testOf(row, message?.test ?? null));
          live.set(k, entry);
          return entry;
        })().finally(() => loading.delete(k));
        loading.set(k, pending);
      }
      return pending;
    },
  };
  return core;
}

export function createSessionRuntime(deps: SessionRuntimeDeps) {
  const core = createRuntimeCore(deps);
  const { now, owner, live, leases, listeners } = core;
  const publish = core.publish;
  const idleMs = deps.idleMs ?? SESSION_IDLE_MS;
  let stopping = false;

  return {
    owner,

    /** Runs one turn and answers with its reply (or that it was cancelled by a newer message). */
    async handleMessage(message: InboundMessage): Promise<TurnResult> {
      if (stopping) throw new Error('The session runtime is stopping.');
      const turnId = message.speech?.id ?? message.turnId ?? randomUUID();
      startTurnSpan(turnId, { 'botlink.channel': message.channel, 'botlink.workspace_id': message.workspaceId });
      let entry: Live;
      try {
        // The ingress: the session loaded (or restored) and its lease taken before the turn starts.
        entry = await inSpan('ingress', turnId, {}, async () => {
          const loaded = await core.load(message.workspaceId, message.channel, message.externalId, message);
          const busy = !loaded.actor.getSnapshot().matches({ conversation: 'idle' });
          // A barge-in goes straight to the running actor (this process holds the lease); otherwise take the lease.
          return !busy && !loaded.held ? leases.lease(loaded) : loaded;
        });
      } catch (err) {
        endTurnSpan(turnId, 'failed');
        throw err;
      }
      entry.lastActivity = now();
      if (message.test && entry.test) entry.test = message.test;
      const result = new Promise<TurnResult>((resolve, reject) => entry.waiters.set(turnId, Object.assign((r: TurnResult) => resolve(r), { fail: reject })));
      // A newer message's spoken turn replaces a barged-in turn's: pieces of the old answer are no longer spoken.
      entry.speech = message.speech ?? null;
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
      let entry = await core.load(input.workspaceId, input.channel, input.externalId, { ...message, text: '' });
      if (hold && !entry.held) entry = await leases.hold(entry);
      entry.lastActivity = now();
      return { sessionId: entry.id };
    },

    /**
     * Phone: the caller spoke over the reply (`spoken`: what the bridge says was heard of it, when it says). The
     * running turn's spoken turn (spoken-turn.ts) knows whether it had begun to speak: then what was heard belongs to
     * it (it stays in the history, cut to that; without the bridge's word, to what was sent); otherwise to the last reply.
     */
    interrupt(workspaceId: string, channel: Channel, externalId: string, spoken?: string): void {
      const entry = live.get(key(workspaceId, channel, externalId));
      const heard = entry?.speech ? entry.speech.heard(spoken) : spoken === undefined ? {} : { spoken };
      entry?.actor.send({ type: 'interrupt', ...heard });
      if (entry && !entry.held) {
        const current = entry;
        void core.enqueue(current, async () => {
          await deps.sessions.releaseLease(current.id, owner);
          leases.released(current);
        });
      }
    },

    /** The conversation is over: final state persisted, actor stopped. */
    async end(workspaceId: string, channel: Channel, externalId: string): Promise<void> {
      const entry = live.get(key(workspaceId, channel, externalId));
      if (!entry) return;
      entry.actor.send({ type: 'end' });
      entry.held = false;
      await entry.writes;
      await deps.sessions.releaseLease(entry.id, owner);
      leases.released(entry);
      entry.actor.stop();
      live.delete(entry.key);
    },

    /** A change of who handles the conversation (attendant-control.ts). */
    control(target: { workspaceId: string; channel: Channel; externalId: string }, event: AttendantEvent): Promise<AttendantOutcome> {
      if (stopping) throw new Error('The session runtime is stopping.');
      return controlSession(core, target, event);
    },

    /** Shows an event on a session's live stream (an agent's message, a delivery status). */
    notify(event: SessionStreamEvent): void {
      core.publish(event.sessionId, event);
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
      core.leases.stop();
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

/**
 * Whether a session is a scenario's test conversation: its row's mark decides (a customer's conversation never becomes
 * one); the scenario's settings come with its messages. A test conversation loaded without them (another engine
 * reloaded it) asks nobody.
 */
function testOf(row: { test_run_id: string | null }, given: TestConversation | null): TestConversation | null {
  if (row.test_run_id === null) return null;
  return given?.runId === row.test_run_id ? given : { runId: row.test_run_id, integrator: 'none', toolMocks: {} };
}

function key(workspaceId: string, channel: Channel, externalId: string): string {
  return `${workspaceId}\u0000${channel}\u0000${externalId}`;
}
