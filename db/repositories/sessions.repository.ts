/** Sessions, their turns and the team's notifications. The lease columns serialise turns across processes. */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.ts';
import { jsonb as json } from '../json.ts';
import { prepared } from '../prepared.ts';
import type { HandledBy, NotificationKind, SessionMessagesTable, SessionTurnsTable } from '../schema.ts';

export type SessionRow = Awaited<ReturnType<ReturnType<typeof sessionsRepository>['find']>>;

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
    /** The handler region's projection (migration 0019); ISO times. Absent: the row keeps its own. */
    handledBy?: HandledBy;
    agentUserId?: string | null;
    waitingSince?: string | null;
    handbackAt?: string | null;
    handlerRevision?: number;
  };
  /** The chat channels' messages of this turn (customer message, bot reply), in order; none on the phone. */
  messages?: MessageRecord[];
}

/** A row of `session_messages` as the runtime hands it over: the table's columns but `seq`, `at` as an ISO time. */
export type MessageRecord = Omit<Selectable<SessionMessagesTable>, 'seq' | 'at'> & { at: string };

/** The handler columns a change of the handler region writes (migration 0019). */
export interface HandlerWrite {
  id: string;
  state: string;
  status: 'active' | 'ended';
  snapshot: unknown;
  machineVersion: number;
  handledBy: HandledBy;
  agentUserId: string | null;
  waitingSince: string | null;
  handbackAt: string | null;
  handlerRevision: number;
}

export function sessionsRepository(db: Db) {
  return {
    async find(workspaceId: string, channel: 'phone' | 'whatsapp' | 'webchat', externalId: string) {
      return db
        .selectFrom('sessions')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('channel', '=', channel)
        .where('external_id', '=', externalId)
        .modifyEnd(prepared('session_find'))
        .executeTakeFirst();
    },

    async findById(workspaceId: string, id: string) {
      return db.selectFrom('sessions').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },

    /** Inserts the session unless one exists for the same external id; returns the row either way. */
    async findOrCreate(row: { id: string; workspace_id: string; channel: 'phone' | 'whatsapp' | 'webchat'; external_id: string; language: string; customer_phone: string | null; machine_version: number }) {
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

    /**
     * Takes the session's turn lease for `owner` when it is free, expired or already ours, and returns the session's
     * saved turn count with it (in the same statement), so the caller sees whether another process advanced the
     * session since its copy was loaded. Returns null when another process holds it: that process is running a turn
     * of this session now.
     */
    async acquireLease(sessionId: string, owner: string, leaseMs: number): Promise<{ turnCount: number; handlerRevision: number } | null> {
      const row = await db
        .updateTable('sessions')
        .set({ lease_owner: owner, lease_until: sql<Date>`now() + ${`${leaseMs} milliseconds`}::interval` })
        .where('id', '=', sessionId)
        .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_owner', '=', owner), eb('lease_until', '<', sql<Date>`now()`)]))
        .returning(['turn_count', 'handler_revision'])
        .modifyEnd(prepared('session_lease'))
        .executeTakeFirst();
      return row ? { turnCount: row.turn_count, handlerRevision: row.handler_revision } : null;
    },

    /**
     * Extends the leases `owner` holds on these sessions by `leaseMs` from now; returns the ids still held (a lease
     * that expired and was taken by another process meanwhile is not among them).
     */
    async renewLeases(sessionIds: readonly string[], owner: string, leaseMs: number): Promise<Set<string>> {
      if (sessionIds.length === 0) return new Set();
      // Rows locked in id order, as the turn save locks them (LOCK_IN_ID_ORDER).
      const { rows } = await sql<{ id: string }>`${prepared('session_lease_renew')}
        with locked as (
          select id from sessions where id = any(${sql.val(sessionIds)}::uuid[]) and lease_owner = ${owner} order by id for update
        )
        update sessions s set lease_until = now() + ${`${leaseMs} milliseconds`}::interval
        from locked where s.id = locked.id
        returning s.id`.execute(db);
      return new Set(rows.map((r) => r.id));
    },

    /** A stopping process gives back every lease it holds. */
    async releaseLeasesOf(owner: string): Promise<void> {
      await db.updateTable('sessions').set({ lease_owner: null, lease_until: null }).where('lease_owner', '=', owner).execute();
    },

    /**
     * Ends the phone sessions nobody continues: still `active`, quiet (no write) for `quietMs`, and with no lease in
     * force. A live call's process renews its held lease every few seconds, so such a session has no process behind
     * it: it was handed back on SIGTERM and no instance took the call again, or its process died. Returns how many.
     */
    async endAbandonedCalls(quietMs: number): Promise<number> {
      const result = await db
        .updateTable('sessions')
        .set({ status: 'ended', state: 'ended', lease_owner: null, lease_until: null, updated_at: sql<Date>`now()` })
        .where('channel', '=', 'phone')
        .where('status', '=', 'active')
        .where('updated_at', '<', sql<Date>`now() - ${`${quietMs} milliseconds`}::interval`)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', sql<Date>`now()`)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async releaseLease(sessionId: string, owner: string): Promise<void> {
      await db.updateTable('sessions').set({ lease_owner: null, lease_until: null }).where('id', '=', sessionId).where('lease_owner', '=', owner).execute();
    },

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
        handler_revision: s.handlerRevision ?? null,
      }));
      const messages = inputs.flatMap((i) => i.messages ?? []);
      await sql`${prepared('save_turns')}
        with v as (
          select * from jsonb_to_recordset(${json(sessions)}::jsonb) as v(id uuid, state text, status text, language text,
            customer_phone text, customer_email text, customer_name text, handoff jsonb, turn_count integer, snapshot jsonb,
            machine_version integer, release_lease boolean, handled_by text, agent_user_id uuid, waiting_since timestamptz,
            handback_at timestamptz, handler_revision integer, owner text)
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
          handler_revision = coalesce(v.handler_revision, s.handler_revision),
          lease_owner = case when v.release_lease then null else s.lease_owner end,
          lease_until = case when v.release_lease then null else s.lease_until end
        from v join locked on locked.id = v.id
        where s.id = v.id`.execute(db);
    },

    /**
     * A change of the handler region (take-over, hand-back, close, the hand-back deadline): the snapshot and its
     * projection, written only over the revision it was made from (`expectedRevision`), and the lease given back. False
     * when another process changed who handles the session meanwhile: then nothing was written. One conditional
     * UPDATE, so two take-overs at once on two processes cannot both win.
     */
    async saveHandler(write: HandlerWrite, expectedRevision: number, owner: string): Promise<boolean> {
      const result = await db
        .updateTable('sessions')
        .set({
          state: write.state,
          status: write.status,
          snapshot: json(write.snapshot),
          machine_version: write.machineVersion,
          handled_by: write.handledBy,
          agent_user_id: write.agentUserId,
          waiting_since: write.waitingSince,
          handback_at: write.handbackAt,
          handler_revision: write.handlerRevision,
          updated_at: sql<Date>`now()`,
          lease_owner: sql`case when lease_owner = ${owner} then null else lease_owner end`,
          lease_until: sql`case when lease_owner = ${owner} then null else lease_until end`,
        })
        .where('id', '=', write.id)
        .where('handler_revision', '=', expectedRevision)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** A message stored outside a turn (held for a person, an agent's, a sentence of the service); the session is touched. */
    async addMessage(message: MessageRecord, releaseLeaseOf: string | null = null): Promise<void> {
      await sql`
        with m as (
          insert into session_messages (id, session_id, "from", text, source, agent_user_id, turn_id, outbound_id, at)
          values (${message.id}, ${message.session_id}, ${message.from}, ${message.text}, ${message.source}, ${message.agent_user_id},
            ${message.turn_id}, ${message.outbound_id}, ${message.at}::timestamptz)
          on conflict do nothing
        )
        update sessions set updated_at = now(),
          lease_owner = case when ${releaseLeaseOf}::text is not null and lease_owner = ${releaseLeaseOf} then null else lease_owner end,
          lease_until = case when ${releaseLeaseOf}::text is not null and lease_owner = ${releaseLeaseOf} then null else lease_until end
        where id = ${message.session_id}`.execute(db);
    },

    /**
     * The session's messages in order, after the message `afterId` (all when null), with the agent's email and, for
     * WhatsApp, the delivery status of the outgoing row. Undefined when `afterId` is not a message of this session.
     */
    async messages(sessionId: string, afterId: string | null, limit: number) {
      let after = '0';
      if (afterId !== null) {
        const row = await db.selectFrom('session_messages').select('seq').where('session_id', '=', sessionId).where('id', '=', afterId).executeTakeFirst();
        if (!row) return undefined;
        after = String(row.seq);
      }
      return db
        .selectFrom('session_messages as m')
        .leftJoin('users as u', 'u.id', 'm.agent_user_id')
        .leftJoin('whatsapp_outbound_messages as o', 'o.id', 'm.outbound_id')
        .select(['m.id', 'm.seq', 'm.from', 'm.text', 'm.source', 'm.agent_user_id', 'm.at', 'm.outbound_id', 'u.email as agent_email', 'o.status as outbound_status', 'o.error_code', 'o.error_detail', 'o.http_status'])
        .where('m.session_id', '=', sessionId)
        .where('m.seq', '>', after)
        .orderBy('m.seq')
        .limit(limit)
        .execute();
    },

    async findMessage(sessionId: string, id: string) {
      return db.selectFrom('session_messages').selectAll().where('session_id', '=', sessionId).where('id', '=', id).executeTakeFirst();
    },

    /** Waiting sessions whose hand-back deadline passed (the sweep hands them back to the bot). */
    async dueHandbacks(limit: number) {
      return db
        .selectFrom('sessions')
        .select(['id', 'workspace_id', 'channel', 'external_id'])
        .where('handled_by', '=', 'waiting')
        .where('handback_at', '<=', sql<Date>`now()`)
        .orderBy('handback_at')
        .limit(limit)
        .execute();
    },

    async handbackAfterMinutes(workspaceId: string): Promise<number | null> {
      const row = await db.selectFrom('workspaces').select('handback_after_minutes').where('id', '=', workspaceId).executeTakeFirst();
      return row?.handback_after_minutes ?? null;
    },

    async setHandbackAfterMinutes(workspaceId: string, minutes: number | null): Promise<void> {
      await db.updateTable('workspaces').set({ handback_after_minutes: minutes }).where('id', '=', workspaceId).execute();
    },

    /** A user of the workspace who may hold a conversation (not removed). */
    async activeUser(workspaceId: string, userId: string) {
      return db.selectFrom('users').select(['id', 'email']).where('workspace_id', '=', workspaceId).where('id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
    },

    async saveSnapshot(input: { id: string; state: string; status: 'active' | 'ended'; snapshot: unknown; machineVersion: number }): Promise<void> {
      await db
        .updateTable('sessions')
        .set({ state: input.state, status: input.status, snapshot: json(input.snapshot), machine_version: input.machineVersion, updated_at: sql<Date>`now()` })
        .where('id', '=', input.id)
        .execute();
    },

    async list(workspaceId: string, filter: { channel?: string; status?: string; handledBy?: string; limit: number; before?: Date }) {
      let query = db
        .selectFrom('sessions as s')
        .leftJoin('users as u', 'u.id', 's.agent_user_id')
        .select(['s.id', 's.channel', 's.external_id', 's.status', 's.state', 's.language', 's.customer_phone', 's.customer_email', 's.customer_name', 's.handoff', 's.turn_count', 's.created_at', 's.updated_at'])
        .select(['s.handled_by', 's.agent_user_id', 'u.email as agent_email', 's.waiting_since'])
        // The preview in the list: the last chat message, or (phone, and turns before messages were kept) the last
        // thing the customer said; the same rule as the inbox's rows.
        .select(
          sql<string | null>`coalesce(
            (select json_build_object('from', m."from", 'text', m.text, 'at', m.at)::text from session_messages m where m.session_id = s.id order by m.seq desc limit 1),
            (select json_build_object('from', 'customer', 'text', t.customer_message, 'at', t.started_at)::text from session_turns t where t.session_id = s.id order by t.started_at desc limit 1))`.as('last_message'),
        )
        .where('s.workspace_id', '=', workspaceId);
      if (filter.channel) query = query.where('s.channel', '=', filter.channel as 'phone');
      if (filter.status) query = query.where('s.status', '=', filter.status as 'active');
      if (filter.handledBy) query = query.where('s.handled_by', '=', filter.handledBy as 'bot');
      if (filter.before) query = query.where('s.updated_at', '<', filter.before);
      return query.orderBy('s.updated_at', 'desc').limit(filter.limit).execute();
    },

    async userEmail(userId: string): Promise<string | undefined> {
      return (await db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirst())?.email;
    },

    async turns(sessionId: string) {
      return db.selectFrom('session_turns').selectAll().where('session_id', '=', sessionId).orderBy('started_at').orderBy('ordinal').execute();
    },

    /**
     * The last `limit` completed turns of the workspace's phone and WhatsApp sessions that asked the integrator, newest
     * first, with what the customer said and the bot-link summary of the live answer (the replay, src/integration/replay.ts).
     */
    async recentCustomerTurns(workspaceId: string, limit: number) {
      return db
        .selectFrom('session_turns as t')
        .innerJoin('sessions as s', 's.id', 't.session_id')
        .select(['t.id', 't.session_id', 't.ordinal', 't.language', 't.customer_message', 't.botlink', 't.started_at', 's.channel', 's.external_id', 's.customer_phone'])
        .where('s.workspace_id', '=', workspaceId)
        .where('s.channel', 'in', ['phone', 'whatsapp'])
        .where('t.status', '=', 'completed')
        .where('t.botlink', 'is not', null)
        .orderBy('t.started_at', 'desc')
        .orderBy('t.ordinal', 'desc')
        .limit(limit)
        .execute();
    },

    async addNotification(row: { id: string; workspace_id: string; session_id: string | null; kind: NotificationKind; message: string }): Promise<void> {
      await db.insertInto('notifications').values({ ...row, read_at: null }).execute();
    },

    /** Marks a notification done (read); false when the workspace has no such notification. Done twice stays done. */
    async markNotificationRead(workspaceId: string, id: string, at: Date): Promise<boolean> {
      const result = await db
        .updateTable('notifications')
        .set({ read_at: sql<Date>`coalesce(read_at, ${at})` })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async notifications(workspaceId: string, limit: number) {
      return db.selectFrom('notifications').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at', 'desc').limit(limit).execute();
    },

    async teamAvailable(workspaceId: string): Promise<boolean> {
      const row = await db.selectFrom('workspaces').select('team_available').where('id', '=', workspaceId).executeTakeFirst();
      return row?.team_available ?? false;
    },

    async setTeamAvailable(workspaceId: string, available: boolean): Promise<void> {
      await db.updateTable('workspaces').set({ team_available: available }).where('id', '=', workspaceId).execute();
    },
  };
}

export type SessionsRepository = ReturnType<typeof sessionsRepository>;
