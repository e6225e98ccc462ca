/** Outgoing webhooks' delivery log, as the dashboard reads it: deliveries with their attempts, and a manual retry. */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { WebhookAttempt, WebhookDeliveryStatus } from '../schema.ts';

export interface DeliveryFilters {
  event?: string;
  status?: WebhookDeliveryStatus;
  eventId?: string;
  before?: Date;
  limit: number;
}

export interface DeliveryLogRow {
  id: string;
  event_id: string;
  event: string;
  kind: 'event' | 'test';
  status: WebhookDeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
  completed_at: Date | null;
  endpoint_id: string | null;
  payload: unknown;
}

export function webhookLogQueries(db: Db) {
  return {
    async listDeliveries(workspaceId: string, filters: DeliveryFilters): Promise<DeliveryLogRow[]> {
      let query = db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_events as ev', 'ev.id', 'd.event_id')
        .select(['d.id', 'd.event_id', 'd.event', 'd.kind', 'd.status', 'd.attempt_count', 'd.next_attempt_at', 'd.last_status', 'd.last_error', 'd.created_at', 'd.completed_at', 'd.endpoint_id', 'ev.payload'])
        .where('d.workspace_id', '=', workspaceId);
      if (filters.event) query = query.where('d.event', '=', filters.event);
      if (filters.status) query = query.where('d.status', '=', filters.status);
      if (filters.eventId) query = query.where('d.event_id', '=', filters.eventId);
      if (filters.before) query = query.where('d.created_at', '<', filters.before);
      const rows = await query.orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(filters.limit).execute();
      return rows as DeliveryLogRow[];
    },

    async findDelivery(workspaceId: string, id: string): Promise<DeliveryLogRow | undefined> {
      const row = await db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_events as ev', 'ev.id', 'd.event_id')
        .select(['d.id', 'd.event_id', 'd.event', 'd.kind', 'd.status', 'd.attempt_count', 'd.next_attempt_at', 'd.last_status', 'd.last_error', 'd.created_at', 'd.completed_at', 'd.endpoint_id', 'ev.payload'])
        .where('d.workspace_id', '=', workspaceId)
        .where('d.id', '=', id)
        .executeTakeFirst();
      return row as DeliveryLogRow | undefined;
    },

    async attemptsOf(deliveryIds: readonly string[]): Promise<WebhookAttempt[]> {
      if (deliveryIds.length === 0) return [];
      return db.selectFrom('webhook_attempts').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('delivery_id').orderBy('attempt').execute();
    },

    /**
     * A manual retry: the delivery is due now (a finished one is pending again, with its log kept). Its attempt
     * count is kept, so the automatic schedule goes on from where it was; past the schedule it is this one attempt.
     */
    async requeue(workspaceId: string, id: string, now: Date): Promise<boolean> {
      const result = await db
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          status: 'pending',
          next_attempt_at: sql<Date>`least(${eb.ref('next_attempt_at')}, ${now}::timestamptz)`,
          completed_at: null,
          updated_at: now,
        }))
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}
