/**
 * The Overview's reads (docs/analytics.md): sums over the hourly roll-ups (migrations 0022 and 0024, every slot of a
 * key summed) for the figures and the charts, the turns of a period for the questions the bot could not answer, and
 * the export's batches of conversations; and the compaction of the roll-ups' slots. Periods arrive as whole UTC
 * hours, `to` exclusive. A scenario's test conversations are in none of them (docs/scenarios.md).
 */
import { sql, type RawBuilder } from 'kysely';
import { COUNTERS, foldSlotsSql } from '../analytics-rollup.ts';
import type { Db } from '../database.ts';

/** The counters of an hour row, in one list with the triggers that keep them (db/analytics-rollup.ts). */
export const ANALYTICS_COUNTERS = COUNTERS;
export type AnalyticsCounter = (typeof ANALYTICS_COUNTERS)[number];
export type Counters = Record<AnalyticsCounter, number>;

export interface Period {
  workspaceId: string;
  from: Date;
  to: Date;
  channel: string | null;
}

export interface LatencyRow {
  kind: 'endpoint' | 'first_reply';
  channel: string;
  bucket: number;
  n: number;
}

export interface SeriesRow extends Counters {
  start: Date;
  channel: string;
}

export interface SeriesLatencyRow {
  start: Date;
  bucket: number;
  n: number;
}

export interface UnansweredRow {
  session_id: string;
  /** The turn the message was said in (a fallback and the handoff right after it name the same one). */
  turn_id: string;
  customer_message: string;
  at: Date;
}

/** Times arrive as ISO text (UTC, milliseconds) made by the database: the export writes them as they come. */
export interface ExportSession {
  id: string;
  channel: string;
  created_at: string;
  customer_phone: string | null;
  customer_email: string | null;
  customer_name: string | null;
}

export interface ExportTurn {
  session_id: string;
  ordinal: number;
  started_at: string;
  customer_message: string;
  reply: string | null;
  source: string | null;
  /** The handoff's kind (human, forward) or null. */
  handoff: string | null;
}

export interface ExportMessage {
  session_id: string;
  from: string;
  text: string;
  at: string;
}

const isoText = (column: string) => sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

const sums = sql.raw(ANALYTICS_COUNTERS.map((c) => `coalesce(sum(${c}), 0)::int as ${c}`).join(', '));
const channelFilter = (channel: string | null, column = 'channel'): RawBuilder<unknown> =>
  channel === null ? sql`` : sql`and ${sql.ref(column)} = ${channel}`;

/** The start of the bucket an hour row falls in: the hour itself, or the workspace's local day. */
function bucketStart(bucket: 'hour' | 'day', timeZone: string): RawBuilder<Date> {
  return bucket === 'hour' ? sql<Date>`hour` : sql<Date>`(date_trunc('day', hour at time zone ${timeZone}) at time zone ${timeZone})`;
}

export function analyticsRepository(db: Db) {
  return {
    /**
     * Folds the slots (db/analytics-rollup.ts) of hours that began over two hours ago into slot 0, at most `limit` keys
     * of each table; the answer is the larger of the two counts of rows moved (below `limit`: nothing is left).
     */
    async foldPastSlots(limit: number): Promise<number> {
      let moved = 0;
      for (const statement of foldSlotsSql({ before: `now() - interval '2 hours'`, limit })) {
        const { rows } = await sql.raw<{ moved: number }>(statement).execute(db);
        moved = Math.max(moved, rows[0]?.moved ?? 0);
      }
      return moved;
    },

    async totals(p: Period): Promise<Counters> {
      const { rows } = await sql<Counters>`select ${sums} from analytics_hours
        where workspace_id = ${p.workspaceId} and hour >= ${p.from} and hour < ${p.to} ${channelFilter(p.channel)}`.execute(db);
      return rows[0]!;
    },

    /** The histograms of the period, per kind and channel. */
    async latency(p: Period): Promise<LatencyRow[]> {
      const { rows } = await sql<LatencyRow>`select kind, channel, bucket, sum(count)::int as n from analytics_latency
        where workspace_id = ${p.workspaceId} and kind in ('endpoint', 'first_reply') and hour >= ${p.from} and hour < ${p.to}
          ${channelFilter(p.channel)}
        group by kind, channel, bucket`.execute(db);
      return rows;
    },

    /** The endpoint going down and recovering: the events of the period and the last one before it. */
    async endpointEvents(p: Pick<Period, 'workspaceId' | 'from' | 'to'>): Promise<{ kind: string; at: Date }[]> {
      const { rows } = await sql<{ kind: string; at: Date }>`
        (select kind, created_at as at from notifications where workspace_id = ${p.workspaceId}
          and kind in ('endpoint_down', 'endpoint_recovered') and created_at < ${p.from} order by created_at desc limit 1)
        union all
        (select kind, created_at from notifications where workspace_id = ${p.workspaceId}
          and kind in ('endpoint_down', 'endpoint_recovered') and created_at >= ${p.from} and created_at < ${p.to}
          order by created_at limit 1000)
        order by at`.execute(db);
      return rows;
    },

    /** Every bucket's start in the period, empty ones too (local days follow the zone's daylight-saving changes). */
    async bucketStarts(p: Period, bucket: 'hour' | 'day', timeZone: string): Promise<Date[]> {
      const { rows } =
        bucket === 'hour'
          ? await sql<{ start: Date }>`select generate_series(${p.from}::timestamptz, ${p.to}::timestamptz - interval '1 hour', interval '1 hour') as start`.execute(db)
          : await sql<{ start: Date }>`select d at time zone ${timeZone} as start from generate_series(
              date_trunc('day', ${p.from}::timestamptz at time zone ${timeZone}),
              (${p.to}::timestamptz - interval '1 microsecond') at time zone ${timeZone}, interval '1 day') d`.execute(db);
      return rows.map((r) => r.start);
    },

    async series(p: Period, bucket: 'hour' | 'day', timeZone: string): Promise<SeriesRow[]> {
      const start = bucketStart(bucket, timeZone);
      const { rows } = await sql<SeriesRow>`select ${start} as start, channel, ${sums} from analytics_hours
        where workspace_id = ${p.workspaceId} and hour >= ${p.from} and hour < ${p.to} ${channelFilter(p.channel)}
        group by 1, 2`.execute(db);
      return rows;
    },

    async seriesLatency(p: Period, bucket: 'hour' | 'day', timeZone: string): Promise<SeriesLatencyRow[]> {
      const start = bucketStart(bucket, timeZone);
      const { rows } = await sql<SeriesLatencyRow>`select ${start} as start, bucket, sum(count)::int as n from analytics_latency
        where workspace_id = ${p.workspaceId} and kind = 'endpoint' and hour >= ${p.from} and hour < ${p.to} ${channelFilter(p.channel)}
        group by 1, 2`.execute(db);
      return rows;
    },

    /**
     * The customer messages of the period the bot could not answer (docs/analytics.md, "Questions the bot could not
     * answer"): answered by the fallback, or handed over at the integrator's word; when the customer asked for a person,
     * the message before that request. Newest first, at most `limit`.
     */
    async unanswered(p: Period, limit: number): Promise<UnansweredRow[]> {
      const { rows } = await sql<UnansweredRow>`
        select t.session_id,
          case when t.handoff ->> 'requestedBy' = 'customer' then prev.id else t.id end as turn_id,
          case when t.handoff ->> 'requestedBy' = 'customer' then prev.customer_message else t.customer_message end as customer_message,
          t.started_at as at
        from sessions s
        join session_turns t on t.session_id = s.id
        left join lateral (
          select p.id, p.customer_message from session_turns p where p.session_id = t.session_id and p.started_at <= t.started_at and p.ordinal < t.ordinal
          order by p.started_at desc, p.ordinal desc limit 1
        ) prev on t.handoff ->> 'requestedBy' = 'customer'
        where s.workspace_id = ${p.workspaceId} and s.test_run_id is null and s.updated_at >= ${p.from} ${channelFilter(p.channel, 's.channel')}
          and t.started_at >= ${p.from} and t.started_at < ${p.to}
          and (t.source = 'fallback' or t.handoff is not null)
        order by t.started_at desc
        limit ${limit}`.execute(db);
      return rows.filter((r) => r.customer_message !== null);
    },

    /** The next batch of the period's conversations in the order they started, after the cursor (its created_at as ISO text). */
    async exportSessions(p: Period, after: { createdAt: string; id: string } | null, limit: number): Promise<ExportSession[]> {
      const cursor = after === null ? sql`` : sql`and (created_at, id) > (${after.createdAt}::timestamptz, ${after.id})`;
      const { rows } = await sql<ExportSession>`select id, channel, ${isoText('created_at')} as created_at, customer_phone, customer_email, customer_name
        from sessions
        where workspace_id = ${p.workspaceId} and test_run_id is null and created_at >= ${p.from} and created_at < ${p.to} ${channelFilter(p.channel)} ${cursor}
        order by sessions.created_at, id limit ${limit}`.execute(db);
      return rows;
    },

    /** The turns of these conversations, and their messages outside turns (agents', held customer messages). */
    async exportContent(sessionIds: readonly string[]): Promise<{ turns: ExportTurn[]; messages: ExportMessage[] }> {
      if (sessionIds.length === 0) return { turns: [], messages: [] };
      const ids = sql.val(sessionIds);
      const [turns, messages] = await Promise.all([
        sql<ExportTurn>`select session_id, ordinal, ${isoText('started_at')} as started_at, customer_message, reply, source, handoff ->> 'kind' as handoff
          from session_turns where session_id = any(${ids}::uuid[]) order by session_id, session_turns.started_at, ordinal`.execute(db),
        sql<ExportMessage>`select session_id, "from", text, ${isoText('at')} as at from session_messages
          where session_id = any(${ids}::uuid[]) and ("from" = 'agent' or ("from" = 'customer' and turn_id is null)) order by session_id, seq`.execute(db),
      ]);
      return { turns: turns.rows, messages: messages.rows };
    },
  };
}

export type AnalyticsRepository = ReturnType<typeof analyticsRepository>;
