/** Sessions, their turns and the team's notifications. The lease columns serialise turns across processes. */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.ts';
import type { SessionTurnsTable } from '../schema.ts';

export type SessionRow = Awaited<ReturnType<ReturnType<typeof sessionsRepository>['find']>>;

type TurnJsonColumns = 'botlink' | 'knowledge' | 'tool_rounds' | 'handoff' | 'timings' | 'errors';
/** A turn row as the runtime hands it over: the table's columns, JSON ones as values (serialised here). */
export type TurnRecord = Omit<Selectable<SessionTurnsTable>, TurnJsonColumns | 'started_at' | 'ended_at'> &
  Record<TurnJsonColumns, unknown> & { started_at: Date; ended_at: Date };

const json = (value: unknown): string => JSON.stringify(value ?? null);

export function sessionsRepository(db: Db) {
  return {
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
     * Takes the session's turn lease for `owner` when it is free, expired or already ours. Returns false when another
     * process holds it: that process is running a turn of this session now.
     */
    async acquireLease(sessionId: string, owner: string, leaseMs: number): Promise<boolean> {
      const result = await db
        .updateTable('sessions')
        .set({ lease_owner: owner, lease_until: sql<Date>`now() + ${`${leaseMs} milliseconds`}::interval` })
        .where('id', '=', sessionId)
        .where((eb) => eb.or([eb('lease_owner', 'is', null), eb('lease_owner', '=', owner), eb('lease_until', '<', sql<Date>`now()`)]))
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async releaseLease(sessionId: string, owner: string): Promise<void> {
      await db.updateTable('sessions').set({ lease_owner: null, lease_until: null }).where('id', '=', sessionId).where('lease_owner', '=', owner).execute();
    },

    /**
     * Turn end: the turn row and the session's snapshot, and the lease given back, in ONE statement (a data-modifying
     * CTE is atomic on its own): one round trip instead of BEGIN, INSERT, UPDATE, COMMIT on every turn.
     */
    async saveTurn(input: {
      turn: TurnRecord;
      session: {
        id: string;
        owner: string;
        state: string;
        status: 'active' | 'ended';
        language: string;
        customer: { phone: string | null; email: string | null; name: string | null };
        handoff: unknown;
        turnCount: number;
        snapshot: unknown;
        machineVersion: number;
        releaseLease: boolean;
      };
    }): Promise<void> {
      const { turn, session } = input;
      await db
        .with('turn', (q) =>
          q
            .insertInto('session_turns')
            .values({
              ...turn,
              botlink: json(turn.botlink),
              knowledge: json(turn.knowledge),
              tool_rounds: json(turn.tool_rounds),
              handoff: json(turn.handoff),
              timings: json(turn.timings),
              errors: json(turn.errors),
            })
            .onConflict((oc) => oc.column('id').doNothing()),
        )
        .updateTable('sessions')
        .set({
          state: session.state,
          status: session.status,
          language: session.language,
          customer_phone: session.customer.phone,
          customer_email: session.customer.email,
          customer_name: session.customer.name,
          handoff: json(session.handoff),
          turn_count: session.turnCount,
          snapshot: json(session.snapshot),
          machine_version: session.machineVersion,
          updated_at: sql<Date>`now()`,
          ...(session.releaseLease ? { lease_owner: null, lease_until: null } : {}),
        })
        .where('id', '=', session.id)
        .execute();
    },

    async saveSnapshot(input: { id: string; state: string; status: 'active' | 'ended'; snapshot: unknown; machineVersion: number }): Promise<void> {
      await db
        .updateTable('sessions')
        .set({ state: input.state, status: input.status, snapshot: json(input.snapshot), machine_version: input.machineVersion, updated_at: sql<Date>`now()` })
        .where('id', '=', input.id)
        .execute();
    },

    async list(workspaceId: string, filter: { channel?: string; status?: string; limit: number; before?: Date }) {
      let query = db.selectFrom('sessions').select(['id', 'channel', 'external_id', 'status', 'state', 'language', 'customer_phone', 'customer_email', 'customer_name', 'handoff', 'turn_count', 'created_at', 'updated_at']).where('workspace_id', '=', workspaceId);
      if (filter.channel) query = query.where('channel', '=', filter.channel as 'phone');
      if (filter.status) query = query.where('status', '=', filter.status as 'active');
      if (filter.before) query = query.where('updated_at', '<', filter.before);
      return query.orderBy('updated_at', 'desc').limit(filter.limit).execute();
    },

    async turns(sessionId: string) {
      return db.selectFrom('session_turns').selectAll().where('session_id', '=', sessionId).orderBy('started_at').orderBy('ordinal').execute();
    },

    async addNotification(row: { id: string; workspace_id: string; session_id: string | null; kind: 'forward' | 'human_followup'; message: string }): Promise<void> {
      await db.insertInto('notifications').values({ ...row, read_at: null }).execute();
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
