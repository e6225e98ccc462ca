/**
 * The visitor's side (migration 0032; docs/webchat.md, "Typing, satisfaction and email"): a web chat visitor's
 * presence and who is typing, one row per conversation written at most once per throttle, and the satisfaction
 * question put after an agent closed a conversation.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../schema.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export interface TypingState {
  visitor_typing_at: Date | null;
  agent_typing_at: Date | null;
  /** The newest message of the team in the conversation: typing before it ended with it. */
  last_agent_message_at: Date | null;
  seen_at: Date | null;
}

export interface Satisfaction {
  session_id: string;
  channel: string;
  asked_at: Date;
  score: number | null;
  comment: string | null;
  answered_at: Date | null;
}

type StampColumn = 'seen_at' | 'visitor_typing_at' | 'agent_typing_at';

export function visitorRepository(db: Executor) {
  return {
    /**
     * Sets `column` to `at` unless it was set less than `throttleMs` before `at`: one statement, and no write at all
     * within the throttle. True when it was written.
     */
    async stamp(workspaceId: string, conversationId: string, column: StampColumn, at: Date, throttleMs: number): Promise<boolean> {
      const before = new Date(at.getTime() - throttleMs);
      const row = await db
        .insertInto('webchat_visitor_state')
        .values({ conversation_id: conversationId, workspace_id: workspaceId, [column]: at })
        .onConflict((oc) =>
          oc
            .column('conversation_id')
            .doUpdateSet({ [column]: at })
            .where((eb) => eb.or([eb(`webchat_visitor_state.${column}`, 'is', null), eb(`webchat_visitor_state.${column}`, '<=', before)])),
        )
        .returning('conversation_id')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Clears the agent's typing (their message was sent). */
    async clearAgentTyping(conversationId: string): Promise<void> {
      await db.updateTable('webchat_visitor_state').set({ agent_typing_at: null }).where('conversation_id', '=', conversationId).where('agent_typing_at', 'is not', null).execute();
    },

    /** The visitor sent what they typed: their next sign is not held back by the throttle of the one before. */
    async clearVisitorTyping(conversationId: string): Promise<void> {
      await db.updateTable('webchat_visitor_state').set({ visitor_typing_at: null }).where('conversation_id', '=', conversationId).where('visitor_typing_at', 'is not', null).execute();
    },

    /**
     * What an open poll reads besides the messages, in one statement (a poll is read again on every wake): the agent's
     * typing, when the agent last wrote, and the satisfaction question's state ('ask' until answered).
     */
    async pollState(conversationId: string, sessionId: string | null): Promise<{ agent_typing_at: Date | null; last_agent_message_at: Date | null; survey: 'ask' | 'answered' | null }> {
      const session = sessionId ?? '00000000-0000-0000-0000-000000000000';
      const row = await db
        .selectNoFrom((eb) => [
          eb.selectFrom('webchat_visitor_state').select('agent_typing_at').where('conversation_id', '=', conversationId).as('agent_typing_at'),
          eb.selectFrom('session_messages').select((e) => e.fn.max('at').as('at')).where('session_id', '=', session).where('from', '=', 'agent').as('last_agent_message_at'),
          eb.selectFrom('session_satisfaction').select(sql<string>`case when score is null then 'ask' else 'answered' end`.as('survey')).where('session_id', '=', session).as('survey'),
        ])
        .executeTakeFirstOrThrow();
      const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
      return { agent_typing_at: date(row.agent_typing_at), last_agent_message_at: date(row.last_agent_message_at), survey: (row.survey as 'ask' | 'answered' | null) ?? null };
    },

    async typing(conversationId: string, sessionId: string | null): Promise<TypingState> {
      const row = await db
        .selectFrom('webchat_visitor_state')
        .select(['visitor_typing_at', 'agent_typing_at', 'seen_at'])
        .where('conversation_id', '=', conversationId)
        .executeTakeFirst();
      const last = sessionId
        ? await db
            .selectFrom('session_messages')
            .select((eb) => eb.fn.max('at').as('at'))
            .where('session_id', '=', sessionId)
            .where('from', '=', 'agent')
            .executeTakeFirst()
        : undefined;
      const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
      return {
        visitor_typing_at: date(row?.visitor_typing_at),
        agent_typing_at: date(row?.agent_typing_at),
        seen_at: date(row?.seen_at),
        last_agent_message_at: date(last?.at),
      };
    },

    /**
     * The visitor of a web chat who left an email and has not been seen since `goneBefore` (no poll; a conversation
     * never polled counts from its start), with what their email needs; undefined otherwise.
     */
    async goneVisitor(workspaceId: string, conversationId: string, goneBefore: Date) {
      return db
        .selectFrom('webchat_conversations as c')
        .innerJoin('workspaces as w', 'w.id', 'c.workspace_id')
        .leftJoin('webchat_visitor_state as v', 'v.conversation_id', 'c.id')
        .select(['c.visitor_email as email', 'c.page_url', 'c.language', 'w.name as shop_name'])
        .where('c.workspace_id', '=', workspaceId)
        .where('c.id', '=', conversationId)
        .where('c.visitor_email', 'is not', null)
        .where('c.visitor_email', '!=', '')
        .where((eb) => eb(eb.fn.coalesce('v.seen_at', 'c.created_at'), '<', goneBefore))
        .executeTakeFirst()
        .then((r) => (r && r.email ? { ...r, email: r.email } : undefined));
    },

    /** The question is put (again, while unanswered) when an agent closes the conversation. */
    async ask(row: { sessionId: string; workspaceId: string; channel: string; at: Date }): Promise<void> {
      await db
        .insertInto('session_satisfaction')
        .values({ session_id: row.sessionId, workspace_id: row.workspaceId, channel: row.channel, asked_at: row.at, score: null, comment: null })
        .onConflict((oc) => oc.column('session_id').doUpdateSet({ asked_at: row.at }).where('session_satisfaction.score', 'is', null))
        .execute();
    },

    /** The answer, once: `answered` now, `already` answered before, `not_asked` when no question was put. */
    async answer(sessionId: string, score: number, comment: string | null, at: Date): Promise<'answered' | 'already' | 'not_asked'> {
      const row = await db
        .updateTable('session_satisfaction')
        .set({ score, comment, answered_at: at })
        .where('session_id', '=', sessionId)
        .where('score', 'is', null)
        .returning('session_id')
        .executeTakeFirst();
      if (row) return 'answered';
      const existing = await db.selectFrom('session_satisfaction').select('score').where('session_id', '=', sessionId).executeTakeFirst();
      return existing ? 'already' : 'not_asked';
    },

    async find(sessionId: string): Promise<Satisfaction | undefined> {
      const row = await db
        .selectFrom('session_satisfaction')
        .select(['session_id', 'channel', 'asked_at', 'score', 'comment', 'answered_at'])
        .where('session_id', '=', sessionId)
        .executeTakeFirst();
      if (!row) return undefined;
      return { ...row, asked_at: new Date(row.asked_at), answered_at: row.answered_at === null ? null : new Date(row.answered_at) };
    },

    /** The answers given in [from, to), of one channel or all: how many and their mean score. */
    async summary(p: { workspaceId: string; from: Date; to: Date; channel: string | null }): Promise<{ responses: number; average: number | null }> {
      let q = db
        .selectFrom('session_satisfaction')
        .select([sql<string>`count(*)`.as('n'), sql<string | null>`avg(score)`.as('average')])
        .where('workspace_id', '=', p.workspaceId)
        .where('answered_at', 'is not', null)
        .where('answered_at', '>=', p.from)
        .where('answered_at', '<', p.to);
      if (p.channel !== null) q = q.where('channel', '=', p.channel);
      const row = await q.executeTakeFirstOrThrow();
      const n = Number(row.n);
      return { responses: n, average: n === 0 || row.average === null ? null : Math.round(Number(row.average) * 100) / 100 };
    },
  };
}

export type VisitorRepository = ReturnType<typeof visitorRepository>;
