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
    lease_owner: null,
    lease_until: null,
    updated_at: sql<Date>`now()`,
  };
}

/** The queue of our replies. */
export function whatsappOutboundRepository(db: Db) {
  return {
    async claimOutbound(owner: string, leaseMs: number, limit: number) {
      return db
        .updateTable('whatsapp_outbound_messages')
        .set({ lease_owner: owner, lease_until: interval(leaseMs) })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('whatsapp_outbound_messages')
            .select('id')
            .where('status', '=', 'queued')
            .where('next_attempt_at', '<=', sql<Date>`now()`)
            .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', sql<Date>`now()`)]))
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
        .set({ lease_until: interval(leaseMs) })
        .where('id', '=', sql<string>`any(${sql.val(ids)}::uuid[])`)
        .where('lease_owner', '=', owner)
        .where('status', '=', 'queued')
        .returning('id')
        .execute();
      return new Set(rows.map((r) => r.id));
    },

    /**
     * The WhatsApp session whose satisfaction question (kind survey, migration 0038) was sent to this customer with the
     * reply button `replyId`; undefined for any other button (another app's, a made-up one, another customer's).
     */
    async surveySession(input: {
      workspaceId: string;
      waId: string;
      sessionId: string;
      replyId: string;
    }): Promise<{ id: string; external_id: string } | undefined> {
      return db
        .selectFrom('sessions as s')
        .select(['s.id', 's.external_id'])
        .where('s.id', '=', input.sessionId)
        .where('s.workspace_id', '=', input.workspaceId)
        .where('s.channel', '=', 'whatsapp')
        .where(({ exists, selectFrom }) =>
          exists(
            selectFrom('session_messages as m')
              .innerJoin('whatsapp_outbound_messages as o', 'o.id', 'm.outbound_id')
              .select(sql<number>`1`.as('one'))
              .whereRef('m.session_id', '=', 's.id')
              .where('o.kind', '=', 'survey')
              .where('o.wa_id', '=', input.waId)
              .where(sql<boolean>`o.buttons @> ${JSON.stringify([{ id: input.replyId }])}::jsonb`),
          ),
        )
        .executeTakeFirst();
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
          lease_owner: null,
          lease_until: null,
          updated_at: sql<Date>`now()`,
        }))
        .where('id', '=', id)
        .where('lease_owner', '=', owner)
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
        .where('lease_owner', '=', owner)
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
        .where('lease_owner', '=', owner)
        .execute();
    },
  };
}
