/**
 * Outgoing webhooks' outbox and claims: events queued with their deliveries, the worker's claims and leases, and the
 * outcomes it writes. Every time the worker compares against is passed in (`now`), never read from the database
 * clock, so the schedule can be driven by a fake clock and all engine processes judge leases by the same rule.
 * Here the queueing; the claims and the outcomes each in their own file.
 */
import { sql, type Transaction } from 'kysely';
import type { Db } from '../database.ts';
import { jsonb } from '../json.ts';
import type { Database } from '../schema.ts';
import { webhookClaimQueries } from './webhook-outbox-claims.repository.ts';
import { webhookOutcomeQueries } from './webhook-outbox-outcomes.repository.ts';

export type { ClaimedRow } from './webhook-outbox-claims.repository.ts';
export type { AttemptOutcome, RecordedOutcome } from './webhook-outbox-outcomes.repository.ts';

/** The NOTIFY channel of this database schema (channel names are database-wide; schemas keep tenants of one server apart). */
const notifyChannelSql = sql<string>`left('botlink_webhooks.' || current_schema(), 63)`;

/** The name of this schema's NOTIFY channel, which `queueEvent` notifies and the outbox listener LISTENs on. */
export async function notifyChannel(db: Db): Promise<string> {
  const { rows } = await sql<{ channel: string }>`select ${notifyChannelSql} as channel`.execute(db);
  return rows[0]!.channel;
}

/**
 * Inserts an event and, in the same statement, one delivery per enabled endpoint of its workspace subscribed to it,
 * each with a `pg_notify` naming its endpoint. Runs on the caller's executor (its transaction); returns the endpoint
 * ids queued for.
 */
export async function queueEvent(executor: Db, row: { id: string; workspaceId: string; event: string; payload: unknown }): Promise<string[]> {
  const { rows } = await sql<{ endpoint_id: string }>`
    with event as (
      insert into webhook_events (id, workspace_id, event, payload)
      values (${row.id}, ${row.workspaceId}, ${row.event}, ${jsonb(row.payload)}::jsonb)
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
  return rows.map((r) => r.endpoint_id);
}

export function webhookOutboxQueries(db: Db) {
  return {
    /** Queues a delivery of an already recorded event to one endpoint (the test button), in the caller's transaction. */
    async queueDelivery(trx: Transaction<Database>, row: { id: string; eventId: string; workspaceId: string; endpointId: string; event: string; kind: 'event' | 'test'; now: Date }): Promise<void> {
      await trx
        .insertInto('webhook_deliveries')
        .values({
          id: row.id,
          event_id: row.eventId,
          workspace_id: row.workspaceId,
          endpoint_id: row.endpointId,
          event: row.event,
          kind: row.kind,
          next_attempt_at: row.now,
          created_at: row.now,
          updated_at: row.now,
        })
        .execute();
    },

    ...webhookClaimQueries(db),
    ...webhookOutcomeQueries(db),
  };
}
