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
import { queueEvent } from '../../db/repositories/webhooks.repository.ts';
import type { Db } from '../../db/database.ts';
import type { WebhookPayload } from './events.ts';

/** The database or the transaction an event is recorded in (the same as its cause's). */
export type Executor = Db;

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
  const endpointIds = await queueEvent(executor, { id, workspaceId, event: payload.event, payload });
  if (endpointIds.length > 0 && listeners.size > 0) {
    queueMicrotask(() => {
      for (const listener of listeners) listener(endpointIds);
    });
  }
  return id;
}
