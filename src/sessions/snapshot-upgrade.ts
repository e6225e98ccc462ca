/**
 * Persisted session snapshots of older machine versions, brought up to the current one when a session is restored
 * (docs/architecture.md, "Session snapshots of older machines"). Each step takes one version to the next, so a v1
 * snapshot goes through them all.
 *
 * - v1 → v2: the parallel region of who handles the conversation arrived (then named `handler`); a v1 conversation was
 *   always the bot's, so it becomes `{ handler: 'bot', conversation: 'idle' }` with nobody waited for.
 * - v2 → v3: the conversation's channel id is `conversationId` in the machine (it was `sessionId`, the name our row id
 *   has everywhere else).
 * - v3 → v4: that region is `attendant` ("handler" is an HTTP route's word), its revision `attendantRevision`.
 *
 * Up to v3 only an idle conversation is upgraded: between turns a snapshot is context and state values, no running
 * actor, so the mapping is exact. A snapshot of v1 or v2 caught mid-turn (its process died) is restarted idle, as every
 * older snapshot was before; its turns are in session_turns. v3 → v4 renames a key the running actors' ids do not
 * contain (theirs are paths in `conversation`), so it is exact in any state: a v3 conversation mid-turn, waiting for a
 * person or held by one comes back as it was.
 */
import { SESSION_MACHINE_VERSION } from '../../machines/session-types.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The snapshot as the current machine reads it, or null when it cannot be restored (then the session starts idle). */
export function upgradeSessionSnapshot(snapshot: unknown, version: number): Json | null {
  if (!isObject(snapshot) || snapshot.status !== 'active' || !isObject(snapshot.context)) return null;
  let current: Json = snapshot;
  let at = version;
  if (at === 1) {
    if (current.value !== 'idle') return null;
    current = {
      ...current,
      value: { handler: 'bot', conversation: 'idle' },
      context: { ...(current.context as Json), agent: null, waitingSince: null, handbackAt: null, handlerRevision: 0 },
    };
    at = 2;
  }
  if (at === 2) {
    const value = current.value;
    const { sessionId, ...rest } = current.context as Json;
    if (!isObject(value) || value.conversation !== 'idle' || typeof sessionId !== 'string') return null;
    current = { ...current, context: { conversationId: sessionId, ...rest }, children: {} };
    at = 3;
  }
  if (at === 3) {
    const value = current.value;
    const { handlerRevision, ...rest } = current.context as Json;
    if (!isObject(value) || typeof value.handler !== 'string' || value.conversation === undefined || typeof handlerRevision !== 'number') return null;
    const { handler, ...regions } = value;
    current = { ...current, value: { attendant: handler, ...regions }, context: { ...rest, attendantRevision: handlerRevision } };
    at = 4;
  }
  return at === SESSION_MACHINE_VERSION ? current : null;
}
