/**
 * Website-chat conversations and the widget's settings. Built over an executor so that the caller can run these
 * writes in the same transaction as the outbox row they cause (src/webhooks/outbox.ts).
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, WebchatConversation } from '../schema.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export interface NewConversation {
  id: string;
  workspace_id: string;
  page_url: string;
  language: string | null;
  created_at: Date;
  /** SHA-256 (hex) of the visitor token. */
  visitor_token_hash?: string | null;
}

export interface Lead {
  name: string;
  email: string;
  phone: string;
}

export function webchatRepository(db: Executor) {
  return {
    async insertConversation(row: NewConversation): Promise<void> {
      await db.insertInto('webchat_conversations').values(row).execute();
    },

    /** The conversation's session, made with it (the runtime finds it by its external id, the conversation id). */
    async insertSession(row: { id: string; workspace_id: string; external_id: string; language: string; machine_version: number }): Promise<void> {
      await db
        .insertInto('sessions')
        .values({ ...row, channel: 'webchat', customer_phone: null })
        .onConflict((oc) => oc.columns(['workspace_id', 'channel', 'external_id']).doNothing())
        .execute();
    },

    /** The lead's details as the session's customer (an empty phone stays unknown). */
    async setSessionCustomer(workspaceId: string, conversationId: string, lead: Lead): Promise<void> {
      await db
        .updateTable('sessions')
        .set({ customer_name: lead.name, customer_email: lead.email, ...(lead.phone ? { customer_phone: lead.phone } : {}) })
        .where('workspace_id', '=', workspaceId)
        .where('channel', '=', 'webchat')
        .where('external_id', '=', conversationId)
        .execute();
    },

    /** The conversation when it belongs to the workspace; undefined otherwise (the caller answers 404 either way). */
    async findConversation(workspaceId: string, id: string): Promise<WebchatConversation | undefined> {
      return db.selectFrom('webchat_conversations').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    },

    async setLanguage(id: string, language: string): Promise<void> {
      await db.updateTable('webchat_conversations').set({ language }).where('id', '=', id).where('language', 'is distinct from', language).execute();
    },

    /**
     * Marks the escalation of that type as emitted, unless it already was; true when this call marked it (then, and
     * only then, the caller records the event). A detected escalation is also not marked once the visitor asked with
     * the button: the team has been told already. One conditional UPDATE, so two requests at once cannot both win.
     */
    async markEscalation(workspaceId: string, id: string, type: 'requested' | 'detected', at: Date): Promise<boolean> {
      let query = db.updateTable('webchat_conversations').where('workspace_id', '=', workspaceId).where('id', '=', id);
      query =
        type === 'requested'
          ? query.set({ escalation_requested_at: at }).where('escalation_requested_at', 'is', null)
          : query.set({ escalation_detected_at: at }).where('escalation_detected_at', 'is', null).where('escalation_requested_at', 'is', null);
      const result = await query.executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /**
     * Saves the visitor's contact details on the conversation. Answers 'changed' when they differ from what was
     * saved (or none were), 'same' for a repeat of the same details, 'missing' when there is no such conversation.
     * The row is locked first, so two submissions at once are ordered and compared one after the other.
     */
    async saveLead(workspaceId: string, id: string, lead: Lead, at: Date): Promise<'changed' | 'same' | 'missing'> {
      const current = await db
        .selectFrom('webchat_conversations')
        .select(['visitor_name', 'visitor_email', 'visitor_phone', 'lead_at'])
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!current) return 'missing';
      if (current.lead_at != null && current.visitor_name === lead.name && current.visitor_email === lead.email && current.visitor_phone === lead.phone) return 'same';
      // The lead it replaces is kept, so an erasure by an earlier email or number still finds the chat (docs/privacy.md).
      if (current.lead_at != null) {
        await db
          .insertInto('webchat_earlier_leads')
          .values({
            conversation_id: id,
            workspace_id: workspaceId,
            visitor_name: current.visitor_name,
            visitor_email: current.visitor_email,
            visitor_phone: current.visitor_phone,
            lead_at: current.lead_at,
          })
          .execute();
      }
      await db
        .updateTable('webchat_conversations')
        .set({ visitor_name: lead.name, visitor_email: lead.email, visitor_phone: lead.phone, lead_at: at })
        .where('id', '=', id)
        .execute();
      return 'changed';
    },

    /** The visitor's latest message in the conversation, from the session's turns (the runtime writes them). */
    async latestVisitorMessage(workspaceId: string, conversationId: string): Promise<string | undefined> {
      const row = await db
        .selectFrom('session_turns')
        .innerJoin('sessions', 'sessions.id', 'session_turns.session_id')
        .select('session_turns.customer_message')
        .where('sessions.workspace_id', '=', workspaceId)
        .where('sessions.channel', '=', 'webchat')
        .where('sessions.external_id', '=', conversationId)
        .orderBy('session_turns.ordinal', 'desc')
        .orderBy('session_turns.started_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row?.customer_message;
    },

    async findSettings(workspaceId: string): Promise<{ allowed_origins: string[]; enabled: boolean; updated_at: Date } | undefined> {
      const row = await db.selectFrom('webchat_settings').select(['allowed_origins', 'enabled', 'updated_at']).where('workspace_id', '=', workspaceId).executeTakeFirst();
      return row && { allowed_origins: row.allowed_origins as string[], enabled: row.enabled, updated_at: new Date(row.updated_at) };
    },

    /** `enabled` absent: an existing row keeps its switch, a new one starts on. */
    async putSettings(
      workspaceId: string,
      allowedOrigins: readonly string[],
      enabled?: boolean,
    ): Promise<{ allowed_origins: string[]; enabled: boolean; updated_at: Date }> {
      const value = JSON.stringify(allowedOrigins);
      const row = await db
        .insertInto('webchat_settings')
        .values({ workspace_id: workspaceId, allowed_origins: value, ...(enabled === undefined ? {} : { enabled }) })
        .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ allowed_origins: value, ...(enabled === undefined ? {} : { enabled }), updated_at: sql<Date>`now()` }))
        .returning(['allowed_origins', 'enabled', 'updated_at'])
        .executeTakeFirstOrThrow();
      return { allowed_origins: row.allowed_origins as string[], enabled: row.enabled, updated_at: new Date(row.updated_at) };
    },
  };
}

export type WebchatRepository = ReturnType<typeof webchatRepository>;
