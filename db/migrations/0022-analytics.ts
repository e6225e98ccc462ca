import { sql, type Kysely } from 'kysely';
import { LATENCY_BUCKET_EDGES_MS } from '../analytics-buckets.ts';

// The Overview's roll-ups (docs/analytics.md): per workspace, channel and UTC hour, the counters of every figure and
// latency histograms with fixed buckets, kept by statement-level triggers in the same transaction as the rows they
// count, so every way a session, turn or message is written (now and later) is counted once, and a request reads a
// few thousand small rows instead of every turn. Counts and bucket numbers only: no text, no customer detail.

/** The UTC hour of a timestamptz, whatever the connection's TimeZone. */
const hourOf = (column: string) => `(date_trunc('hour', ${column} at time zone 'UTC') at time zone 'UTC')`;

const COUNTERS = [
  'conversations', 'customer_messages', 'handed_over',
  'by_integrator', 'by_knowledge_base', 'by_ai', 'by_fallback', 'by_agent',
  'endpoint_requests', 'endpoint_answers',
  'no_answer_timeout', 'no_answer_status', 'no_answer_invalid', 'no_answer_empty', 'no_answer_down',
] as const;

/** Adds the grouped rows of `select` (columns: workspace_id, hour, channel, then `columns`) to the hour rows. */
function addToHours(columns: readonly string[], select: string): string {
  return `insert into analytics_hours (workspace_id, hour, channel, ${columns.join(', ')})
    ${select}
    on conflict (workspace_id, hour, channel) do update set
      ${columns.map((c) => `${c} = analytics_hours.${c} + excluded.${c}`).join(',\n      ')}`;
}

function addToLatency(select: string): string {
  return `insert into analytics_latency (workspace_id, hour, channel, kind, bucket, count)
    ${select}
    on conflict (workspace_id, kind, hour, channel, bucket) do update set count = analytics_latency.count + excluded.count`;
}

/** Sessions of `source` counted as conversations in the hour they started. */
const sessionsSql = (source: string) =>
  addToHours(['conversations'], `select workspace_id, ${hourOf('created_at')} as h, channel, count(*)
    from ${source} group by 1, 2, 3 order by 1, 2, 3`);

/**
 * Turns of `source`: the customer message, who answered it, what the endpoint did (docs/analytics.md, "The endpoint")
 * in the hour the message arrived; the endpoint's latency and the first reply time as histogram buckets.
 */
function turnsSql(source: string): string[] {
  const t = `select s.workspace_id, s.channel, ${hourOf('a.started_at')} as h, a.source, a.ordinal, a.reply,
      a.botlink ->> 'outcome' as outcome, analytics_no_answer(a.botlink ->> 'reason') as no_answer,
      (a.botlink ->> 'latencyMs')::numeric as latency, (extract(epoch from a.ended_at - a.started_at) * 1000)::numeric as took
    from ${source} a join sessions s on s.id = a.session_id`;
  const hours = countIntoHours(
    {
      customer_messages: '1',
      by_integrator: `(source = 'integrator')::int`,
      by_knowledge_base: `(source = 'knowledge_base')::int`,
      by_ai: `(source = 'ai')::int`,
      by_fallback: `(source = 'fallback')::int`,
      endpoint_requests: `(outcome = 'answer' or no_answer is not null)::int`,
      endpoint_answers: `(outcome = 'answer')::int`,
      no_answer_timeout: `(no_answer = 'timeout')::int`,
      no_answer_status: `(no_answer = 'status')::int`,
      no_answer_invalid: `(no_answer = 'invalid')::int`,
      no_answer_empty: `(no_answer = 'empty')::int`,
      no_answer_down: `(no_answer = 'down')::int`,
    },
    t,
    `select session_id from ${source} where handoff is not null`,
  );
  // The endpoint's latency: requests that got a response or ran out of time (a down endpoint was not waited for).
  const latency = addToLatency(`select workspace_id, h, channel, kind, b, count(*) from (
      select workspace_id, h, channel, 'endpoint' as kind, analytics_bucket(latency) as b from (${t}) t
        where latency is not null and (outcome = 'answer' or no_answer in ('timeout', 'status', 'invalid', 'empty'))
      union all
      select workspace_id, h, channel, 'first_reply', analytics_bucket(took) from (${t}) t where ordinal = 1 and reply is not null
    ) x group by 1, 2, 3, 4, 5 order by 1, 4, 2, 3, 5`);
  return [hours, latency];
}

/**
 * One upsert of the hour rows per statement: the rows' own counters (`counters`: column → 0/1 per row of `rows`, which
 * has workspace_id, h and channel) and the conversations handed over for the first time (a session of `handovers`
 * not yet in analytics_handed_over; counted once, in the hour it started: docs/analytics.md). One upsert in key order,
 * so two statements counting into the same hours wait for each other instead of deadlocking.
 */
function countIntoHours(counters: Record<string, string>, rows: string, handovers: string): string {
  const columns = Object.keys(counters);
  return `with marked as (
      insert into analytics_handed_over (session_id)
      select distinct session_id from (${handovers}) x order by 1
      on conflict do nothing
      returning session_id
    ), contributions as (
      select workspace_id, h, channel, ${columns.map((c) => `coalesce(${counters[c]}, 0) as ${c}`).join(', ')}, 0 as handed_over from (${rows}) r
      union all
      select s.workspace_id, ${hourOf('s.created_at')}, s.channel, ${columns.map(() => '0').join(', ')}, 1
      from marked m join sessions s on s.id = m.session_id
    )
    ${addToHours([...columns, 'handed_over'], `select workspace_id, h, channel, ${[...columns, 'handed_over'].map((c) => `sum(${c})::int`).join(', ')}
      from contributions group by 1, 2, 3 order by 1, 2, 3`)}`;
}

/** Messages of `source` outside turns: agents' replies, and customer messages held while a person handles the chat. */
function messagesSql(source: string): string[] {
  const m = `select s.workspace_id, s.channel, ${hourOf('a.at')} as h, a."from"
    from ${source} a join sessions s on s.id = a.session_id
    where a."from" = 'agent' or (a."from" = 'customer' and a.turn_id is null)`;
  return [countIntoHours({ customer_messages: `("from" = 'customer')::int`, by_agent: `("from" = 'agent')::int` }, m, `select session_id from ${source} where "from" = 'agent'`)];
}

async function trigger(db: Kysely<unknown>, table: string, name: string, statements: string[]): Promise<void> {
  await sql.raw(`create function ${name}() returns trigger language plpgsql as $body$
    begin
      ${statements.map((s) => `${s};`).join('\n')}
      return null;
    end $body$`).execute(db);
  await sql.raw(`create trigger ${name} after insert on ${table} referencing new table as added
    for each statement execute function ${name}()`).execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw(`create table analytics_hours (
    workspace_id uuid not null references workspaces (id) on delete cascade,
    hour timestamptz not null,
    channel text not null,
    ${COUNTERS.map((c) => `${c} integer not null default 0`).join(',\n    ')},
    primary key (workspace_id, hour, channel)
  )`).execute(db);
  // kind: 'endpoint' (the bot-link request's latency) or 'first_reply'; bucket: analytics_bucket's number.
  await sql.raw(`create table analytics_latency (
    workspace_id uuid not null references workspaces (id) on delete cascade,
    kind text not null check (kind in ('endpoint', 'first_reply')),
    hour timestamptz not null,
    channel text not null,
    bucket smallint not null,
    count integer not null,
    primary key (workspace_id, kind, hour, channel, bucket)
  )`).execute(db);
  // The conversations already counted as handed over (docs/analytics.md); goes with its session.
  await sql.raw(`create table analytics_handed_over (
    session_id uuid primary key references sessions (id) on delete cascade
  )`).execute(db);

  // The bucket of a latency in milliseconds: 0 below the first edge, i from edge i (db/analytics-buckets.ts).
  await sql.raw(`create function analytics_bucket(ms numeric) returns smallint language sql immutable as $$
    select width_bucket(greatest(ms, 0), array[${LATENCY_BUCKET_EDGES_MS.join(', ')}]::numeric[])::smallint $$`).execute(db);
  // The bot-link no-answer reasons as the Overview groups them (docs/analytics.md, "The endpoint"); null: no request.
  await sql.raw(`create function analytics_no_answer(reason text) returns text language sql immutable as $$
    select case
      when reason = 'timeout' then 'timeout'
      when reason = 'status' then 'status'
      when reason in ('invalid_json', 'cut_off', 'invalid_response') then 'invalid'
      when reason = 'empty_reply' then 'empty'
      when reason in ('endpoint_down', 'connection', 'tls', 'refused_address', 'invalid_url') then 'down'
      else null
    end $$`).execute(db);

  // What was there before the roll-ups, counted once; then the triggers count every new row.
  for (const statement of [sessionsSql('sessions'), ...turnsSql('session_turns'), ...messagesSql('session_messages')]) {
    await sql.raw(statement).execute(db);
  }
  await trigger(db, 'sessions', 'analytics_sessions_added', [sessionsSql('added')]);
  await trigger(db, 'session_turns', 'analytics_turns_added', turnsSql('added'));
  await trigger(db, 'session_messages', 'analytics_messages_added', messagesSql('added'));

  // The export reads a period's conversations in the order they started, a batch at a time.
  await sql`create index sessions_workspace_created on sessions (workspace_id, created_at, id)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index sessions_workspace_created`.execute(db);
  await sql`drop trigger analytics_messages_added on session_messages`.execute(db);
  await sql`drop trigger analytics_turns_added on session_turns`.execute(db);
  await sql`drop trigger analytics_sessions_added on sessions`.execute(db);
  for (const fn of ['analytics_messages_added', 'analytics_turns_added', 'analytics_sessions_added']) await sql.raw(`drop function ${fn}()`).execute(db);
  await sql`drop function analytics_no_answer(text)`.execute(db);
  await sql`drop function analytics_bucket(numeric)`.execute(db);
  for (const table of ['analytics_handed_over', 'analytics_latency', 'analytics_hours']) await db.schema.dropTable(table).execute();
}
