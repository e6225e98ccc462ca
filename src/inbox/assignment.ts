/**
 * Assignment of waiting conversations (docs/architecture.md, "Presence and assignment"): when a conversation starts
 * waiting for a person, and when someone becomes available, the oldest waiting conversations nobody is assigned to go
 * to the available people, each to the least busy (fewest conversations held or assigned) under ASSIGN_MAX_PER_AGENT,
 * ties to whoever waited longest since their last assignment. The repository takes the workspace's advisory lock, so
 * two engines assigning at once never give one conversation to two people. A colleague may also assign one by hand.
 * Each assignment is an inbox change on the live bus: every engine's dashboards show it, and the assignee is told.
 */
import type { Principal } from '../../db/repositories/accounts.repository.ts';
import type { Assignment, TeamPresenceRepository } from '../../db/repositories/team-presence.repository.ts';
import type { SessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { displayName, type NamedUser } from '../accounts/display-name.ts';
import { AppError, notFound } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { InboxEvents } from '../sessions/inbox-events.ts';
import { ASSIGN_BATCH } from './limits.ts';

export interface AssignmentDeps {
  presence: Pick<TeamPresenceRepository, 'assignWaiting' | 'assignTo' | 'workspacesWithUnassigned'>;
  sessions: Pick<SessionsRepository, 'findById'>;
  inbox: Pick<InboxEvents, 'publish'>;
  /** PRESENCE_IDLE_MINUTES and ASSIGN_MAX_PER_AGENT (src/config.ts). */
  idleMinutes: number;
  maxPerAgent: number;
  logger: Logger;
}

const iso = (value: Date | string) => new Date(value).toISOString();

/** `assigned_to` as the API shows it, from the JSON text a list selects (assignedToSql) or a user read for one session. */
export function assignedToView(value: string | ({ user_id: string } & NamedUser) | null | undefined): { user_id: string; name: string } | null {
  if (value === null || value === undefined) return null;
  const user = typeof value === 'string' ? (JSON.parse(value) as { user_id: string } & NamedUser) : value;
  return { user_id: user.user_id, name: displayName(user) };
}

export function createAssignment(deps: AssignmentDeps) {
  const log = deps.logger.child({ component: 'assignment' });
  // One round per workspace at a time on this engine; a request during a round runs one more round after it.
  const running = new Map<string, Promise<void>>();
  const again = new Set<string>();

  function announce(a: Assignment): void {
    deps.inbox.publish({
      workspaceId: a.workspace_id,
      sessionId: a.session_id,
      channel: a.channel,
      reason: 'assigned',
      handledBy: 'waiting',
      agent: null,
      waitingSince: iso(a.waiting_since),
      lastMessage: null,
      assignedTo: { user_id: a.user_id, name: displayName(a) },
    });
  }

  async function round(workspaceId: string): Promise<Assignment[]> {
    const assigned = await deps.presence.assignWaiting(workspaceId, { idleMinutes: deps.idleMinutes, maxPerAgent: deps.maxPerAgent, limit: ASSIGN_BATCH });
    for (const a of assigned) {
      log.info({ workspaceId, sessionId: a.session_id, userId: a.user_id, waitedMs: Date.now() - a.waiting_since.getTime() }, 'waiting conversation assigned');
      announce(a);
    }
    return assigned;
  }

  /** Assigns the workspace's waiting conversations now; concurrent asks on this engine fold into one more round. */
  function assignNow(workspaceId: string): Promise<void> {
    const current = running.get(workspaceId);
    if (current) {
      again.add(workspaceId);
      return current;
    }
    const work = (async () => {
      try {
        do {
          again.delete(workspaceId);
          await round(workspaceId);
        } while (again.has(workspaceId));
      } finally {
        running.delete(workspaceId);
      }
    })();
    running.set(workspaceId, work);
    return work;
  }

  return {
    assignNow,

    /** A conversation of the workspace may have started waiting, or someone became available: assign, log a failure. */
    soon(workspaceId: string): void {
      void assignNow(workspaceId).catch((err: unknown) => log.warn({ err, workspaceId }, 'assigning waiting conversations failed; the sweep tries again'));
    },

    /** The sweep: every workspace with a waiting conversation nobody is assigned to (a missed change, an engine that stopped). */
    async sweep(): Promise<void> {
      for (const workspaceId of await deps.presence.workspacesWithUnassigned(ASSIGN_BATCH)) await assignNow(workspaceId);
    },

    /** POST /v1/sessions/{id}/assign: a colleague gives a waiting conversation to `userId` (available or not). */
    async assignTo(principal: Principal, sessionId: string, userId: string) {
      const row = await deps.sessions.findById(principal.workspaceId, sessionId);
      if (!row) throw notFound('The session');
      if (row.channel === 'phone') {
        throw new AppError('phone_session', 'A phone session cannot be assigned here: the phone hands a caller to a person with its transfer (PUT /v1/phone).');
      }
      const result = await deps.presence.assignTo(principal.workspaceId, row.id, userId);
      if (!result.ok && result.reason === 'no_user') throw notFound('The user');
      if (!result.ok) throw new AppError('conflict', 'Only a conversation waiting for a person can be assigned; a person holds this one, or the bot answers it.');
      const assignedTo = { user_id: userId, name: displayName(result) };
      log.info({ workspaceId: principal.workspaceId, sessionId: row.id, userId, by: principal.userId }, 'waiting conversation assigned by a colleague');
      deps.inbox.publish({
        workspaceId: principal.workspaceId,
        sessionId: row.id,
        channel: row.channel,
        reason: 'assigned',
        handledBy: 'waiting',
        agent: null,
        waitingSince: row.waiting_since ? iso(row.waiting_since) : null,
        lastMessage: null,
        assignedTo,
      });
      return { assigned_to: assignedTo };
    },
  };
}

export type AssignmentService = ReturnType<typeof createAssignment>;
