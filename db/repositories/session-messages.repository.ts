/** The chat channels' messages of a session (`session_messages`). */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database.ts';
import type { SessionMessagesTable } from '../schema.ts';

/** A row of `session_messages` as the runtime hands it over: the table's columns but `seq`, `at` as an ISO time. */
export type MessageRecord = Omit<Selectable<SessionMessagesTable>, 'seq' | 'at'> & { at: string };

/** Messages stored outside a turn, and the session's messages read back. */
export function sessionMessagesRepository(db: Db) {
  return {
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
     * A message of ours to a WhatsApp customer, stored with its outgoing row (`kind` agent, notice or survey, with the
     * survey's reply `buttons`; queued to send now) in one statement, addressed to the number and line of the customer's latest message; the session is
     * touched. Nothing is written, and false returned, when that message is older than `windowStart` or there is none
     * (WhatsApp's 24-hour customer-service window, docs/whatsapp.md). One round trip instead of a transaction's five:
     * an agent's reply waits for fewer (docs/performance.md, "inbox"). The order in which PostgreSQL runs the parts is
     * its own; the Overview roll-up row the message's insert counts into is this connection's slot (migration 0024), so
     * no order makes replies queue behind each other on it.
     */
    async addWhatsappMessage(
      message: MessageRecord & { outbound_id: string },
      send: { workspaceId: string; externalId: string; kind: 'agent' | 'notice' | 'survey'; windowStart: Date; buttons?: readonly { id: string; title: string }[] },
    ): Promise<boolean> {
      const buttons = send.buttons ? JSON.stringify(send.buttons) : null;
      const { rows } = await sql<{ id: string }>`
        with inbound as (
          select wa_id, phone_number_id, sent_at from whatsapp_inbound_messages
          where workspace_id = ${send.workspaceId} and session_external_id = ${send.externalId}
          order by sent_at desc limit 1
        ), o as (
          insert into whatsapp_outbound_messages (id, workspace_id, inbound_id, phone_number_id, wa_id, kind, body, buttons, next_attempt_at)
          select ${message.outbound_id}, ${send.workspaceId}, null, phone_number_id, wa_id, ${send.kind}, ${message.text}, ${buttons}::jsonb, now()
          from inbound where sent_at >= ${send.windowStart}
          returning id
        ), m as (
          insert into session_messages (id, session_id, "from", text, source, agent_user_id, turn_id, outbound_id, at)
          select ${message.id}, ${message.session_id}, ${message.from}, ${message.text}, ${message.source}, ${message.agent_user_id},
            ${message.turn_id}, o.id, ${message.at}::timestamptz
          from o
        ), s as (
          update sessions set updated_at = now() where id = ${message.session_id} and exists (select 1 from o)
        )
        select id from o`.execute(db);
      return rows.length > 0;
    },

    /**
     * The session's messages in order, after the message `afterId` (all when null), with the agent's email and name and, for
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
        .select(['m.id', 'm.seq', 'm.from', 'm.text', 'm.source', 'm.agent_user_id', 'm.at', 'm.outbound_id', 'u.email as agent_email', 'u.name as agent_name', 'o.status as outbound_status', 'o.error_code', 'o.error_detail', 'o.http_status'])
        .where('m.session_id', '=', sessionId)
        .where('m.seq', '>', after)
        .orderBy('m.seq')
        .limit(limit)
        .execute();
    },

    async findMessage(sessionId: string, id: string) {
      return db.selectFrom('session_messages').selectAll().where('session_id', '=', sessionId).where('id', '=', id).executeTakeFirst();
    },
  };
}
