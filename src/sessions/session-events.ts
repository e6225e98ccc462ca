/**
 * What a session actor's events do (docs/architecture.md, "The session runtime"): a reply answers its waiting
 * message and goes to the live streams; a turn that ended, completed or cancelled, is written with its messages in one
 * statement; a message held for the team is stored before it is acknowledged; a change of who handles the
 * conversation is shown live and in the team's inbox.
 */
import { randomUUID } from 'node:crypto';
import { SESSION_MACHINE_VERSION, type SessionEmitted, type TurnState } from '../../machines/session-types.ts';
import type { MessageRecord } from '../../db/repositories/sessions.repository.ts';
import type { MessageFrom } from '../../db/schema.ts';
import { phrase } from '../ai/phrases.ts';
import { agentView, type Live, type RuntimeCore } from './runtime-types.ts';
import { attendantOf, sessionRecord, turnRecord } from './turn-record.ts';
import { endTurnSpan, inSpan } from '../tracing.ts';

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
function announceMessages(core: RuntimeCore, entry: Live, messages: readonly MessageRecord[]): void {
  for (const m of messages) {
    core.publish(entry.id, { type: 'message', sessionId: entry.id, message: { id: m.id, from: m.from, text: m.text, at: m.at, source: m.source } });
  }
  const last = messages.at(-1);
  if (last) inboxChange(core, entry, 'message', { from: last.from, text: last.text, at: last.at });
}

/** A change the team's inbox shows (src/sessions/inbox-events.ts). */
export function inboxChange(core: RuntimeCore, entry: Live, reason: 'handled_by' | 'message', lastMessage: { from: MessageFrom; text: string; at: string } | null): void {
  // A scenario's test conversation never reaches the team's inbox (nor, through it, the assignment).
  if (entry.test) return;
  const h = attendantOf(entry.actor.getSnapshot());
  core.deps.inbox?.publish({
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

function render(core: RuntimeCore, entry: Live, e: Extract<SessionEmitted, { type: 'reply' }>): string {
  const text = e.text.trim().length > 0 ? e.text : phrase('dont_know', e.language);
  return core.deps.renderers[entry.channel]({ text, source: e.source, language: e.language });
}

/** The reply of a turn: to its waiting message and to the live streams; a spoken turn says only the rest of it. */
function onReply(core: RuntimeCore, entry: Live, e: Extract<SessionEmitted, { type: 'reply' }>): void {
  const speech = entry.speech?.id === e.turnId && entry.speech.sent.length > 0 ? entry.speech : null;
  entry.speech = null;
  const unsent = speech ? speech.rest(e, core.deps.renderers[entry.channel]) : render(core, entry, e);
  const text = speech ? [...speech.sent, unsent].filter((t) => t !== '').join(' ') : unsent;
  core.publish(entry.id, { type: 'reply', sessionId: entry.id, turnId: e.turnId, text, source: e.source, handoff: e.handoff });
  // Kept until the turn is written (turnMessages); the phone keeps none: its turns are the record.
  if (entry.channel !== 'phone') entry.replies.set(e.turnId, { text, source: e.source, at: core.now() });
  const { source, language, handoff } = e;
  const result = { cancelled: false as const, sessionId: entry.id, turnId: e.turnId, text, unsent, source, language, handoff };
  entry.waiters.get(e.turnId)?.(result);
  entry.waiters.delete(e.turnId);
}

/** A customer message while a person handles the conversation: stored, shown, and the lease given back. */
function onHeld(core: RuntimeCore, entry: Live, e: Extract<SessionEmitted, { type: 'held' }>): void {
  const { deps, owner } = core;
  const language = entry.actor.getSnapshot().context.language;
  const waiter = entry.waiters.get(e.turnId);
  entry.waiters.delete(e.turnId);
  const message: MessageRecord = { id: randomUUID(), session_id: entry.id, from: 'customer', text: e.text, source: null, agent_user_id: null, turn_id: e.turnId, outbound_id: null, at: new Date(e.at).toISOString() };
  // Answered once it is stored: the channel acknowledges a message the team will see, or tries it again.
  let failure: Error | null = null;
  const release = !entry.held;
  void core
    .enqueue(entry, () =>
      deps.sessions
        .addMessage(message, release ? owner : null)
        .catch((err: unknown) => {
          failure = err instanceof Error ? err : new Error(String(err));
          return release ? deps.sessions.releaseLease(entry.id, owner).catch(() => undefined) : undefined;
        })
        .then(() => {
          if (release) core.leases.released(entry);
        }),
    )
    .then(() => {
      endTurnSpan(e.turnId, failure ? 'failed' : 'held');
      if (failure) return waiter?.fail?.(failure);
      waiter?.({ cancelled: false, held: true, sessionId: entry.id, turnId: e.turnId, text: '', unsent: '', source: 'fallback', language, handoff: null });
      announceMessages(core, entry, [message]);
    });
}

/** Subscribes the runtime to a new live session's actor. */
export function attachSession(core: RuntimeCore, entry: Live): void {
  const { actor } = entry;
  const { deps, owner, now } = core;
  const log = deps.logger.child({ sessionId: entry.id, workspaceId: entry.workspaceId });
  actor.on('reply', (e) => onReply(core, entry, e));
  actor.on('turn_completed', (e) => {
    entry.completed = e.turn;
  });
  actor.on('turn_cancelled', (e) => {
    if (entry.speech?.id === e.turn.id) entry.speech = null;
    entry.waiters.get(e.turn.id)?.({ cancelled: true, sessionId: entry.id, turnId: e.turn.id, reason: e.reason });
    entry.waiters.delete(e.turn.id);
    core.publish(entry.id, { type: 'turn_cancelled', sessionId: entry.id, turnId: e.turn.id, reason: e.reason });
    const messages = turnMessages(entry, e.turn, false);
    void core
      .enqueue(entry, () => core.turnWrites.add({ turn: turnRecord(entry.id, e.turn, 'cancelled', now()), session: { ...sessionRecord(entry.id, entry.actor, false), owner }, messages }))
      .then(() => {
        endTurnSpan(e.turn.id, 'cancelled', { 'botlink.reason': e.reason });
        announceMessages(core, entry, messages);
      });
  });
  actor.on('held', (e) => onHeld(core, entry, e));
  actor.on('attendant_changed', (e) => {
    core.publish(entry.id, {
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
        void core.enqueue(entry, () => deps.sessions.saveSnapshot({ id: entry.id, state: 'ended', status: 'ended', snapshot: actor.getPersistedSnapshot(), machineVersion: SESSION_MACHINE_VERSION }));
        core.publish(entry.id, { type: 'state', sessionId: entry.id, state: 'ended', status: 'ended' });
        return;
      }
      const turn = entry.completed;
      if (turn && snapshot.matches({ conversation: 'idle' })) {
        entry.completed = null;
        core.publish(entry.id, { type: 'turn_completed', sessionId: entry.id, turnId: turn.id, timings: turn.timings, botlink: turn.botlink });
        const messages = turnMessages(entry, turn, true);
        const waits = turn.handoff?.waiting !== undefined;
        const release = !entry.held;
        const write = { turn: turnRecord(entry.id, turn, 'completed', now()), session: { ...sessionRecord(entry.id, entry.actor, release), owner }, messages };
        void core
          .enqueue(entry, async () => {
            await inSpan('db.turn_write', turn.id, { 'botlink.messages': messages.length }, () => core.turnWrites.add(write));
            // Given back by that write: no more renewals (inside the write, so a next turn's lease round comes after).
            if (release) core.leases.released(entry);
          })
          .then(() => {
            endTurnSpan(turn.id, 'completed', { 'botlink.source': turn.reply?.source ?? 'none' });
            announceMessages(core, entry, messages);
            if (waits) inboxChange(core, entry, 'handled_by', null);
          });
      }
    },
    // Every invoke has onError, so this is the last line: log, answer waiters, and drop the actor (the database
    // keeps the last good state).
    error(err) {
      log.error({ err }, 'session actor failed');
      for (const [turnId, resolve] of entry.waiters) {
        endTurnSpan(turnId, 'failed');
        const text = phrase('dont_know', actor.getSnapshot().context.language);
        resolve({ cancelled: false, sessionId: entry.id, turnId, text, unsent: text, source: 'fallback', language: actor.getSnapshot().context.language, handoff: null });
      }
      entry.waiters.clear();
      core.live.delete(entry.key);
      core.leases.released(entry);
      entry.held = false;
      void core.enqueue(entry, () => deps.sessions.releaseLease(entry.id, owner));
    },
  });
}
