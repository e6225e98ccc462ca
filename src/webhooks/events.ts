/**
 * The payloads of outgoing webhooks, exactly as protocol §6 gives them. Timestamps are ISO 8601 UTC with milliseconds
 * (`Date.prototype.toISOString`).
 */

export type WebhookEventName = 'new_chat' | 'escalation' | 'new_lead' | 'test';
/** The events an endpoint can be set for (the `test` event goes to whichever URL is being tested). */
export const subscribableEvents = ['new_chat', 'escalation', 'new_lead'] as const;
export type SubscribableEvent = (typeof subscribableEvents)[number];

/**
 * Values of `escalation.type` (protocol §6 leaves them open): `requested` when the visitor used the escalate route (the
 * widget's button), `detected` when the visitor's own words asked for a person.
 */
export type EscalationType = 'requested' | 'detected';

export interface NewChatPayload {
  event: 'new_chat';
  conversation_id: string;
  visitor_message: string;
  page_url: string;
  timestamp: string;
  dashboard_url: string;
}

export interface EscalationPayload {
  event: 'escalation';
  conversation_id: string;
  type: EscalationType;
  visitor_message: string;
  timestamp: string;
}

export interface NewLeadPayload {
  event: 'new_lead';
  conversation_id: string;
  name: string;
  email: string;
  /** May be empty. */
  phone: string;
  timestamp: string;
}

export interface TestPayload {
  event: 'test';
}

export type WebhookPayload = NewChatPayload | EscalationPayload | NewLeadPayload | TestPayload;

export const timestamp = (at: Date): string => at.toISOString();

/** `dashboard_url` of new_chat: the conversation in the dashboard under PUBLIC_URL. */
export function dashboardUrl(publicUrl: string, conversationId: string): string {
  return `${publicUrl}/dashboard/conversations/${encodeURIComponent(conversationId)}`;
}
