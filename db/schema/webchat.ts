/** Table types of the website chat (migration 0008; src/channels/webchat). */
import type { Generated, Selectable } from 'kysely';
import type { Json, Timestamp } from './columns.ts';

export interface WebchatConversationsTable {
  /** The `conversation_id` of protocol §6 and the session's external_id. */
  id: string;
  workspace_id: string;
  page_url: string;
  /** Primary language subtag the widget or browser gave; null: the session's default. */
  language: string | null;
  /** protocol §6 new_lead: the latest contact details the visitor left. */
  visitor_name: string | null;
  visitor_email: string | null;
  /** May be empty (protocol §6). */
  visitor_phone: string | null;
  lead_at: Timestamp | null;
  /** When each escalation type was emitted; each at most once per conversation (docs/webchat.md). */
  escalation_requested_at: Timestamp | null;
  escalation_detected_at: Timestamp | null;
  created_at: Timestamp;
  /** SHA-256 (hex) of the visitor token answered once at the start (migration 0019). */
  visitor_token_hash: string | null;
  /** The visitor's browser time zone (IANA name) the widget sent at the start (migration 0034); null: not sent. */
  time_zone: string | null;
}

/** A lead a later one replaced (migration 0026), so an earlier email or number still finds the chat (docs/privacy.md). */
export interface WebchatEarlierLeadsTable {
  id: Generated<string>;
  conversation_id: string;
  workspace_id: string;
  visitor_name: string | null;
  visitor_email: string | null;
  visitor_phone: string | null;
  lead_at: Timestamp | null;
  replaced_at: Timestamp;
}

export interface WebchatSettingsTable {
  workspace_id: string;
  /** Web origins (`https://shop.example`) whose pages may call the website-chat API; JSON array of strings. */
  allowed_origins: Json;
  /** The widget's switch (migration 0018): off, visitors are told chat is closed. */
  enabled: Generated<boolean>;
  updated_at: Timestamp;
}

export type WebchatConversation = Selectable<WebchatConversationsTable>;
