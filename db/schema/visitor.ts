/** Table types of the visitor's side (migration 0032; docs/webchat.md, "Typing, satisfaction and email"). */
import type { Generated, Selectable } from 'kysely';
import type { Timestamp } from './columns.ts';

/** One web chat conversation's visitor presence and typing, written at most every few seconds. */
export interface WebchatVisitorStateTable {
  conversation_id: string;
  workspace_id: string;
  /** The widget's last long poll or write; the visitor is gone after VISITOR_GONE_MINUTES without one. */
  seen_at: Timestamp | null;
  visitor_typing_at: Timestamp | null;
  agent_typing_at: Timestamp | null;
}

/** The satisfaction question put after an agent closed a conversation, and its answer. */
export interface SessionSatisfactionTable {
  session_id: string;
  workspace_id: string;
  channel: string;
  asked_at: Timestamp;
  /** 1..5; null while unanswered. */
  score: number | null;
  comment: string | null;
  answered_at: Timestamp | null;
}

/** Emails waiting for SMTP, sent with retries (src/email/outbox.ts). */
export interface EmailOutboxTable {
  id: string;
  workspace_id: string | null;
  kind: string;
  session_id: string | null;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  created_at: Timestamp;
  next_attempt_at: Timestamp;
  attempts: Generated<number>;
  sent_at: Timestamp | null;
  failed_at: Timestamp | null;
  last_error: string | null;
}

export type EmailOutboxRow = Selectable<EmailOutboxTable>;
