/** WhatsApp's replies: claimed for sending, accepted by Meta, retried or failed. */
import { sql, type ExpressionBuilder } from 'kysely';
import type { Db } from '../database.ts';
import type { Database, WhatsappOutboundMessage, WhatsappOutboundMessagesTable } from '../schema.ts';
import { interval, STATUS_RANK } from './whatsapp-queue.ts';

/** An outgoing message as the worker queues it; the rest of its row is the queue's. */
export type NewOutbound = Pick<WhatsappOutboundMessagesTable, 'id' | 'workspace_id' | 'inbound_id' | 'phone_number_id' | 'wa_id' | 'kind' | 'body'>;

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

/** The queue of our replies. */
export function whatsappOutboundRepository(db: Db) {
  return {
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
