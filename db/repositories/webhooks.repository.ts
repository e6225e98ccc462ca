/**
 * Outgoing webhooks: endpoints (one per workspace and event), deliveries (the worker's queue and the dashboard's log)
 * and their attempts, one repository in three files by concern: the settings (webhook-endpoints.repository.ts), the
 * outbox with its claims and outcomes (webhook-outbox.repository.ts) and the delivery log (webhook-log.repository.ts).
 */
import type { Db } from '../database.ts';
import { webhookEndpointQueries } from './webhook-endpoints.repository.ts';
import { webhookLogQueries } from './webhook-log.repository.ts';
import { webhookOutboxQueries } from './webhook-outbox.repository.ts';

export type { DeliveryFilters, DeliveryLogRow } from './webhook-log.repository.ts';
export { notifyChannel, queueEvent, type AttemptOutcome, type ClaimedRow, type RecordedOutcome } from './webhook-outbox.repository.ts';

function webhookQueries(db: Db) {
  return { ...webhookEndpointQueries(db), ...webhookOutboxQueries(db), ...webhookLogQueries(db) };
}

export function webhooksRepository(db: Db) {
  return {
    ...webhookQueries(db),
    /** Runs `work` in one transaction with the statements bound to it (an endpoint's health is written all or nothing). */
    async inTransaction<T>(work: (queries: WebhookQueries) => Promise<T>): Promise<T> {
      return db.transaction().execute((trx) => work(webhookQueries(trx)));
    },
  };
}
export type WebhooksRepository = ReturnType<typeof webhooksRepository>;
export type WebhookQueries = ReturnType<typeof webhookQueries>;
