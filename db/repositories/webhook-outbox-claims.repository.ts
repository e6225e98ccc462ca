/** The outgoing webhooks' claims: which endpoints have work, deliveries claimed under a lease, leases renewed and given back. */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { prepared } from '../prepared.ts';
import { dateOf } from './webhook-outbox-dates.ts';

/** A delivery as the worker claimed it, with what an attempt needs: the payload, the URL and the sealed secrets. */
export interface ClaimedRow {
  id: string;
  event_id: string;
  kind: 'event' | 'test';
  /** Attempts made before this claim. */
  attempt_count: number;
  event: string;
  endpoint_id: string;
  payload: unknown;
  /** When the event was committed, ms since epoch (a number: no date to parse per delivery). */
  event_created_ms: number;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
}

/** The worker's claims and leases (times passed in as `now`; a claim also takes what the database's clock says is due). */
export function webhookClaimQueries(db: Db) {
  return {
    /**
     * Endpoints with pending deliveries and the earliest moment one of them can be claimed (its next attempt, or the
     * end of the lease it is under), earliest first.
     */
    async pendingEndpoints(limit: number): Promise<{ endpointId: string; dueAt: Date }[]> {
      const { rows } = await sql<{ endpoint_id: string; due_at: Date | string }>`${prepared('webhook_pending')}
        select d.endpoint_id::text as endpoint_id,
               min(greatest(d.next_attempt_at, coalesce(d.lease_until, d.next_attempt_at))) as due_at
        from webhook_deliveries d
        join webhook_endpoints ep on ep.id = d.endpoint_id
        where d.status = 'pending' and (ep.disabled_at is null or d.kind = 'test')
        group by d.endpoint_id
        order by due_at
        limit ${limit}
      `.execute(db);
      return rows.map((r) => ({ endpointId: r.endpoint_id, dueAt: dateOf(r.due_at)! }));
    },

    /**
     * Claims up to `limit` due deliveries of one endpoint for `owner` until `leaseUntil`. FOR UPDATE SKIP LOCKED lets
     * engines claim side by side without waiting for each other or taking the same row; the lease keeps a claimed
     * row out of other claims after this statement's locks are gone.
     */
    async claim(input: { endpointId: string; owner: string; now: Date; leaseUntil: Date; limit: number }): Promise<ClaimedRow[]> {
      if (input.limit <= 0) return [];
      const { rows } = await sql<ClaimedRow>`${prepared('webhook_claim')}
        with picked as (
          select d.id
          from webhook_deliveries d
          join webhook_endpoints ep on ep.id = d.endpoint_id
          where d.endpoint_id = ${input.endpointId}
            and d.status = 'pending'
            -- Due by the worker's clock, or by the database's: an event is queued at the database's now(), with
            -- microseconds, and the wake its NOTIFY gives can come within the same millisecond of the worker's
            -- clock (or on an engine whose clock is a little behind). Compared with the worker's clock alone, such a
            -- row was not claimed, and waited for the next wake or poll (the webhook-delivery benchmark's 41 ms tail).
            and d.next_attempt_at <= greatest(${input.now}::timestamptz, now())
            and (d.lease_until is null or d.lease_until < ${input.now})
            and (ep.disabled_at is null or d.kind = 'test')
          order by d.next_attempt_at
          limit ${input.limit}
          for update of d skip locked
        ), claimed as (
          update webhook_deliveries d
          set lease_owner = ${input.owner}, lease_until = ${input.leaseUntil}
          from picked
          where d.id = picked.id
          returning d.id, d.event_id, d.kind, d.attempt_count, d.event, d.endpoint_id
        )
        select claimed.id::text as id, claimed.event_id, claimed.kind, claimed.attempt_count, claimed.event,
               claimed.endpoint_id::text as endpoint_id, ev.payload, (extract(epoch from ev.created_at) * 1000)::float8 as event_created_ms,
               ep.url, ep.secret_sealed, ep.previous_secret_sealed, ep.previous_secret_expires_at
        from claimed
        join webhook_events ev on ev.id = claimed.event_id
        join webhook_endpoints ep on ep.id = claimed.endpoint_id
      `.execute(db);
      // The rows are the driver's fresh objects: completed in place rather than copied (thousands a second).
      for (const r of rows) {
        if (typeof r.payload === 'string') r.payload = JSON.parse(r.payload) as unknown;
        r.event_created_ms = Number(r.event_created_ms);
        r.previous_secret_expires_at = dateOf(r.previous_secret_expires_at);
      }
      return rows;
    },

    /**
     * Extends the leases `owner` holds on pending deliveries to `leaseUntil` (the lease keeper's heartbeat while they
     * wait for a slot or are sent); returns the ids still held.
     */
    async renewLeases(ids: readonly string[], owner: string, leaseUntil: Date): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const { rows } = await sql<{ id: string }>`
        update webhook_deliveries set lease_until = ${leaseUntil}
        where id = any(${ids}::uuid[]) and lease_owner = ${owner} and status = 'pending'
        returning id::text as id
      `.execute(db);
      return new Set(rows.map((r) => r.id));
    },

    /**
     * Gives back the leases `owner` holds on pending deliveries (all of them, or those named), so another worker
     * takes them at once. One whose endpoint was disabled or deleted meanwhile is settled instead: nobody would
     * claim it again.
     */
    async releaseLeases(owner: string, now: Date, ids?: readonly string[]): Promise<number> {
      if (ids !== undefined && ids.length === 0) return 0;
      const result = await sql<{ id: string }>`
        with released as (
          select d.id, d.kind, d.endpoint_id, ep.disabled_at
          from webhook_deliveries d
          left join webhook_endpoints ep on ep.id = d.endpoint_id
          where d.lease_owner = ${owner} and d.status = 'pending'
            ${ids === undefined ? sql`` : sql`and d.id = any(${ids}::uuid[])`}
          for update of d
        )
        update webhook_deliveries d
        set lease_owner = null, lease_until = null,
            status = case when r.kind = 'test' then 'pending'
                          when r.endpoint_id is null then 'cancelled'
                          when r.disabled_at is not null then 'failed'
                          else 'pending' end,
            completed_at = case when r.kind = 'event' and (r.endpoint_id is null or r.disabled_at is not null) then ${now}::timestamptz else null end,
            last_error = case when r.kind = 'event' and (r.endpoint_id is null or r.disabled_at is not null)
                              then coalesce(d.last_error || ' ', '') || 'Not sent: the endpoint was disabled or deleted.' else d.last_error end
        from released r
        where d.id = r.id
        returning d.id::text as id
      `.execute(db);
      return result.rows.length;
    },
  };
}
