/**
 * The outbox: every website-chat event is a row written with the same executor (transaction) as the state change
 * that causes it, so an event exists exactly when its cause was committed. Delivery reads from here.
 *
 * The same statement also queues one delivery per enabled endpoint of the workspace for that event, so "committed"
 * means "will be delivered": no process has to notice the event later for it to go out. A crash after the commit
 * loses nothing; a crash before it loses the event together with its cause.
 *
 * Waking the delivery worker is a hint only (the worker polls the table as well): `pg_notify` in the same statement,
 * which PostgreSQL delivers at commit to the LISTEN connection of every engine process, and an in-process signal for
 * PGlite, where there is no second connection to listen on.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { jsonb } from '../../db/json.ts';
import type { Database } from '../../db/schema.ts';
import type { WebhookPayload } from './events.ts';

export type Executor = Kysely<Database> | Transaction<Database>;

/** The NOTIFY channel of this database schema (channel names are database-wide; schemas keep tenants of one server apart). */
export const notifyChannelSql = sql<string>`left('botlink_webhooks.' || current_schema(), 63)`;

/** A Standard Webhooks message id: `msg_` and 24 random bytes, base64url. */
export function newEventId(): string {
  return `msg_${randomBytes(24).toString('base64url')}`;
}

type OutboxListener = (endpointIds: readonly string[]) => void;
const listeners = new Set<OutboxListener>();

/**
 * Subscribes to deliveries queued by this process (the in-process wake-up); returns the unsubscribe function. The
 * signal comes when the statement ran, which inside a transaction is before the commit: on PGlite the worker's next
 * query waits for that commit anyway (one connection), on PostgreSQL the NOTIFY at commit follows.
 */
export function onDeliveriesQueued(listener: OutboxListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Records an event in the outbox; returns its id (the `webhook-id` of every delivery attempt). */
export async function recordEvent(executor: Executor, workspaceId: string, payload: WebhookPayload): Promise<string> {
  const id = newEventId();
  const { rows } = await sql<{ endpoint_id: string }>`
    with event as (
      insert into webhook_events (id, workspace_id, event, payload)
      values (${id}, ${workspaceId}, ${payload.event}, ${jsonb(payload)}::jsonb)
      returning id, workspace_id, event
    ), queued as (
      insert into webhook_deliveries (id, event_id, workspace_id, endpoint_id, event, kind, next_attempt_at)
      select gen_random_uuid(), event.id, event.workspace_id, endpoint.id, event.event, 'event', now()
      from event
      join webhook_endpoints endpoint
        on endpoint.workspace_id = event.workspace_id and endpoint.event = event.event and endpoint.disabled_at is null
      returning endpoint_id
    )
    select endpoint_id::text as endpoint_id, pg_notify(${notifyChannelSql}, endpoint_id::text)::text as notified from queued
  `.execute(executor);
  if (rows.length > 0 && listeners.size > 0) {
    const endpointIds = rows.map((r) => r.endpoint_id);
    queueMicrotask(() => {
      for (const listener of listeners) listener(endpointIds);
    });
  }
  return id;
}
