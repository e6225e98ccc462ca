/** The outgoing webhooks' outcomes: attempts written under the lease's fence, the endpoint's failing streak, disabling. */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { jsonb } from '../json.ts';
import { prepared } from '../prepared.ts';
import { dateOf } from './webhook-outbox-dates.ts';

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

/** What the worker writes after its attempts. */
export function webhookOutcomeQueries(db: Db) {
  return {
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
