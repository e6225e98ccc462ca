/** WhatsApp's customer messages: claimed, answered (with the reply queued in the same transaction), given back. */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { WhatsappInboundOutcome, WhatsappOutboundMessage } from '../schema.ts';
import type { NewOutbound } from './whatsapp-outbound.repository.ts';
import { interval } from './whatsapp-queue.ts';

/** The queue of customer messages. */
export function whatsappInboundRepository(db: Db) {
  return {
    async claimInbound(owner: string, leaseMs: number, limit: number) {
      return db
        .updateTable('whatsapp_inbound_messages')
        .set({ lease_owner: owner, lease_until: interval(leaseMs) })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('whatsapp_inbound_messages')
            .select('id')
            .where('state', '=', 'pending')
            .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', sql<Date>`now()`)]))
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
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** Extends the leases `owner` holds on pending messages (the lease keeper's heartbeat); returns the ids still held. */
    async renewInbound(ids: readonly string[], owner: string, leaseMs: number): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await db
        .updateTable('whatsapp_inbound_messages')
        .set({ lease_until: interval(leaseMs) })
        .where('id', '=', sql<string>`any(${sql.val(ids)}::uuid[])`)
        .where('lease_owner', '=', owner)
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
          .set({ state: input.state, outcome: input.outcome, processed_at: sql<Date>`now()`, lease_owner: null, lease_until: null })
          .where('id', '=', input.id)
          .where('lease_owner', '=', input.owner)
          .where('state', '=', 'pending')
          .$if(input.attempts !== undefined, (q) => q.where('attempts', '=', input.attempts!))
          .executeTakeFirst();
        if (result.numUpdatedRows === 0n) return { finished: false, reply: null };
        if (!input.reply) return { finished: true, reply: null };
        const reply = await trx
          .insertInto('whatsapp_outbound_messages')
          .values({ ...input.reply, next_attempt_at: sql<Date>`now()`, lease_owner: input.owner, lease_until: interval(input.sendLeaseMs) })
          .returningAll()
          .executeTakeFirstOrThrow();
        return { finished: true, reply };
      });
    },

    /** Gives the message back (the process is stopping): the next poll, here or elsewhere, takes it. */
    async releaseInbound(id: string, owner: string): Promise<void> {
      await db.updateTable('whatsapp_inbound_messages').set({ lease_owner: null, lease_until: null }).where('id', '=', id).where('lease_owner', '=', owner).execute();
    },
  };
}
