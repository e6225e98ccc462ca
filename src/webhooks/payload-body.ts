/**
 * The bytes a delivery sends. The outbox keeps payloads as jsonb, which does not keep key order, so the body is
 * rebuilt in the order of protocol §6's table (event first): the same bytes on every attempt, and a payload that reads
 * like the spec.
 */
import type { WebhookEventName, WebhookPayload } from './events.ts';

const fieldOrder: Record<WebhookEventName, readonly string[]> = {
  new_chat: ['event', 'conversation_id', 'visitor_message', 'page_url', 'timestamp', 'dashboard_url'],
  escalation: ['event', 'conversation_id', 'type', 'visitor_message', 'timestamp'],
  new_lead: ['event', 'conversation_id', 'name', 'email', 'phone', 'timestamp'],
  test: ['event'],
  endpoint_down: ['event', 'endpoint_url', 'problem', 'failures', 'timestamp', 'dashboard_url'],
  endpoint_recovered: ['event', 'endpoint_url', 'timestamp', 'dashboard_url'],
};

/** Compact JSON of a payload, keys in spec order (any key the table does not name follows, in its own order). */
export function encodePayload(payload: WebhookPayload | Record<string, unknown>): string {
  const source = payload as Record<string, unknown>;
  const order = fieldOrder[source.event as WebhookEventName] ?? ['event'];
  const ordered: Record<string, unknown> = {};
  for (const key of order) if (key in source) ordered[key] = source[key];
  for (const key of Object.keys(source)) if (!(key in ordered)) ordered[key] = source[key];
  return JSON.stringify(ordered);
}
