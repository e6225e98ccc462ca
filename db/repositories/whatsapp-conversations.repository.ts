/** WhatsApp's conversations: session ids with their rollover, the text-only notice allowance, the session's language. */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { interval } from './whatsapp-queue.ts';

/** The customer's current conversation and what is known of it. */
export function whatsappConversationsRepository(db: Db) {
  return {
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
  };
}
