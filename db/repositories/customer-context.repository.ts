/**
 * What the team sees beside a conversation (docs/architecture.md, "Who handles a conversation": the customer panel):
 * the web chat's page, language and time zone and the details the visitor left, a WhatsApp conversation's id, and
 * the same customer's earlier conversations in one workspace, found by a whole number, email or WhatsApp id.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../database.ts';
import type { HandledBy } from '../schema.ts';

/** How a customer is recognised: international numbers and WhatsApp ids as digits (E.164 without `+`), emails lower-cased. */
export interface CustomerKeys {
  digits: string[];
  emails: string[];
}

export interface EarlierConversation {
  id: string;
  channel: 'phone' | 'whatsapp' | 'webchat';
  created_at: Date | string;
  handled_by: HandledBy;
  agent_email: string | null;
  agent_name: string | null;
  /** JSON text: the last message (the customer's last turn for a conversation without messages). */
  last_message: string | null;
  /** The team member who wrote last in it, if one did. */
  answered_by_email: string | null;
  answered_by_name: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A stored number's international digits in SQL, as `internationalDigits` (src/inbox/customer-time-zone.ts) reads one written with `+` or `00`. */
function digitsOf(column: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`regexp_replace(regexp_replace(regexp_replace(coalesce(${column}, ''), '\\(0\\)', '', 'g'), '[^0-9]', '', 'g'), '^00', '')`;
}

const none = sql<boolean>`false`;

export function customerContextRepository(db: Db) {
  return {
    /** The web chat a session is (its external id is the conversation's id); undefined for another id. */
    async webchat(workspaceId: string, conversationId: string) {
      if (!UUID.test(conversationId)) return undefined;
      return db
        .selectFrom('webchat_conversations')
        .select(['page_url', 'language', 'time_zone', 'visitor_name', 'visitor_email', 'visitor_phone'])
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', conversationId)
        .executeTakeFirst();
    },

    /** The browser's time zone the widget sent at the start (validated by the caller). */
    async setTimeZone(workspaceId: string, conversationId: string, timeZone: string): Promise<void> {
      await db.updateTable('webchat_conversations').set({ time_zone: timeZone }).where('workspace_id', '=', workspaceId).where('id', '=', conversationId).execute();
    },

    /** The customer's WhatsApp id in a WhatsApp session (its external id). */
    async whatsappId(workspaceId: string, externalId: string): Promise<string | null> {
      const row = await db
        .selectFrom('whatsapp_conversations')
        .select('wa_id')
        .where('workspace_id', '=', workspaceId)
        .where('external_id', '=', externalId)
        .executeTakeFirst();
      return row?.wa_id ?? null;
    },

    /** The channel of these sessions of the workspace, and whether a person of the team wrote in each (the notifications' words). */
    async sessionFacts(workspaceId: string, ids: string[]): Promise<{ id: string; channel: 'phone' | 'whatsapp' | 'webchat'; answered_by_team: boolean }[]> {
      if (ids.length === 0) return [];
      return db
        .selectFrom('sessions as s')
        .select(['s.id', 's.channel'])
        .select(sql<boolean>`exists (select 1 from session_messages a where a.session_id = s.id and a."from" = 'agent')`.as('answered_by_team'))
        .where('s.workspace_id', '=', workspaceId)
        .where('s.id', 'in', ids)
        .execute();
    },

    /**
     * The customer's other conversations in this workspace, newest first: a session whose number or email is one of
     * theirs, a web chat whose details (now or earlier) are, a WhatsApp conversation with one of their ids. Exact
     * matches only; never another workspace's.
     */
    async earlier(workspaceId: string, exceptId: string, keys: CustomerKeys, limit: number): Promise<EarlierConversation[]> {
      const { digits, emails } = keys;
      if (digits.length === 0 && emails.length === 0) return [];
      const byNumber = (column: RawBuilder<unknown>) => (digits.length ? sql<boolean>`${digitsOf(column)} in (${sql.join(digits)})` : none);
      const byEmail = (column: RawBuilder<unknown>) => (emails.length ? sql<boolean>`lower(${column}) in (${sql.join(emails)})` : none);
      const lead = (table: string, idColumn: string) =>
        sql`select ${sql.ref(idColumn)}::text from ${sql.table(table)} where workspace_id = ${workspaceId}
            and (${byNumber(sql.ref('visitor_phone'))} or ${byEmail(sql.ref('visitor_email'))})`;
      const { rows } = await sql<EarlierConversation>`
        select s.id, s.channel, s.created_at, s.handled_by, u.email as agent_email, u.name as agent_name,
          coalesce(
            (select json_build_object('from', m."from", 'text', m.text, 'at', m.at)::text from session_messages m where m.session_id = s.id order by m.seq desc limit 1),
            (select json_build_object('from', 'customer', 'text', t.customer_message, 'at', t.started_at)::text from session_turns t where t.session_id = s.id order by t.started_at desc limit 1)
          ) as last_message,
          answered.email as answered_by_email, answered.name as answered_by_name
        from sessions s left join users u on u.id = s.agent_user_id
          left join lateral (select a.email, a.name from session_messages am join users a on a.id = am.agent_user_id
            where am.session_id = s.id and am."from" = 'agent' order by am.seq desc limit 1) answered on true
        where s.workspace_id = ${workspaceId} and s.id <> ${exceptId} and s.test_run_id is null
          and (${byNumber(sql.ref('s.customer_phone'))} or ${byEmail(sql.ref('s.customer_email'))}
            or (s.channel = 'webchat' and s.external_id in (${lead('webchat_conversations', 'id')} union ${lead('webchat_earlier_leads', 'conversation_id')}))
            or (s.channel = 'whatsapp' and ${digits.length ? sql<boolean>`s.external_id in (select external_id from whatsapp_conversations where workspace_id = ${workspaceId} and wa_id in (${sql.join(digits)}))` : none}))
        order by s.created_at desc, s.id
        limit ${limit}`.execute(db);
      return rows;
    },
  };
}

export type CustomerContextRepository = ReturnType<typeof customerContextRepository>;
