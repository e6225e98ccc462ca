/** The sessions' turns and snapshots: a turn end saved in one statement, the turns read back. */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.ts';
import { jsonb as json } from '../json.ts';
import { prepared } from '../prepared.ts';
import type { HandledBy, SessionTurnsTable } from '../schema.ts';
import type { MessageRecord } from './session-messages.repository.ts';

type TurnJsonColumns = 'botlink' | 'knowledge' | 'tool_rounds' | 'handoff' | 'timings' | 'errors';
/** A turn row as the runtime hands it over: the table's columns, JSON ones as values (serialised here). */
export type TurnRecord = Omit<Selectable<SessionTurnsTable>, TurnJsonColumns | 'started_at' | 'ended_at'> &
  Record<TurnJsonColumns, unknown> & { started_at: Date; ended_at: Date };


/** One turn end: the turn's row and what the session row becomes. */
export interface SaveTurnInput {
  turn: TurnRecord;
  session: {
    id: string;
    state: string;
    status: 'active' | 'ended';
    language: string;
    customer: { phone: string | null; email: string | null; name: string | null };
    handoff: unknown;
    turnCount: number;
    snapshot: unknown;
    machineVersion: number;
    /** Give the turn's lease back (a session whose lease is held for the whole conversation keeps it). */
    releaseLease: boolean;
    /**
     * The engine that ran the turn: nothing of it is written while another engine holds the session's lease in force
     * (this one lost it, docs/reliability.md "Leases"), so a turn taken over never commits a second answer.
     */
    owner: string;
    /** The attendant region's projection (migration 0019); ISO times. Absent: the row keeps its own. */
    handledBy?: HandledBy;
    agentUserId?: string | null;
    waitingSince?: string | null;
    handbackAt?: string | null;
    attendantRevision?: number;
  };
  /** The chat channels' messages of this turn (customer message, bot reply), in order; none on the phone. */
  messages?: MessageRecord[];
}

/** Turn ends (batched), snapshots, and the turns of a session or of a workspace. */
export function sessionTurnsRepository(db: Db) {
  return {
    /**
     * Turn ends, any number of sessions at once: the turn rows and the sessions' snapshots (and their leases given
     * back where asked) in ONE statement, a data-modifying CTE, atomic on its own. The rows travel as two JSON
     * parameters, so a batch of 100 turns is one round trip and one parse like a batch of one. The session runtime
     * groups concurrent turn ends into one call (db/group-commit.ts); one session appears at most once per call.
     */
    async saveTurns(inputs: readonly SaveTurnInput[]): Promise<void> {
      if (inputs.length === 0) return;
      const turns = inputs.map(({ turn }) => ({ ...turn, started_at: turn.started_at.toISOString(), ended_at: turn.ended_at.toISOString() }));
      const sessions = inputs.map(({ session: s }) => ({
        id: s.id,
        state: s.state,
        status: s.status,
        language: s.language,
        customer_phone: s.customer.phone,
        customer_email: s.customer.email,
        customer_name: s.customer.name,
        handoff: s.handoff ?? null,
        turn_count: s.turnCount,
        snapshot: s.snapshot,
        machine_version: s.machineVersion,
        release_lease: s.releaseLease,
        owner: s.owner,
        handled_by: s.handledBy ?? null,
        agent_user_id: s.agentUserId ?? null,
        waiting_since: s.waitingSince ?? null,
        handback_at: s.handbackAt ?? null,
        attendant_revision: s.attendantRevision ?? null,
      }));
      const messages = inputs.flatMap((i) => i.messages ?? []);
      await sql`${prepared('save_turns')}
        with v as (
          select * from jsonb_to_recordset(${json(sessions)}::jsonb) as v(id uuid, state text, status text, language text,
            customer_phone text, customer_email text, customer_name text, handoff jsonb, turn_count integer, snapshot jsonb,
            machine_version integer, release_lease boolean, handled_by text, agent_user_id uuid, waiting_since timestamptz,
            handback_at timestamptz, attendant_revision integer, owner text)
        ), locked as (
          -- LOCK_IN_ID_ORDER: every statement that updates several sessions locks them in id order first; the lease
          -- renewal and this save used to lock the same rows in different orders and deadlock (docs/reliability.md).
          -- The fence: a session whose lease another engine holds in force is not written (this engine lost it).
          select s.id from sessions s
          where s.id in (select id from v)
            and (s.lease_owner is null or s.lease_until < now() or exists (select from v where v.id = s.id and v.owner = s.lease_owner))
          order by s.id for update
        ), turn as (
          insert into session_turns (id, session_id, ordinal, status, language, customer_message, reply, source, botlink,
            knowledge, tool_rounds, handoff, timings, errors, started_at, ended_at)
          select id, session_id, ordinal, status, language, customer_message, reply, source, botlink,
            knowledge, coalesce(tool_rounds, '[]'), handoff, coalesce(timings, '{}'), coalesce(errors, '[]'), started_at, ended_at
          from jsonb_to_recordset(${json(turns)}::jsonb) as t(id text, session_id uuid, ordinal integer, status text,
            language text, customer_message text, reply text, source text, botlink jsonb, knowledge jsonb, tool_rounds jsonb,
            handoff jsonb, timings jsonb, errors jsonb, started_at timestamptz, ended_at timestamptz)
          where t.session_id in (select id from locked)
          on conflict (id) do nothing
        ), message as (
          insert into session_messages (id, session_id, "from", text, source, agent_user_id, turn_id, outbound_id, at)
          select id, session_id, "from", text, source, agent_user_id, turn_id, outbound_id, at
          from jsonb_to_recordset(${json(messages)}::jsonb) as m(id uuid, session_id uuid, "from" text, text text, source text,
            agent_user_id uuid, turn_id text, outbound_id uuid, at timestamptz)
          where m.session_id in (select id from locked)
          order by at
          on conflict do nothing
        )
        update sessions s set
          state = v.state, status = v.status, language = v.language,
          -- A turn never forgets who the customer is: details saved beside the machine (a web chat's lead,
          -- docs/webchat.md) stay until the machine itself knows better.
          customer_phone = coalesce(v.customer_phone, s.customer_phone), customer_email = coalesce(v.customer_email, s.customer_email),
          customer_name = coalesce(v.customer_name, s.customer_name), handoff = v.handoff, turn_count = v.turn_count,
          snapshot = v.snapshot, machine_version = v.machine_version, updated_at = now(),
          handled_by = coalesce(v.handled_by, s.handled_by),
          agent_user_id = case when v.handled_by is null then s.agent_user_id else v.agent_user_id end,
          waiting_since = case when v.handled_by is null then s.waiting_since else v.waiting_since end,
          handback_at = case when v.handled_by is null then s.handback_at else v.handback_at end,
          attendant_revision = coalesce(v.attendant_revision, s.attendant_revision),
          lease_owner = case when v.release_lease then null else s.lease_owner end,
          lease_until = case when v.release_lease then null else s.lease_until end
        from v
        -- = ANY(ARRAY(...)): the sessions are found by their key. A join made the planner, which guesses 100 rows
        -- for jsonb_to_recordset, scan the whole table up to some 30,000 sessions.
        where s.id = any(array(select id from locked)) and s.id = v.id`.execute(db);
    },

    async saveSnapshot(input: { id: string; state: string; status: 'active' | 'ended'; snapshot: unknown; machineVersion: number }): Promise<void> {
      await db
        .updateTable('sessions')
        .set({ state: input.state, status: input.status, snapshot: json(input.snapshot), machine_version: input.machineVersion, updated_at: sql<Date>`now()` })
        .where('id', '=', input.id)
        .execute();
    },

    async turns(sessionId: string) {
      return db.selectFrom('session_turns').selectAll().where('session_id', '=', sessionId).orderBy('started_at').orderBy('ordinal').execute();
    },

    /**
     * The last `limit` completed turns of the workspace's phone and WhatsApp sessions that asked the integrator, newest
     * first, with what the customer said, the bot-link summary of the live answer and the turn's knowledge search (the
     * replay and its judge, src/integration/replay.ts).
     */
    async recentCustomerTurns(workspaceId: string, limit: number) {
      return db
        .selectFrom('session_turns as t')
        .innerJoin('sessions as s', 's.id', 't.session_id')
        .select(['t.id', 't.session_id', 't.ordinal', 't.language', 't.customer_message', 't.botlink', 't.knowledge', 't.started_at', 's.channel', 's.external_id', 's.customer_phone'])
        .where('s.workspace_id', '=', workspaceId)
        .where('s.channel', 'in', ['phone', 'whatsapp'])
        // A scenario's test conversations were never customers' (docs/scenarios.md).
        .where('s.test_run_id', 'is', null)
        .where('t.status', '=', 'completed')
        .where('t.botlink', 'is not', null)
        .orderBy('t.started_at', 'desc')
        .orderBy('t.ordinal', 'desc')
        .limit(limit)
        .execute();
    },
  };
}
