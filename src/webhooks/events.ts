/**
 * The payloads of outgoing webhooks, exactly as protocol §6 gives them. Timestamps are ISO 8601 UTC with milliseconds
 * (`Date.prototype.toISOString`).
 */

export type WebhookEventName = 'new_chat' | 'escalation' | 'new_lead' | 'test' | 'endpoint_down' | 'endpoint_recovered';
/**
 * The events an endpoint can be set for (the `test` event goes to whichever URL is being tested). `endpoint_down` and
 * `endpoint_recovered` are ours, not protocol §6's: the workspace's own bot-link endpoint went down or came back
 * (docs/webhooks.md).
 */
export const subscribableEvents = ['new_chat', 'escalation', 'new_lead', 'endpoint_down', 'endpoint_recovered'] as const;
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

/** The bot-link endpoint stopped answering: turns no longer wait for it (docs/architecture.md, "Endpoint health"). */
export interface EndpointDownPayload {
  event: 'endpoint_down';
  endpoint_url: string;
  /** The last failure in words (`no answer within 3500 ms`, `HTTP 502`, `connection: …`). */
  problem: string;
  /** Failures in a row that took it down. */
  failures: number;
  timestamp: string;
  dashboard_url: string;
}

/** The bot-link endpoint answers again: turns wait for it as before. */
export interface EndpointRecoveredPayload {
  event: 'endpoint_recovered';
  endpoint_url: string;
  timestamp: string;
  dashboard_url: string;
}

export type WebhookPayload = NewChatPayload | EscalationPayload | NewLeadPayload | TestPayload | EndpointDownPayload | EndpointRecoveredPayload;

export const timestamp = (at: Date): string => at.toISOString();

/** `dashboard_url` of the endpoint events: the integration page. */
export function integrationPageUrl(publicUrl: string): string {
  return `${publicUrl}/dashboard/integration`;
}

/** `dashboard_url` of new_chat: the conversation in the dashboard under PUBLIC_URL. */
export function dashboardUrl(publicUrl: string, conversationId: string): string {
  return `${publicUrl}/dashboard/conversations/${encodeURIComponent(conversationId)}`;
}
