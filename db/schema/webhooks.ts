/**
 * Table types of the outgoing webhooks (migration 0005; src/webhooks, docs/webhooks.md): the outbox of events, the
 * endpoints, the deliveries and their attempts.
 */
import type { Generated, Selectable } from 'kysely';
import type { Json, Timestamp } from './columns.ts';

export interface WebhookEventsTable {
  /** The Standard Webhooks webhook-id. */
  id: string;
  workspace_id: string;
  event: 'new_chat' | 'escalation' | 'new_lead' | 'test' | 'endpoint_down' | 'endpoint_recovered';
  payload: Json;
  created_at: Timestamp;
}

export type WebhookSubscribableEvent = 'new_chat' | 'escalation' | 'new_lead' | 'endpoint_down' | 'endpoint_recovered';
export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled';

export interface WebhookEndpointsTable {
  id: string;
  workspace_id: string;
  event: WebhookSubscribableEvent;
  url: string;
  /** The whsec_ secret, sealed with the master key (context `webhook-secret:<endpoint id>`). */
  secret_sealed: string;
  secret_hint: string;
  /** After a rotation: the previous secret, which signs too until `previous_secret_expires_at`. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Timestamp | null;
  disabled_at: Timestamp | null;
  /** Why the endpoint was disabled, in a sentence for the owner. */
  disabled_reason: string | null;
  /** The first failed attempt since the last success (the 5-day rule counts from here). */
  failing_since: Timestamp | null;
  last_failure_at: Timestamp | null;
  last_success_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookDeliveriesTable {
  id: string;
  /** The outbox row; its id is the `webhook-id` of every attempt. */
  event_id: string;
  workspace_id: string;
  /** Null once the endpoint was deleted. */
  endpoint_id: string | null;
  event: string;
  kind: Generated<'event' | 'test'>;
  status: Generated<WebhookDeliveryStatus>;
  attempt_count: Generated<number>;
  next_attempt_at: Timestamp;
  lease_owner: string | null;
  lease_until: Timestamp | null;
  last_status: number | null;
  last_error: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  completed_at: Timestamp | null;
}

export interface WebhookAttemptsTable {
  /** With `attempt`, the primary key. */
  delivery_id: string;
  /** 1 for the first attempt of the delivery. */
  attempt: number;
  url: string;
  started_at: Timestamp;
  status: 'succeeded' | 'failed';
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  /** The first 4 KB of the receiver's answer. */
  response_excerpt: string | null;
}

export type WebhookEndpoint = Selectable<WebhookEndpointsTable>;
export type WebhookDelivery = Selectable<WebhookDeliveriesTable>;
export type WebhookAttempt = Selectable<WebhookAttemptsTable>;
