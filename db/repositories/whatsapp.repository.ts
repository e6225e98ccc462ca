/**
 * WhatsApp's rows (migration 0007): the workspace's account, the raw webhook bodies, the conversations (session ids
 * with their rollover), the customers' messages and our replies with their delivery status.
 * Here the account; the raw bodies, conversations, customer messages and replies each in their own file.
 *
 * Every queue (raw events, customer messages, replies) is claimed the same way: one UPDATE whose subquery picks free
 * rows `FOR UPDATE SKIP LOCKED`, stamping `lease_owner` and a lease. Two processes never claim the same row, and the
 * rows of a process that died are free again when its lease runs out. Finishing a row checks `lease_owner`, so a
 * process whose lease was taken over cannot overwrite the new owner's result.
 */
import type { Db } from '../database.ts';
import { upsertPerWorkspace } from './upsert.ts';
import { isUniqueViolation } from '../unique-violation.ts';
import { whatsappConversationsRepository } from './whatsapp-conversations.repository.ts';
import { whatsappEventsRepository } from './whatsapp-events.repository.ts';
import { whatsappInboundRepository } from './whatsapp-inbound.repository.ts';
import { whatsappOutboundRepository } from './whatsapp-outbound.repository.ts';

export { STATUS_RANK } from './whatsapp-queue.ts';
export type { NewInbound, StatusChange } from './whatsapp-events.repository.ts';
export type { NewOutbound } from './whatsapp-outbound.repository.ts';

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

    // The queues, each in its own file.
    ...whatsappEventsRepository(db),
    ...whatsappConversationsRepository(db),
    ...whatsappInboundRepository(db),
    ...whatsappOutboundRepository(db),
  };
}

export type WhatsappRepository = ReturnType<typeof whatsappRepository>;
