/**
 * Outgoing webhooks' outbox and claims: events queued with their deliveries, the worker's claims and leases, and the
 * outcomes it writes. Every time the worker compares against is passed in (`now`), never read from the database
 * clock, so the schedule can be driven by a fake clock and all engine processes judge leases by the same rule.
 */
import { sql, type Transaction } from 'kysely';
import type { Db } from '../database.ts';
import { jsonb } from '../json.ts';
import { prepared } from '../prepared.ts';
import type { Database } from '../schema.ts';

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

/** The outcome of one attempt, to be written. */
export interface AttemptOutcome {
  deliveryId: string;
  endpointId: string;
  kind: 'event' | 'test';
  /** This attempt's number (claimed attempt_count + 1); also the fence: the row must still be at number − 1. */
  attempt: number;
  url: string;
  startedAt: Date;
  succeeded: boolean;
  /** The delivery's status after this attempt. */
  status: 'pending' | 'succeeded' | 'failed';
  /** When status stays pending: the next attempt. */
  nextAttemptAt: Date | null;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
  responseExcerpt: string | null;
  /** 410 Gone: disable the endpoint with this sentence. */
  goneReason: string | null;
}

export interface RecordedOutcome {
  /** False when the lease was lost (another worker took the delivery over); nothing was written. */
  recorded: boolean;
  /** Set when this batch disabled the endpoint: the reason shown to the owner. */
  endpointDisabled: string | null;
}

const dateOf = (value: Date | string | null): Date | null => (value == null ? null : value instanceof Date ? value : new Date(value));

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
            and d.next_attempt_at <= ${input.now}
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

    /**
     * Writes a batch of attempt outcomes in one statement (atomic by itself): each delivery's new state and its
     * attempt row, fenced by the lease, so a delivery another worker took over is left alone. A retry whose endpoint
     * was disabled or deleted while the attempt ran is settled, since nobody would claim it again. Returns the ids
     * written.
     */
    async recordOutcomes(input: { owner: string; now: Date; outcomes: readonly AttemptOutcome[] }): Promise<Set<string>> {
      const { owner, now, outcomes } = input;
      if (outcomes.length === 0) return new Set();
      const ids = outcomes.map((o) => o.deliveryId);
      // The rows travel as one JSON parameter: one statement text whatever the batch size, so it is prepared once.
      const rows = jsonb(
        outcomes.map((o) => ({
          id: o.deliveryId,
          endpoint_id: o.endpointId,
          kind: o.kind,
          attempt: o.attempt,
          status: o.status,
          next_attempt_at: o.nextAttemptAt?.toISOString() ?? null,
          http_status: o.httpStatus,
          error: o.error,
          started_at: o.startedAt.toISOString(),
          url: o.url,
          attempt_status: o.succeeded ? 'succeeded' : 'failed',
          latency_ms: Math.round(o.latencyMs),
          excerpt: o.responseExcerpt,
        })),
      );
      const { rows: written } = await sql<{ id: string }>`${prepared('webhook_outcomes')}
        with v as (
          select * from jsonb_to_recordset(${rows}::jsonb) as x(id uuid, endpoint_id uuid, kind text, attempt int, status text,
            next_attempt_at timestamptz, http_status int, error text, started_at timestamptz, url text, attempt_status text,
            latency_ms int, excerpt text)
        ), decided as (
          select v.*,
                 case when v.status <> 'pending' or v.kind = 'test' then v.status
                      when ep.id is null then 'cancelled'
                      when ep.disabled_at is not null then 'failed'
                      else 'pending' end as final_status
          from v left join webhook_endpoints ep on ep.id = v.endpoint_id
        ), written as (
          update webhook_deliveries d
          set status = decided.final_status,
              attempt_count = decided.attempt,
              next_attempt_at = coalesce(decided.next_attempt_at, d.next_attempt_at),
              lease_owner = null,
              lease_until = null,
              last_status = decided.http_status,
              last_error = case when decided.final_status = decided.status then decided.error
                                else coalesce(decided.error || ' ', '') || 'Not retried: the endpoint was disabled or deleted.' end,
              updated_at = ${now},
              completed_at = case when decided.final_status = 'pending' then null else ${now}::timestamptz end
          from decided
          -- The rows are found through the primary key (the ids again, as an array). Joined on decided.id alone, or with
          -- the status test in the form of the queue index's predicate, the plan (made for a prepared statement, on a
          -- table without statistics) read every pending delivery for each batch: 440 µs of database CPU per outcome
          -- with 20,000 pending (docs/performance.md, webhook-delivery).
          where d.id = any(${ids}::uuid[]) and d.id = decided.id and d.lease_owner = ${owner} and d.attempt_count = decided.attempt - 1
            and (d.status || '') = 'pending'
          returning d.id
        ), attempts as (
          insert into webhook_attempts (delivery_id, attempt, url, started_at, status, http_status, latency_ms, error, response_excerpt)
          select decided.id, decided.attempt, decided.url, decided.started_at, decided.attempt_status, decided.http_status, decided.latency_ms, decided.error, decided.excerpt
          from decided join written on written.id = decided.id
          on conflict (delivery_id, attempt) do nothing
        )
        select id::text as id from written
      `.execute(db);
      return new Set(written.map((r) => r.id));
    },

    /**
     * Writes a run of outcomes into the endpoint's streak columns: the last success, the failing streak's start (a
     * streak another process started after this success is kept) and the last failure. Returns the streak's start as
     * it stands after the write (null when the endpoint is not failing).
     */
    async recordStreak(
      endpointId: string,
      streak: { lastSuccessAt: Date | null; firstFailureAt: Date | null; lastFailureAt: Date | null },
    ): Promise<Date | null> {
      const { lastSuccessAt, firstFailureAt, lastFailureAt } = streak;
      if (lastSuccessAt !== null) {
        const row = await sql<{ failing_since: Date | string | null }>`
          update webhook_endpoints
          set last_success_at = greatest(coalesce(last_success_at, ${lastSuccessAt}::timestamptz), ${lastSuccessAt}::timestamptz),
              failing_since = case when failing_since is not null and failing_since > ${lastSuccessAt}::timestamptz then failing_since
                                   else ${firstFailureAt}::timestamptz end,
              last_failure_at = coalesce(greatest(last_failure_at, ${lastFailureAt}::timestamptz), ${lastFailureAt}::timestamptz, last_failure_at)
          where id = ${endpointId}
          returning failing_since
        `.execute(db);
        return dateOf(row.rows[0]?.failing_since ?? null);
      }
      if (firstFailureAt === null) return null;
      const row = await sql<{ failing_since: Date | string | null }>`
        update webhook_endpoints
        set failing_since = case when last_success_at is not null and last_success_at > ${firstFailureAt}::timestamptz then failing_since
                                 else coalesce(failing_since, ${firstFailureAt}::timestamptz) end,
            last_failure_at = greatest(coalesce(last_failure_at, ${lastFailureAt}::timestamptz), ${lastFailureAt}::timestamptz)
        where id = ${endpointId}
        returning failing_since
      `.execute(db);
      return dateOf(row.rows[0]?.failing_since ?? null);
    },

    /**
     * Disables the endpoint unless it already is; when this call disabled it, its event deliveries that no worker
     * holds are settled as failed with `lastError` (those in flight are settled when their outcome is written).
     * Returns whether this call disabled it.
     */
    async disableEndpoint(endpointId: string, input: { at: Date; reason: string; lastError: string; now: Date }): Promise<boolean> {
      const disabled = await db
        .updateTable('webhook_endpoints')
        .set({ disabled_at: input.at, disabled_reason: input.reason, updated_at: input.now })
        .where('id', '=', endpointId)
        .where('disabled_at', 'is', null)
        .returning('id')
        .executeTakeFirst();
      if (!disabled) return false;
      await db
        .updateTable('webhook_deliveries')
        .set({ status: 'failed', last_error: input.lastError, completed_at: input.now, updated_at: input.now })
        .where('endpoint_id', '=', endpointId)
        .where('status', '=', 'pending')
        .where('kind', '=', 'event')
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', input.now)]))
        .execute();
      return true;
    },
  };
}
