/**
 * A change of who handles the conversation (take-over, hand-back, close, the hand-back deadline; docs/architecture.md,
 * "Who handles a conversation"): applied to the session's actor under its lease, after this process's running turn
 * of it ended, and written only over the revision it was made from (sessions.attendant_revision), so two processes
 * cannot both take one conversation.
 */
import { SESSION_MACHINE_VERSION, type AttendantChangeReason } from '../../machines/session-types.ts';
import type { Channel } from '../channels-and-handoffs.ts';
import type { AttendantEvent, AttendantOutcome, RuntimeCore } from './runtime-types.ts';
import { inboxChange } from './session-events.ts';
import { attendantColumns, attendantOf, conversationState } from './turn-record.ts';

/** How long a change of the attendant region waits for this process's running turn of the session to end. */
const CONTROL_WAIT_MS = 30_000;

export async function controlSession(
  core: RuntimeCore,
  target: { workspaceId: string; channel: Channel; externalId: string },
  event: AttendantEvent,
): Promise<AttendantOutcome> {
  const { deps, now, owner } = core;
  let entry = await core.load(target.workspaceId, target.channel, target.externalId, null);
  const waitUntil = now() + CONTROL_WAIT_MS;
  while ((!entry.actor.getSnapshot().matches({ conversation: 'idle' }) || entry.waiters.size > 0) && now() < waitUntil) {
    await new Promise((r) => setTimeout(r, 20));
    entry = core.live.get(entry.key) ?? entry;
  }
  if (!entry.held) entry = await core.leases.lease(entry);
  entry.lastActivity = now();
  const before = attendantOf(entry.actor.getSnapshot());
  let reason: AttendantChangeReason | null = null;
  const sub = entry.actor.on('attendant_changed', (e) => (reason = e.reason));
  entry.actor.send(event);
  sub.unsubscribe();
  const snapshot = entry.actor.getSnapshot();
  const after = attendantOf(snapshot);
  const outcome = (applied: boolean): AttendantOutcome => ({
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
    const unchanged = entry;
    if (!unchanged.held) {
      await core.enqueue(unchanged, async () => {
        await deps.sessions.releaseLease(unchanged.id, owner);
        core.leases.released(unchanged);
      });
    }
    return outcome(false);
  }
  let written = false;
  const current = entry;
  await core.enqueue(current, async () => {
    written = await deps.sessions.saveAttendant(
      {
        id: current.id,
        state: conversationState(snapshot),
        status: after.closed ? 'ended' : 'active',
        snapshot: current.actor.getPersistedSnapshot(),
        machineVersion: SESSION_MACHINE_VERSION,
        ...attendantColumns(snapshot),
      },
      before.revision,
      owner,
    );
    // saveAttendant gives this engine's lease back (a held conversation's too: the next turn takes it again).
    core.leases.released(current);
    current.held = false;
  });
  if (!written) {
    // Another process changed who handles it meanwhile: this copy is stale; the next use reloads it.
    current.actor.stop();
    core.live.delete(current.key);
    await deps.sessions.releaseLease(current.id, owner);
    core.leases.released(current);
    const row = await deps.sessions.findById(current.workspaceId, current.id);
    const fresh = await core.load(target.workspaceId, target.channel, target.externalId, null);
    const h = attendantOf(fresh.actor.getSnapshot());
    return { sessionId: current.id, applied: false, handledBy: h.handledBy, closed: h.closed, agent: h.agent, waitingSince: h.waitingSince, language: row?.language ?? 'en', reason: null };
  }
  inboxChange(core, current, 'handled_by', null);
  return outcome(true);
}
