/**
 * Presence per person (docs/architecture.md, "Presence and assignment"): each user says they are available, away or
 * offline (PUT /v1/me/presence), kept in the database so every engine reads the same. "Available" holds while the
 * person has a dashboard open: the engine that holds their `GET /v1/inbox/events` stream marks them seen a few times a
 * minute, in one statement for everyone it holds; without it for PRESENCE_IDLE_MINUTES they read as away, and the
 * sweep (any engine) writes it. Someone becoming available is the moment waiting conversations are assigned.
 * Every change (set, a lapse written by the sweep, the team closed by PUT /v1/team) goes on the live bus to the open
 * dashboards of the person's workspace, on every engine: the `presence` event of GET /v1/inbox/events.
 */
import type { Principal } from '../../db/repositories/accounts.repository.ts';
import type { TeamPresenceRepository } from '../../db/repositories/team-presence.repository.ts';
import type { PresenceStatus } from '../../db/schema.ts';
import { displayName, type NamedUser } from '../accounts/display-name.ts';
import type { LiveBus } from '../events/live-bus.ts';
import type { Logger } from '../log.ts';
import type { AssignmentService } from './assignment.ts';

/** A person's presence changed: what the dashboards of their workspace hear (GET /v1/inbox/events, event `presence`). */
export interface PresenceChange {
  user_id: string;
  /** As colleagues see them. */
  name: string;
  status: PresenceStatus;
}

export interface PresenceDeps {
  presence: Pick<TeamPresenceRepository, 'set' | 'get' | 'list' | 'touch' | 'lapse' | 'setAllAway'>;
  /** Carries each change to the workspace's open dashboards on every engine (topic `presence`, keyed by workspace). */
  live: Pick<LiveBus, 'publish' | 'subscribe'>;
  assignment: Pick<AssignmentService, 'soon'>;
  /** PRESENCE_IDLE_MINUTES (src/config.ts). */
  idleMinutes: number;
  logger: Logger;
}

export function createPresence(deps: PresenceDeps) {
  const log = deps.logger.child({ component: 'presence' });
  // The dashboards this engine holds open: user id → open streams.
  const open = new Map<string, number>();

  function changed(workspaceId: string, userId: string, user: NamedUser, status: PresenceStatus): void {
    const change: PresenceChange = { user_id: userId, name: displayName(user), status };
    deps.live.publish('presence', workspaceId, change);
  }

  async function set(principal: Principal, status: PresenceStatus) {
    await deps.presence.set(principal.workspaceId, principal.userId, status);
    changed(principal.workspaceId, principal.userId, principal, status);
    if (status === 'available') deps.assignment.soon(principal.workspaceId);
    return { status };
  }

  return {
    set,

    /** Everyone of the workspace who is available becomes away (PUT /v1/team with available false: the team closes). */
    async closeTeam(workspaceId: string): Promise<void> {
      for (const p of await deps.presence.setAllAway(workspaceId)) changed(p.workspace_id, p.user_id, p, 'away');
    },

    /** The presence changes of one workspace's people, from every engine; returns what stops listening. */
    subscribe(workspaceId: string, listener: (change: PresenceChange) => void): () => void {
      return deps.live.subscribe('presence', workspaceId, (change) => listener(change as PresenceChange));
    },

    /** GET /v1/me/presence: the caller's own presence as it holds now. */
    async mine(principal: Principal) {
      return { status: await deps.presence.get(principal.userId, deps.idleMinutes) };
    },

    /** GET /v1/team/presence: everyone of the workspace, named as colleagues see them. */
    async team(workspaceId: string) {
      const rows = await deps.presence.list(workspaceId, deps.idleMinutes);
      return { users: rows.map((r) => ({ id: r.id, name: displayName(r), status: r.status })) };
    },

    /** A dashboard stream of this user opened on this engine; the returned function closes it. Seen at once. */
    opened(principal: Principal): () => void {
      open.set(principal.userId, (open.get(principal.userId) ?? 0) + 1);
      void deps.presence.touch([principal.userId]).catch((err: unknown) => log.warn({ err }, 'marking a dashboard seen failed'));
      let closed = false;
      return () => {
        if (closed) return;
        closed = true;
        const left = (open.get(principal.userId) ?? 1) - 1;
        if (left <= 0) open.delete(principal.userId);
        else open.set(principal.userId, left);
      };
    },

    /** Everyone whose dashboard this engine holds open is seen now (PRESENCE_TOUCH_MS). */
    async touchOpen(): Promise<void> {
      await deps.presence.touch([...open.keys()]);
    },

    /** "Available" without a dashboard for the idle time becomes "away" (PRESENCE_SWEEP_MS, on every engine). */
    async lapse(): Promise<number> {
      const lapsed = await deps.presence.lapse(deps.idleMinutes);
      for (const p of lapsed) {
        log.info({ workspaceId: p.workspace_id, userId: p.user_id }, 'available lapsed to away: no dashboard open');
        changed(p.workspace_id, p.user_id, p, 'away');
      }
      return lapsed.length;
    },
  };
}

export type PresenceService = ReturnType<typeof createPresence>;
