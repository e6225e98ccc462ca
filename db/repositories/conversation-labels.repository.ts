/**
 * What names a conversation in a list (src/text/conversation-label.ts): its customer's name, email and number, and the
 * start of the customer's first message: their first chat message, or (a phone call, or a conversation from before
 * messages were kept) the first thing they said in a turn.
 */
import { sql } from 'kysely';
import type { Db } from '../database.ts';

/** The first words the customer wrote or said in the session aliased `s` (at most 200 characters of it), or null. */
export const firstCustomerWordsSql = sql<string | null>`left(coalesce(
  (select m.text from session_messages m where m.session_id = s.id and m."from" = 'customer' order by m.seq limit 1),
  (select t.customer_message from session_turns t where t.session_id = s.id order by t.started_at, t.ordinal limit 1)), 200)`;

export function conversationLabelsRepository(db: Db) {
  return {
    /** The facts that name each of these sessions of the workspace (others' ids are left out). */
    async labelFacts(workspaceId: string, ids: readonly string[]) {
      if (ids.length === 0) return [];
      return db
        .selectFrom('sessions as s')
        .select(['s.id', 's.channel', 's.customer_name', 's.customer_email', 's.customer_phone'])
        .select(firstCustomerWordsSql.as('first_words'))
        .where('s.workspace_id', '=', workspaceId)
        .where('s.id', 'in', [...new Set(ids)])
        .execute();
    },
  };
}

export type ConversationLabelsRepository = ReturnType<typeof conversationLabelsRepository>;
