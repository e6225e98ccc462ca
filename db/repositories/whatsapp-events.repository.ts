/** WhatsApp's raw webhook bodies: stored, claimed, applied (customer messages and delivery statuses), pruned. */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../schema.ts';
import type { Db } from '../database.ts';
import { interval, STATUS_RANK } from './whatsapp-queue.ts';

export interface NewInbound {
  id: string;
  workspace_id: string;
  message_id: string;
  event_id: string;
  phone_number_id: string;
  wa_id: string;
  type: string;
  text: string | null;
  /** A tapped reply button's id (migration 0038); null for anything else. */
  reply_id: string | null;
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

/** The queue of raw webhook bodies. */
export function whatsappEventsRepository(db: Db) {
  return {
    /** One INSERT for a batch of bodies; when it resolves they are committed. */
    async insertEvents(rows: { id: string; body: string }[]): Promise<void> {
      if (rows.length === 0) return;
      await db.insertInto('whatsapp_webhook_events').values(rows).execute();
    },

    async claimEvents(owner: string, leaseMs: number, limit: number) {
      return db
        .updateTable('whatsapp_webhook_events')
        .set((eb) => ({ lease_owner: owner, lease_until: interval(leaseMs), attempts: eb('attempts', '+', 1) }))
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('whatsapp_webhook_events')
            .select('id')
            .where('processed_at', 'is', null)
            .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', sql<Date>`now()`)]))
            .orderBy('received_at')
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .returning(['id', 'body', 'attempts', 'received_at'])
        .execute();
    },

    /** `workspaceId`: the one workspace whose number the body was for, if it names one (its retention, an erasure). */
    async finishEvent(id: string, owner: string, outcome: 'processed' | 'ignored' | 'unknown_number' | 'invalid' | 'failed', detail: string | null, workspaceId: string | null = null): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('whatsapp_webhook_events')
          .set({ processed_at: sql<Date>`now()`, outcome, detail, lease_owner: null, lease_until: null, ...(workspaceId ? { workspace_id: workspaceId } : {}) })
          .where('id', '=', id)
          .where('lease_owner', '=', owner)
          .execute();
        await eraseIfAsked(trx, id);
      });
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
      /** The one workspace whose number the body was for, if it names one. */
      workspaceId?: string | null;
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
        const workspace = input.workspaceId ? { workspace_id: input.workspaceId } : {};
        await trx
          .updateTable('whatsapp_webhook_events')
          .set(
            deferred
              ? // Read successfully, so the wait for our own send to store its id is not a failed attempt.
                { lease_owner: null, lease_until: interval(input.deferUnmatchedMs!), attempts: 0, ...workspace }
              : { ...workspace, processed_at: sql<Date>`now()`, outcome: input.outcome, detail: unmatched > 0 ? joinDetail(input.detail, `${unmatched} status update(s) for messages we did not send`) : input.detail, lease_owner: null, lease_until: null },
          )
          .where('id', '=', input.eventId)
          .where('lease_owner', '=', input.owner)
          .execute();
        if (!deferred) await eraseIfAsked(trx, input.eventId);
        return { inserted: inserted.length, unmatched, deferred };
      });
    },

    /**
     * Processed raw bodies older than `ms` are deleted (at most `limit` per call), and processed ones an erasure
     * asked for whatever their age (a backstop: the read that processes one deletes it already).
     */
    async pruneEvents(ms: number, limit: number): Promise<number> {
      const result = await db
        .deleteFrom('whatsapp_webhook_events')
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('whatsapp_webhook_events')
            .select('id')
            .where((w) => w.or([w('processed_at', '<', interval(-ms)), w.and([w('processed_at', 'is not', null), w('erase_after_processing', '=', true)])]))
            .limit(limit),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/**
 * An erasure marks a body that was not processed yet instead of deleting it under the worker (docs/privacy.md); once
 * processed, in the same transaction, it goes. The erasure deletes bodies already processed itself.
 */
async function eraseIfAsked(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.deleteFrom('whatsapp_webhook_events').where('id', '=', id).where('erase_after_processing', '=', true).where('processed_at', 'is not', null).execute();
}

function joinDetail(a: string | null, b: string): string {
  return a ? `${a}; ${b}` : b;
}
