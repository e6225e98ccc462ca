/** Table types of WhatsApp (migration 0007; src/channels/whatsapp, docs/whatsapp.md). */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Timestamp } from './columns.ts';

export interface WhatsappAccountsTable {
  workspace_id: string;
  /** Meta's id of the business number; unique, so an incoming webhook names one workspace at most. */
  phone_number_id: string;
  /** The Graph API access token, sealed with the master key (context `whatsapp-token:<workspace id>`). */
  access_token_sealed: string;
  token_hint: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WhatsappWebhookEventsTable {
  id: string;
  /** The raw body as Meta sent and signed it. */
  body: string;
  received_at: Timestamp;
  processed_at: Timestamp | null;
  outcome: 'processed' | 'ignored' | 'unknown_number' | 'invalid' | 'failed' | null;
  detail: string | null;
  attempts: Generated<number>;
  lease_owner: string | null;
  lease_until: Timestamp | null;
  /** The workspace whose number the body was for, set when it is read (migration 0026); null before, or for none. */
  workspace_id: string | null;
  /** An erasure found the body before it was processed: it is deleted as soon as it is (docs/privacy.md). */
  erase_after_processing: Generated<boolean>;
}

export interface WhatsappConversationsTable {
  workspace_id: string;
  wa_id: string;
  /** The session_id sent to the integrator (protocol §2.1). */
  external_id: string;
  sequence: Generated<number>;
  started_at: Timestamp;
  last_message_at: Timestamp;
  profile_name: string | null;
  notice_at: Timestamp | null;
}

/** `workspace_disabled`: stored but not answered, the operator disabled the workspace (docs/operations.md). */
export type WhatsappInboundOutcome = 'reply' | 'notice' | 'notice_recent' | 'silent' | 'empty' | 'cancelled' | 'failed' | 'workspace_disabled'
  /** Stored for the person who handles the conversation; neither the bot nor the integrator answers it. */
  | 'held'
  /** A tap on the satisfaction question's reply button, kept as the session's answer (migration 0038). */
  | 'satisfaction'
  /** A tap on a reply button that answers no open question of ours (a second tap, another app's button): stored only. */
  | 'button_reply';

export interface WhatsappInboundMessagesTable {
  id: string;
  workspace_id: string;
  /** Meta's wamid; unique per workspace (deduplicates Meta's retries). */
  message_id: string;
  event_id: string | null;
  phone_number_id: string;
  wa_id: string;
  type: string;
  /** A text message's body; a tapped reply button's title. */
  text: string | null;
  /** `interactive.button_reply.id` of a tapped reply button (migration 0038); null for anything else. */
  reply_id: ColumnType<string | null, string | null | undefined, string | null>;
  profile_name: string | null;
  sent_at: Timestamp;
  state: Generated<'pending' | 'done' | 'failed'>;
  outcome: WhatsappInboundOutcome | null;
  session_external_id: string | null;
  attempts: Generated<number>;
  lease_owner: string | null;
  lease_until: Timestamp | null;
  created_at: Timestamp;
  processed_at: Timestamp | null;
}

export type WhatsappOutboundStatus = 'queued' | 'accepted' | 'sent' | 'failed' | 'delivered' | 'read';

export interface WhatsappOutboundMessagesTable {
  id: string;
  workspace_id: string;
  inbound_id: string | null;
  phone_number_id: string;
  wa_id: string;
  /**
   * reply: the bot's answer; notice: the text-only notice or a sentence of the service; agent: a person's message;
   * survey: the satisfaction question after a close, sent with reply buttons.
   */
  kind: 'reply' | 'notice' | 'agent' | 'survey';
  body: string;
  /** `[{id, title}]`: the reply buttons of an interactive message (kind survey, migration 0038); null for text. */
  buttons: ColumnType<unknown, string | null | undefined, string | null>;
  /** messages[0].id of the Graph answer. */
  message_id: string | null;
  status: Generated<WhatsappOutboundStatus>;
  status_rank: Generated<number>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  lease_owner: string | null;
  lease_until: Timestamp | null;
  http_status: number | null;
  error_code: number | null;
  error_detail: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  accepted_at: Timestamp | null;
  sent_at: Timestamp | null;
  delivered_at: Timestamp | null;
  read_at: Timestamp | null;
  failed_at: Timestamp | null;
}

export type WhatsappAccount = Selectable<WhatsappAccountsTable>;
export type WhatsappInboundMessage = Selectable<WhatsappInboundMessagesTable>;
export type WhatsappOutboundMessage = Selectable<WhatsappOutboundMessagesTable>;
