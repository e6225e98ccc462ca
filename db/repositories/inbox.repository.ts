/**
 * The team's inbox (docs/architecture.md, "Who handles a conversation"): the conversations of a workspace by who
 * handles them, each with its last message, and the rows an agent's message on WhatsApp needs.
 */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { assignedToSql } from './team-presence.repository.ts';
import { firstCustomerWordsSql } from './conversation-labels.repository.ts';
import type { MessageFrom } from '../schema.ts';

export type InboxView = 'waiting' | 'mine' | 'open' | 'followups';

export function inboxRepository(db: Db) {
  return {
    /**
     * waiting: a person was asked for and nobody took it, oldest first; mine: held by `userId`; open: every active
     * WhatsApp and web chat conversation; followups: conversations the team follows up (a `forward` handoff, or a
     * person the phone could not connect) that a person does not handle now. The others newest first.
     */
    async list(workspaceId: string, userId: string, view: InboxView, limit: number) {
      let query = db
        .selectFrom('sessions as s')
        .leftJoin('users as u', 'u.id', 's.agent_user_id')
        .select([
          's.id',
          's.channel',
          's.external_id',
          's.status',
          's.customer_phone',
          's.customer_email',
          's.customer_name',
          's.handled_by',
          's.agent_user_id',
          'u.email as agent_email',
          'u.name as agent_name',
          's.waiting_since',
          's.handoff',
          's.updated_at',
        ])
        // Who it is assigned to (migration 0030; db/repositories/team-presence.repository.ts).
        .select(assignedToSql.as('assigned_to'))
        // Its name when the customer has none (src/text/conversation-label.ts).
        .select(firstCustomerWordsSql.as('first_words'))
        // The last message; a conversation without messages (a phone call, or one from before messages were kept)
        // shows its last turn. COALESCE reads the turns only for those.
        .select((eb) =>
          eb.fn
            .coalesce(
              eb
                .selectFrom('session_messages as m')
                .select(sql<string>`json_build_object('from', m."from", 'text', m.text, 'at', m.at)::text`.as('last'))
                .whereRef('m.session_id', '=', 's.id')
                .orderBy('m.seq', 'desc')
                .limit(1),
              eb
                .selectFrom('session_turns as t')
                .select(sql<string>`json_build_object('from', 'customer', 'text', t.customer_message, 'at', t.started_at)::text`.as('last'))
                .whereRef('t.session_id', '=', 's.id')
                .orderBy('t.started_at', 'desc')
                .limit(1),
            )
            .as('last_message'),
        )
        // The customer's own last words (the bot's sentence is often the last message of a waiting conversation):
        // the newest customer message, read backwards on session_messages (session_id, seq); the turns only for a
        // conversation without messages, as above.
        .select((eb) =>
          eb.fn
            .coalesce(
              eb
                .selectFrom('session_messages as cm')
                .select(sql<string>`json_build_object('text', cm.text, 'at', cm.at)::text`.as('customer_last'))
                .whereRef('cm.session_id', '=', 's.id')
                .where('cm.from', '=', 'customer')
                .orderBy('cm.seq', 'desc')
                .limit(1),
              eb
                .selectFrom('session_turns as ct')
                .select(sql<string>`json_build_object('text', ct.customer_message, 'at', ct.started_at)::text`.as('customer_last'))
                .whereRef('ct.session_id', '=', 's.id')
                .where('ct.customer_message', '<>', '')
                .orderBy('ct.started_at', 'desc')
                .limit(1),
            )
            .as('customer_last_message'),
        )
        .where('s.workspace_id', '=', workspaceId)
        // Test conversations are never the team's (docs/scenarios.md).
        .where('s.test_run_id', 'is', null);
      switch (view) {
        case 'waiting':
          query = query.where('s.handled_by', '=', 'waiting').orderBy('s.waiting_since', 'asc');
          break;
        case 'mine':
          query = query.where('s.handled_by', '=', 'agent').where('s.agent_user_id', '=', userId).orderBy('s.updated_at', 'desc');
          break;
        case 'open':
          query = query.where('s.status', '=', 'active').where('s.channel', 'in', ['whatsapp', 'webchat']).orderBy('s.updated_at', 'desc');
          break;
        case 'followups':
          query = query
            .where('s.handled_by', '=', 'bot')
            .where((eb) =>
              eb.or([
                eb(sql`s.handoff->>'kind'`, '=', 'forward'),
                eb.and([eb('s.channel', '=', 'phone'), eb(sql`s.handoff->>'kind'`, '=', 'human'), eb(sql`s.handoff->>'connected'`, '=', 'false')]),
              ]),
            )
            .orderBy('s.updated_at', 'desc');
          break;
      }
      const rows = await query.limit(limit).execute();
      return rows.map((r) => {
        const last = r.last_message as string | null;
        const customerLast = r.customer_last_message as string | null;
        return {
          ...r,
          last: last === null ? null : (JSON.parse(last) as { from: MessageFrom; text: string; at: string }),
          customerLast: customerLast === null ? null : (JSON.parse(customerLast) as { text: string; at: string }),
        };
      });
    },

    /** The customer's latest WhatsApp message in this conversation: where an agent's reply goes, and the 24-hour window. */
    async latestInbound(workspaceId: string, externalId: string) {
      return db
        .selectFrom('whatsapp_inbound_messages')
        .select(['wa_id', 'phone_number_id', 'sent_at'])
        .where('workspace_id', '=', workspaceId)
        .where('session_external_id', '=', externalId)
        .orderBy('sent_at', 'desc')
        .limit(1)
        .executeTakeFirst();
    },

    /** Agents' messages carried by these outgoing WhatsApp rows (by our id or Meta's), with their delivery status. */
    async agentDeliveries(workspaceId: string, ref: { outboundId?: string; messageIds?: string[] }) {
      if (!ref.outboundId && (ref.messageIds ?? []).length === 0) return [];
      return db
        .selectFrom('whatsapp_outbound_messages as o')
        .innerJoin('session_messages as m', 'm.outbound_id', 'o.id')
        .select(['m.id', 'm.session_id', 'o.status', 'o.http_status', 'o.error_code', 'o.error_detail'])
        .where('o.workspace_id', '=', workspaceId)
        .where('o.kind', '=', 'agent')
        .where((eb) => (ref.outboundId ? eb('o.id', '=', ref.outboundId) : eb('o.message_id', 'in', ref.messageIds!)))
        .execute();
    },

    /** A failed WhatsApp send queued again (POST /v1/sessions/{id}/messages/{message_id}/retry); false when it had not failed. */
    async requeueFailed(outboundId: string): Promise<boolean> {
      const result = await db
        .updateTable('whatsapp_outbound_messages')
        .set({
          status: 'queued',
          status_rank: 0,
          attempts: 0,
          next_attempt_at: sql<Date>`now()`,
          failed_at: null,
          http_status: null,
          error_code: null,
          error_detail: null,
          lease_owner: null,
          lease_until: null,
          updated_at: sql<Date>`now()`,
        })
        .where('id', '=', outboundId)
        .where('status', '=', 'failed')
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}

export type InboxRepository = ReturnType<typeof inboxRepository>;
