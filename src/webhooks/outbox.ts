/**
 * The outbox: every website-chat event is a row written with the same executor (transaction) as the state change
 * that causes it, so an event exists exactly when its cause was committed. Delivery reads from here.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { WebhookPayload } from './events.ts';

export type Executor = Kysely<Database> | Transaction<Database>;

/** A Standard Webhooks message id: `msg_` and 24 random bytes, base64url. */
export function newEventId(): string {
  return `msg_${randomBytes(24).toString('base64url')}`;
}

/** Records an event in the outbox; returns its id (the `webhook-id` of every delivery attempt). */
export async function recordEvent(executor: Executor, workspaceId: string, payload: WebhookPayload): Promise<string> {
  const id = newEventId();
  await executor.insertInto('webhook_events').values({ id, workspace_id: workspaceId, event: payload.event, payload: JSON.stringify(payload) }).execute();
  return id;
}
