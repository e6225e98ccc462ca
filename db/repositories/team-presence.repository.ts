/**
 * The team's presence and the assignment of waiting conversations (docs/architecture.md, "Presence and assignment").
 * Presence is one row per person; "available" counts only while `last_seen_at` is within the idle time, so a lapse is
 * true on every engine before the sweep writes it. Assignment runs under a transaction-level advisory lock per
 * workspace: two engines assigning at once take turns, and a conversation is never given to two people.
 */
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../database.ts';
import type { PresenceStatus } from '../schema.ts';

/** A person of the team as the assignment sees them: their load (open conversations held or assigned) and last assignment. */
export interface AssignableAgent {
  user_id: string;
  email: string;
  name: string | null;
  load: number;
  last_assigned_at: Date | null;
}

/** A waiting conversation given to someone now. */
export interface Assignment {
  session_id: string;
  workspace_id: string;
  external_id: string;
  channel: 'whatsapp' | 'webchat' | 'phone';
  waiting_since: Date;
  user_id: string;
  email: string;
  name: string | null;
}

const idleSince = (idleMinutes: number) => sql<Date>`now() - (${idleMinutes} * interval '1 minute')`;

/** The conversations a person has on their plate: held by them, or waiting and assigned to them for this wait. */
const loadOf = (userId: Expression<string>) => sql<string>`(
  select count(*) from sessions s
  where s.workspace_id = p.workspace_id and s.status = 'active'
    and ((s.handled_by = 'agent' and s.agent_user_id = ${userId})
      or (s.handled_by = 'waiting' and s.assigned_user_id = ${userId} and s.assigned_waiting_since = s.waiting_since)))`;

export function teamPresenceRepository(db: Db) {
  return {
    /** Sets a person's presence; setting it also counts as being seen (the person is at their dashboard). */
    async set(workspaceId: string, userId: string, status: PresenceStatus): Promise<void> {
      await db
        .insertInto('team_presence')
        .values({ user_id: userId, workspace_id: workspaceId, status, changed_at: sql<Date>`now()`, last_seen_at: sql<Date>`now()` })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ status, changed_at: sql<Date>`now()`, last_seen_at: sql<Date>`now()` }))
        .execute();
    },

    /**
     * Every live user of the workspace with their presence as it holds now: `available` past the idle time reads as
     * `away` already (the sweep writes it soon after); a user who never set one is `offline`.
     */
    async list(workspaceId: string, idleMinutes: number) {
      return db
        .selectFrom('users as u')
        .leftJoin('team_presence as p', 'p.user_id', 'u.id')
        .select(['u.id', 'u.email', 'u.name'])
        .select(
          sql<PresenceStatus>`case when p.status = 'available' and p.last_seen_at < ${idleSince(idleMinutes)} then 'away' else coalesce(p.status, 'offline') end`.as('status'),
        )
        .where('u.workspace_id', '=', workspaceId)
        .where('u.revoked_at', 'is', null)
        .orderBy('u.email')
        .execute();
    },

    /** One person's presence as it holds now (see `list`). */
    async get(userId: string, idleMinutes: number): Promise<PresenceStatus> {
      const row = await db
        .selectFrom('team_presence')
        .select(sql<PresenceStatus>`case when status = 'available' and last_seen_at < ${idleSince(idleMinutes)} then 'away' else status end`.as('status'))
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row?.status ?? 'offline';
    },

    /** Whether anyone of the workspace is available now. */
    async anyAvailable(workspaceId: string, idleMinutes: number): Promise<boolean> {
      const row = await db
        .selectFrom('team_presence as p')
        .innerJoin('users as u', 'u.id', 'p.user_id')
        .select('p.user_id')
        .where('p.workspace_id', '=', workspaceId)
        .where('p.status', '=', 'available')
        .where('p.last_seen_at', '>=', idleSince(idleMinutes))
        .where('u.revoked_at', 'is', null)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Everyone of the workspace who is available becomes away (PUT /v1/team with available false: the team closes); returns who. */
    async setAllAway(workspaceId: string): Promise<{ user_id: string; workspace_id: string; email: string; name: string | null }[]> {
      return db
        .updateTable('team_presence')
        .set({ status: 'away', changed_at: sql<Date>`now()` })
        .where('workspace_id', '=', workspaceId)
        .where('status', '=', 'available')
        .returning(['user_id', 'workspace_id', emailOfPresence, nameOfPresence])
        .execute();
    },

    /** These people's dashboards are open on this engine: one statement for all of them. */
    async touch(userIds: readonly string[]): Promise<void> {
      if (userIds.length === 0) return;
      await db.updateTable('team_presence').set({ last_seen_at: sql<Date>`now()` }).where('user_id', 'in', [...userIds]).execute();
    },

    /** "Available" without an open dashboard for the idle time becomes "away"; returns who lapsed. */
    async lapse(idleMinutes: number): Promise<{ user_id: string; workspace_id: string; email: string; name: string | null }[]> {
      return db
        .updateTable('team_presence')
        .set({ status: 'away', changed_at: sql<Date>`now()` })
        .where('status', '=', 'available')
        .where('last_seen_at', '<', idleSince(idleMinutes))
        .returning(['user_id', 'workspace_id', emailOfPresence, nameOfPresence])
        .execute();
    },

    /** Workspaces with a waiting conversation nobody is assigned to for its wait (the assignment sweep's work list). */
    async workspacesWithUnassigned(limit: number): Promise<string[]> {
      const rows = await db
        .selectFrom('sessions')
        .select('workspace_id')
        .distinct()
        .where('handled_by', '=', 'waiting')
        .where('channel', '<>', 'phone')
        .where(unassigned)
        .limit(limit)
        .execute();
      return rows.map((r) => r.workspace_id);
    },

    /**
     * The oldest waiting conversations nobody is assigned to go to the available people, each to the least busy under
     * `maxPerAgent` (ties: the longest since their last assignment), in one transaction under the workspace's lock.
     */
    async assignWaiting(workspaceId: string, options: { idleMinutes: number; maxPerAgent: number; limit: number }): Promise<Assignment[]> {
      return db.transaction().execute(async (trx) => {
        await lockWorkspace(trx, workspaceId);
        const waiting = await trx
          .selectFrom('sessions')
          .select(['id', 'external_id', 'channel', 'waiting_since'])
          .where('workspace_id', '=', workspaceId)
          .where('handled_by', '=', 'waiting')
          .where('channel', '<>', 'phone')
          .where(unassigned)
          .orderBy('waiting_since', 'asc')
          .limit(options.limit)
          .execute();
        if (waiting.length === 0) return [];
        const agents: AssignableAgent[] = (
          await trx
            .selectFrom('team_presence as p')
            .innerJoin('users as u', 'u.id', 'p.user_id')
            .select(['p.user_id', 'u.email', 'u.name', 'p.last_assigned_at'])
            .select((eb) => loadOf(eb.ref('p.user_id')).as('load'))
            .where('p.workspace_id', '=', workspaceId)
            .where('p.status', '=', 'available')
            .where('p.last_seen_at', '>=', idleSince(options.idleMinutes))
            .where('u.revoked_at', 'is', null)
            .execute()
        ).map((a) => ({ ...a, load: Number(a.load), last_assigned_at: a.last_assigned_at === null ? null : new Date(a.last_assigned_at) }));
        const assigned: Assignment[] = [];
        for (const conversation of waiting) {
          const agent = nextAgent(agents, options.maxPerAgent);
          if (!agent) break;
          const at = new Date();
          const updated = await trx
            .updateTable('sessions')
            .set({ assigned_user_id: agent.user_id, assigned_waiting_since: sql<Date>`waiting_since` })
            .where('id', '=', conversation.id)
            .where('handled_by', '=', 'waiting')
            .executeTakeFirst();
          if (updated.numUpdatedRows === 0n) continue;
          await trx.updateTable('team_presence').set({ last_assigned_at: sql<Date>`now()` }).where('user_id', '=', agent.user_id).execute();
          agent.load++;
          agent.last_assigned_at = at;
          assigned.push({
            session_id: conversation.id,
            workspace_id: workspaceId,
            external_id: conversation.external_id,
            channel: conversation.channel,
            waiting_since: new Date(conversation.waiting_since!),
            user_id: agent.user_id,
            email: agent.email,
            name: agent.name,
          });
        }
        return assigned;
      });
    },

    /**
     * A colleague assigns a waiting conversation to `userId` (available or not), under the workspace's lock.
     * `no_user`: no live user of that workspace; `not_waiting`: the conversation is not waiting for a person.
     */
    async assignTo(
      workspaceId: string,
      sessionId: string,
      userId: string,
    ): Promise<{ ok: true; email: string; name: string | null } | { ok: false; reason: 'no_user' | 'not_waiting' }> {
      return db.transaction().execute(async (trx) => {
        await lockWorkspace(trx, workspaceId);
        const user = await trx
          .selectFrom('users')
          .select(['email', 'name'])
          .where('id', '=', userId)
          .where('workspace_id', '=', workspaceId)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        if (!user) return { ok: false, reason: 'no_user' } as const;
        const updated = await trx
          .updateTable('sessions')
          .set({ assigned_user_id: userId, assigned_waiting_since: sql<Date>`waiting_since` })
          .where('id', '=', sessionId)
          .where('workspace_id', '=', workspaceId)
          .where('handled_by', '=', 'waiting')
          .executeTakeFirst();
        if (updated.numUpdatedRows === 0n) return { ok: false, reason: 'not_waiting' } as const;
        await trx.updateTable('team_presence').set({ last_assigned_at: sql<Date>`now()` }).where('user_id', '=', userId).execute();
        return { ok: true, email: user.email, name: user.name } as const;
      });
    },

    /** The user a conversation is assigned to now: the holder while a person holds it, the assignee of its wait while it waits. */
    async assignee(sessionId: string): Promise<{ user_id: string; email: string; name: string | null } | null> {
      const row = await db
        .selectFrom('sessions as s')
        .innerJoin('users as u', (join) => join.on(sql<SqlBool>`u.id = ${assignedUserSql}`))
        .select(['u.id as user_id', 'u.email', 'u.name'])
        .where('s.id', '=', sessionId)
        .executeTakeFirst();
      return row ?? null;
    },
  };
}

/** The email and name of a `team_presence` row's person, to return beside a change of it (who changed, named as colleagues see them). */
const emailOfPresence = sql<string>`(select u.email from users u where u.id = team_presence.user_id)`.as('email');
const nameOfPresence = sql<string | null>`(select u.name from users u where u.id = team_presence.user_id)`.as('name');

/** The conversations waiting with nobody assigned for this wait; a scenario's test conversation is never assigned (docs/scenarios.md). */
const unassigned = sql<SqlBool>`(assigned_user_id is null or assigned_waiting_since is distinct from waiting_since) and test_run_id is null`;

/** The SQL of "assigned to" for a session aliased `s`, to select beside the other columns of a list. */
export const assignedUserSql = sql<string | null>`case
  when s.handled_by = 'agent' then s.agent_user_id
  when s.handled_by = 'waiting' and s.assigned_waiting_since = s.waiting_since then s.assigned_user_id
  else null end`;

/** Who a session aliased `s` is assigned to now, as JSON text `{user_id, email, name}` or null: to select beside a list's columns. */
export const assignedToSql = sql<string | null>`(select json_build_object('user_id', au.id, 'email', au.email, 'name', au.name)::text from users au where au.id = ${assignedUserSql})`;

/** The same for one session row already read: the holder while a person holds it, the assignee of its wait while it waits. */
export function assignedUserOf(row: {
  handled_by: string;
  agent_user_id: string | null;
  assigned_user_id?: string | null;
  assigned_waiting_since?: Date | string | null;
  waiting_since: Date | string | null;
}): string | null {
  if (row.handled_by === 'agent') return row.agent_user_id;
  if (row.handled_by !== 'waiting' || !row.assigned_user_id || !row.assigned_waiting_since || !row.waiting_since) return null;
  return new Date(row.assigned_waiting_since).getTime() === new Date(row.waiting_since).getTime() ? row.assigned_user_id : null;
}

async function lockWorkspace(trx: Db, workspaceId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`assign:${workspaceId}`}, 0))`.execute(trx);
}

/** The least busy under the cap; ties go to whoever waited longest since their last assignment (never: first). */
export function nextAgent<T extends { user_id: string; load: number; last_assigned_at: Date | null }>(agents: T[], maxPerAgent: number): T | undefined {
  let best: T | undefined;
  for (const a of agents) {
    if (a.load >= maxPerAgent) continue;
    const since = a.last_assigned_at?.getTime() ?? -Infinity;
    if (!best || a.load < best.load || (a.load === best.load && since < (best.last_assigned_at?.getTime() ?? -Infinity))) best = a;
  }
  return best;
}

export type TeamPresenceRepository = ReturnType<typeof teamPresenceRepository>;
