// Over 400 lines: one aggregate's statements (webhook events, messages, replies, statuses), each short.
/**
 * WhatsApp's rows (migration 0007): the workspace's account, the raw webhook bodies, the conversations (session ids
 * with their rollover), the customers' messages and our replies with their delivery status.
 *
 * Every queue (raw events, customer messages, replies) is claimed the same way: one UPDATE whose subquery picks free
 * rows `FOR UPDATE SKIP LOCKED`, stamping `claimed_by` and a lease. Two processes never claim the same row, and the
 * rows of a process that died are free again when its lease runs out. Finishing a row checks `claimed_by`, so a
 * process whose lease was taken over cannot overwrite the new owner's result.
 */
import { sql, type ExpressionBuilder } from 'kysely';
import type { Db } from '../database.ts';
import type { Database, WhatsappInboundOutcome, WhatsappOutboundMessage, WhatsappOutboundMessagesTable, WhatsappOutboundStatus } from '../schema.ts';
import { upsertPerWorkspace } from './upsert.ts';
import { isUniqueViolation } from '../unique-violation.ts';

/** The order delivery statuses move in; a status never replaces a higher one (read never goes back to delivered). */
export const STATUS_RANK: Readonly<Record<WhatsappOutboundStatus, number>> = {
  queued: 0,
  accepted: 1,
  sent: 2,
  // A failure reported after `sent` is news; one reported after `delivered` or `read` is not believed.
  failed: 3,
  delivered: 4,
  read: 5,
};

const interval = (ms: number) => sql<Date>`now() + ${`${Math.round(ms)} milliseconds`}::interval`;

/** What every failed send attempt records: one more attempt, the failure, and the claim given back. */
function attemptFailed(
  eb: ExpressionBuilder<Database, 'whatsapp_outbound_messages'>,
  failure: { httpStatus: number | null; code: number | null; detail: string },
) {
  return {
    attempts: eb('attempts', '+', 1),
    http_status: failure.httpStatus,
    error_code: failure.code,
    error_detail: failure.detail,
    claimed_by: null,
    claimed_until: null,
    updated_at: sql<Date>`now()`,
  };
}

export interface NewInbound {
  id: string;
  workspace_id: string;
  message_id: string;
  event_id: string;
  phone_number_id: string;
  wa_id: string;
  type: string;
  text: string | null;
  profile_name: string | null;
  sent_at: Date;
}

export interface StatusChange {
  workspaceId: string;
  messageId: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  at: Date;
  errorCode: number | null;
  errorTitle: string | null;
}

/** An outgoing message as the worker queues it; the rest of its row is the queue's. */
export type NewOutbound = Pick<WhatsappOutboundMessagesTable, 'id' | 'workspace_id' | 'inbound_id' | 'phone_number_id' | 'wa_id' | 'kind' | 'body'>;

export function whatsappRepository(db: Db) {
  return {
    // ── Accounts ────────────────────────────────────────────────────────────────────────────────────────────────

    async findAccount(workspaceId: string) {
      return db.selectFrom('whatsapp_accounts').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
    },

    async findAccountByPhoneNumberId(phoneNumberId: string) {
      return db.selectFrom('whatsapp_accounts').selectAll().where('phone_number_id', '=', phoneNumberId).executeTakeFirst();
    },

    /** The workspace's account as written; 'taken' when another workspace has this phone_number_id. */
    async upsertAccount(row: { workspace_id: string; phone_number_id: string; access_token_sealed: string; token_hint: string; updated_at: Date }) {
      try {
        return await upsertPerWorkspace(db, 'whatsapp_accounts', row);
      } catch (err) {
        if (isUniqueViolation(err)) return 'taken' as const;
        throw err;
      }
    },

    async removeAccount(workspaceId: string): Promise<boolean> {
      const result = await db.deleteFrom('whatsapp_accounts').where('workspace_id', '=', workspaceId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    // ── Raw webhook bodies ──────────────────────────────────────────────────────────────────────────────────────

    /** One INSERT for a batch of bodies; when it resolves they are committed. */
    async insertEvents(rows: { id: string; body: string }[]): Promise<void> {
      if (rows.length === 0) return;
      await db.insertInto('whatsapp_webhook_events').values(rows).execute();
    },

    async claimEvents(owner: string, leaseMs: number, limit: number) {
      return db
        .updateTable('whatsapp_webhook_events')
        .set((eb) => ({ claimed_by: owner, claimed_until: interval(leaseMs), attempts: eb('attempts', '+', 1) }))
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('whatsapp_webhook_events')
            .select('id')
            .where('processed_at', 'is', null)
            .where((w) => w.or([w('claimed_until', 'is', null), w('claimed_until', '<', sql<Date>`now()`)]))
            .orderBy('received_at')
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .returning(['id', 'body', 'attempts', 'received_at'])
        .execute();
    },

    async finishEvent(id: string, owner: string, outcome: 'processed' | 'ignored' | 'unknown_number' | 'invalid' | 'failed', detail: string | null): Promise<void> {
      await db
        .updateTable('whatsapp_webhook_events')
        .set({ processed_at: sql<Date>`now()`, outcome, detail, claimed_by: null, claimed_until: null })
        .where('id', '=', id)
        .where('claimed_by', '=', owner)
        .execute();
    },

    /**
     * Applies one event's changes in one transaction: customer messages inserted (a message already there is a
     * retry of Meta's and is skipped; the new ones are claimed afterwards like any other, so whichever process has
     * room answers them); statuses applied to our replies. Then the event is finished, or, when some status named a reply we do
     * not know yet and `deferMs` is given, released to be read again after `deferMs`.
     */
    async applyEvent(input: {
      eventId: string;
      owner: string;
      inbound: NewInbound[];
      statuses: StatusChange[];
      outcome: 'processed' | 'unknown_number';
      detail: string | null;
      deferUnmatchedMs: number | null;
    }): Promise<{ inserted: number; unmatched: number; deferred: boolean }> {
      return db.transaction().execute(async (trx) => {
        const inserted = input.inbound.length === 0
          ? []
          : await trx
              .insertInto('whatsapp_inbound_messages')
              .values(input.inbound)
              .onConflict((oc) => oc.columns(['workspace_id', 'message_id']).doNothing())
              .returning('id')
              .execute();
        let unmatched = 0;
        for (const s of input.statuses) {
          const rank = STATUS_RANK[s.status];
          const column = sql.ref(`${s.status}_at`);
          const failed = s.status === 'failed';
          const result = await trx
            .updateTable('whatsapp_outbound_messages')
            .set({
              status: sql`case when status_rank < ${rank} then ${s.status} else status end`,
              status_rank: sql`greatest(status_rank, ${rank})`,
              // Each status keeps its own time even when it arrives after a higher one.
              [`${s.status}_at`]: sql`coalesce(${column}, ${s.at})`,
              ...(failed
                ? {
                    error_code: sql`case when status_rank < ${rank} then ${s.errorCode} else error_code end`,
                    error_detail: sql`case when status_rank < ${rank} then ${s.errorTitle} else error_detail end`,
                  }
                : {}),
              updated_at: sql<Date>`now()`,
            })
            .where('workspace_id', '=', s.workspaceId)
            .where('message_id', '=', s.messageId)
            .executeTakeFirst();
          if (result.numUpdatedRows === 0n) unmatched++;
        }
        const deferred = unmatched > 0 && input.deferUnmatchedMs !== null;
        await trx
          .updateTable('whatsapp_webhook_events')
          .set(
            deferred
              ? // Read successfully, so the wait for our own send to store its id is not a failed attempt.
                { claimed_by: null, claimed_until: interval(input.deferUnmatchedMs!), attempts: 0 }
              : { processed_at: sql<Date>`now()`, outcome: input.outcome, detail: unmatched > 0 ? joinDetail(input.detail, `${unmatched} status update(s) for messages we did not send`) : input.detail, claimed_by: null, claimed_until: null },
          )
          .where('id', '=', input.eventId)
          .where('claimed_by', '=', input.owner)
          .execute();
        return { inserted: inserted.length, unmatched, deferred };
      });
    },

    /** Processed raw bodies older than `ms` are deleted (at most `limit` per call). */
    async pruneEvents(ms: number, limit: number): Promise<number> {
      const result = await db
        .deleteFrom('whatsapp_webhook_events')
        .where('id', 'in', (eb) =>
          eb.selectFrom('whatsapp_webhook_events').select('id').where('processed_at', '<', interval(-ms)).limit(limit),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    // ── Conversations ───────────────────────────────────────────────────────────────────────────────────────────

    /**
     * The customer's current conversation, in one statement: created at the first message; a message more than
     * `idleMs` after the last one starts the next conversation with `newExternalId` (and a fresh notice allowance).
     */
    async touchConversation(input: { workspaceId: string; waId: string; at: Date; profileName: string | null; newExternalId: string; idleMs: number }) {
      const idle = sql`${`${Math.round(input.idleMs)} milliseconds`}::interval`;
      const rolls = sql<boolean>`excluded.last_message_at - whatsapp_conversations.last_message_at > ${idle}`;
      return db
        .insertInto('whatsapp_conversations')
        .values({
          workspace_id: input.workspaceId,
          wa_id: input.waId,
          external_id: input.newExternalId,
          started_at: input.at,
          last_message_at: input.at,
          profile_name: input.profileName,
          notice_at: null,
        })
        .onConflict((oc) =>
          oc.columns(['workspace_id', 'wa_id']).doUpdateSet({
            external_id: sql`case when ${rolls} then excluded.external_id else whatsapp_conversations.external_id end`,
            sequence: sql`case when ${rolls} then whatsapp_conversations.sequence + 1 else whatsapp_conversations.sequence end`,
            started_at: sql`case when ${rolls} then excluded.started_at else whatsapp_conversations.started_at end`,
            notice_at: sql`case when ${rolls} then null else whatsapp_conversations.notice_at end`,
            last_message_at: sql`greatest(whatsapp_conversations.last_message_at, excluded.last_message_at)`,
            profile_name: sql`coalesce(excluded.profile_name, whatsapp_conversations.profile_name)`,
          }),
        )
        .returning(['external_id', 'sequence'])
        .executeTakeFirstOrThrow();
    },

    async findConversation(workspaceId: string, waId: string) {
      return db.selectFrom('whatsapp_conversations').selectAll().where('workspace_id', '=', workspaceId).where('wa_id', '=', waId).executeTakeFirst();
    },

    /** True (and noted) when no text-only notice went to this conversation within `intervalMs`. */
    async claimNotice(workspaceId: string, waId: string, intervalMs: number): Promise<boolean> {
      const result = await db
        .updateTable('whatsapp_conversations')
        .set({ notice_at: sql<Date>`now()` })
        .where('workspace_id', '=', workspaceId)
        .where('wa_id', '=', waId)
        .where((w) => w.or([w('notice_at', 'is', null), w('notice_at', '<', interval(-intervalMs))]))
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** The language the session of this conversation speaks, when there is one yet. */
    async sessionLanguage(workspaceId: string, externalId: string): Promise<string | null> {
      const row = await db
        .selectFrom('sessions')
        .select('language')
        .where('workspace_id', '=', workspaceId)
        .where('channel', '=', 'whatsapp')
        .where('external_id', '=', externalId)
        .executeTakeFirst();
      return row?.language ?? null;
    },

    // ── Customer messages ───────────────────────────────────────────────────────────────────────────────────────

    async claimInbound(owner: string, leaseMs: number, limit: number) {
      return db
        .updateTable('whatsapp_inbound_messages')
        .set({ claimed_by: owner, claimed_until: interval(leaseMs) })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('whatsapp_inbound_messages')
            .select('id')
            .where('state', '=', 'pending')
            .where((w) => w.or([w('claimed_until', 'is', null), w('claimed_until', '<', sql<Date>`now()`)]))
            .orderBy('sent_at')
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .returningAll()
        .execute();
    },

    /** Counts an attempt at answering and remembers the conversation it belongs to. */
    async startInbound(id: string, owner: string, sessionExternalId: string): Promise<boolean> {
      const result = await db
        .updateTable('whatsapp_inbound_messages')
        .set((eb) => ({ attempts: eb('attempts', '+', 1), session_external_id: sessionExternalId }))
        .where('id', '=', id)
        .where('claimed_by', '=', owner)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** Extends the leases `owner` holds on pending messages (the lease keeper's heartbeat); returns the ids still held. */
    async renewInbound(ids: readonly string[], owner: string, leaseMs: number): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await db
        .updateTable('whatsapp_inbound_messages')
        .set({ claimed_until: interval(leaseMs) })
        .where('id', '=', sql<string>`any(${sql.val(ids)}::uuid[])`)
        .where('claimed_by', '=', owner)
        .where('state', '=', 'pending')
        .returning('id')
        .execute();
      return new Set(rows.map((r) => r.id));
    },

    /**
     * The message is done (`reply` given: in the same transaction as the reply it queued, claimed by `owner`). Fenced by
     * the claim: `owner` must still hold it and, when `attempts` is given, no claim may have started another attempt
     * since (this engine stalled past its lease and took the message again), so it is answered once.
     */
    async finishInbound(input: { id: string; owner: string; attempts?: number; state: 'done' | 'failed'; outcome: WhatsappInboundOutcome; reply?: NewOutbound; sendLeaseMs: number }): Promise<{ finished: boolean; reply: WhatsappOutboundMessage | null }> {
      return db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('whatsapp_inbound_messages')
          .set({ state: input.state, outcome: input.outcome, processed_at: sql<Date>`now()`, claimed_by: null, claimed_until: null })
          .where('id', '=', input.id)
          .where('claimed_by', '=', input.owner)
          .where('state', '=', 'pending')
          .$if(input.attempts !== undefined, (q) => q.where('attempts', '=', input.attempts!))
          .executeTakeFirst();
        if (result.numUpdatedRows === 0n) return { finished: false, reply: null };
        if (!input.reply) return { finished: true, reply: null };
        const reply = await trx
          .insertInto('whatsapp_outbound_messages')
          .values({ ...input.reply, next_attempt_at: sql<Date>`now()`, claimed_by: input.owner, claimed_until: interval(input.sendLeaseMs) })
          .returningAll()
          .executeTakeFirstOrThrow();
        return { finished: true, reply };
      });
    },

    /** Gives the message back (the process is stopping): the next poll, here or elsewhere, takes it. */
    async releaseInbound(id: string, owner: string): Promise<void> {
      await db.updateTable('whatsapp_inbound_messages').set({ claimed_by: null, claimed_until: null }).where('id', '=', id).where('claimed_by', '=', owner).execute();
    },

    // ── Our replies ─────────────────────────────────────────────────────────────────────────────────────────────

    async claimOutbound(owner: string, leaseMs: number, limit: number) {
      return db
        .updateTable('whatsapp_outbound_messages')
        .set({ claimed_by: owner, claimed_until: interval(leaseMs) })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('whatsapp_outbound_messages')
            .select('id')
            .where('status', '=', 'queued')
            .where('next_attempt_at', '<=', sql<Date>`now()`)
            .where((w) => w.or([w('claimed_until', 'is', null), w('claimed_until', '<', sql<Date>`now()`)]))
            .orderBy('next_attempt_at')
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .returningAll()
        .execute();
    },

    /** Extends the leases `owner` holds on queued replies (the lease keeper's heartbeat); returns the ids still held. */
    async renewOutbound(ids: readonly string[], owner: string, leaseMs: number): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await db
        .updateTable('whatsapp_outbound_messages')
        .set({ claimed_until: interval(leaseMs) })
        .where('id', '=', sql<string>`any(${sql.val(ids)}::uuid[])`)
        .where('claimed_by', '=', owner)
        .where('status', '=', 'queued')
        .returning('id')
        .execute();
      return new Set(rows.map((r) => r.id));
    },

    async findOutbound(id: string): Promise<WhatsappOutboundMessage | undefined> {
      return db.selectFrom('whatsapp_outbound_messages').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** Meta accepted the message: its id is stored so status webhooks find it. */
    async markAccepted(id: string, owner: string, messageId: string | null, httpStatus: number): Promise<void> {
      await db
        .updateTable('whatsapp_outbound_messages')
        .set((eb) => ({
          message_id: messageId,
          status: sql`case when status_rank < ${STATUS_RANK.accepted} then 'accepted' else status end`,
          status_rank: sql`greatest(status_rank, ${STATUS_RANK.accepted})`,
          accepted_at: sql<Date>`now()`,
          attempts: eb('attempts', '+', 1),
          http_status: httpStatus,
          claimed_by: null,
          claimed_until: null,
          updated_at: sql<Date>`now()`,
        }))
        .where('id', '=', id)
        .where('claimed_by', '=', owner)
        .execute();
    },

    /** A transient failure: tried again after `delayMs` (by whichever process claims it then). */
    async markRetry(id: string, owner: string, delayMs: number, failure: { httpStatus: number | null; code: number | null; detail: string }): Promise<void> {
      await db
        .updateTable('whatsapp_outbound_messages')
        .set((eb) => ({
          next_attempt_at: interval(delayMs),
          ...attemptFailed(eb, failure),
        }))
        .where('id', '=', id)
        .where('claimed_by', '=', owner)
        .execute();
    },

    /** A final failure (a 4xx such as 131047, or the retries are used up): recorded, never tried again. */
    async markFailed(id: string, owner: string, failure: { httpStatus: number | null; code: number | null; detail: string }): Promise<void> {
      await db
        .updateTable('whatsapp_outbound_messages')
        .set((eb) => ({
          status: 'failed',
          status_rank: STATUS_RANK.failed,
          failed_at: sql<Date>`now()`,
          ...attemptFailed(eb, failure),
        }))
        .where('id', '=', id)
        .where('claimed_by', '=', owner)
        .execute();
    },
  };
}

export type WhatsappRepository = ReturnType<typeof whatsappRepository>;

function joinDetail(a: string | null, b: string): string {
  return a ? `${a}; ${b}` : b;
}
