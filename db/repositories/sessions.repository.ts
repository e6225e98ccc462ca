/** Sessions, their turns and the team's notifications. The lease columns serialise turns across processes. */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { assignedToSql } from './team-presence.repository.ts';
import { conversationLabelsRepository, firstCustomerWordsSql } from './conversation-labels.repository.ts';
import { sessionAttendantRepository } from './session-attendant.repository.ts';
import { sessionLeasesRepository } from './session-leases.repository.ts';
import { sessionMessagesRepository } from './session-messages.repository.ts';
import { sessionNotificationsRepository } from './session-notifications.repository.ts';
import { sessionTurnsRepository } from './session-turns.repository.ts';

export type { AttendantWrite } from './session-attendant.repository.ts';
export type { MessageRecord } from './session-messages.repository.ts';
export type { SaveTurnInput, TurnRecord } from './session-turns.repository.ts';

export type SessionRow = Awaited<ReturnType<ReturnType<typeof sessionsRepository>['find']>>;

/** The session rows themselves here; leases, turns, messages, the attendant region and notifications by concern. */
export function sessionsRepository(db: Db) {
  return {
    ...sessionLeasesRepository(db),
    ...sessionTurnsRepository(db),
    ...sessionMessagesRepository(db),
    ...sessionAttendantRepository(db),
    ...sessionNotificationsRepository(db),
    ...conversationLabelsRepository(db),

    // Not a named statement (db/prepared.ts): several indexes start with workspace_id, and a generic plan made while
    // the table was small and never analyzed read every session of the workspace (4 ms at 10,000) until the next
    // ANALYZE. Planned each time, it finds the row by sessions_external; a session is loaded once per conversation.
    async find(workspaceId: string, channel: 'phone' | 'whatsapp' | 'webchat', externalId: string) {
      return db
        .selectFrom('sessions')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('channel', '=', channel)
        .where('external_id', '=', externalId)
        .executeTakeFirst();
    },

    async findById(workspaceId: string, id: string) {
      return db.selectFrom('sessions').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },

    /** Inserts the session unless one exists for the same external id; returns the row either way. */
    async findOrCreate(row: {
      id: string;
      workspace_id: string;
      channel: 'phone' | 'whatsapp' | 'webchat';
      external_id: string;
      language: string;
      customer_phone: string | null;
      machine_version: number;
      /** A scenario's test conversation (docs/scenarios.md): its run, and the scenario's customer email and name. */
      test_run_id?: string;
      customer_email?: string | null;
      customer_name?: string | null;
    }) {
      // Read first: restoring a known session (the common case) then costs one query and no write.
      const existing = await this.find(row.workspace_id, row.channel, row.external_id);
      if (existing) return existing;
      await db
        .insertInto('sessions')
        .values(row)
        .onConflict((oc) => oc.columns(['workspace_id', 'channel', 'external_id']).doNothing())
        .execute();
      return (await this.find(row.workspace_id, row.channel, row.external_id))!;
    },

    async list(workspaceId: string, filter: { channel?: string; status?: string; handledBy?: string; limit: number; before?: Date }) {
      let query = db
        .selectFrom('sessions as s')
        .leftJoin('users as u', 'u.id', 's.agent_user_id')
        .select(['s.id', 's.channel', 's.external_id', 's.status', 's.state', 's.language', 's.customer_phone', 's.customer_email', 's.customer_name', 's.handoff', 's.turn_count', 's.created_at', 's.updated_at'])
        .select(['s.handled_by', 's.agent_user_id', 'u.email as agent_email', 'u.name as agent_name', 's.waiting_since'])
        // Who it is assigned to (migration 0030; db/repositories/team-presence.repository.ts).
        .select(assignedToSql.as('assigned_to'))
        // The preview in the list: the last chat message, or (phone, and turns before messages were kept) the last
        // thing the customer said; the same rule as the inbox's rows.
        .select(
          sql<string | null>`coalesce(
            (select json_build_object('from', m."from", 'text', m.text, 'at', m.at)::text from session_messages m where m.session_id = s.id order by m.seq desc limit 1),
            (select json_build_object('from', 'customer', 'text', t.customer_message, 'at', t.started_at)::text from session_turns t where t.session_id = s.id order by t.started_at desc limit 1))`.as('last_message'),
        )
        // Its name in the list when the customer has none (src/text/conversation-label.ts).
        .select(firstCustomerWordsSql.as('first_words'))
        // A conversation a person of the team answered is never "not connected" in the list, whatever the handoff said.
        .select(sql<boolean>`exists (select 1 from session_messages a where a.session_id = s.id and a."from" = 'agent')`.as('answered_by_team'))
        .where('s.workspace_id', '=', workspaceId)
        // Test conversations are never the team's (docs/scenarios.md).
        .where('s.test_run_id', 'is', null);
      if (filter.channel) query = query.where('s.channel', '=', filter.channel as 'phone');
      if (filter.status) query = query.where('s.status', '=', filter.status as 'active');
      if (filter.handledBy) query = query.where('s.handled_by', '=', filter.handledBy as 'bot');
      if (filter.before) query = query.where('s.updated_at', '<', filter.before);
      return query.orderBy('s.updated_at', 'desc').limit(filter.limit).execute();
    },
  };
}

export type SessionsRepository = ReturnType<typeof sessionsRepository>;