import { sql, type Kysely } from 'kysely';
import { LATENCY_BUCKET_EDGES_MS } from '../analytics-buckets.ts';
import { COUNTERS, messagesSql, sessionsSql, turnsSql } from '../analytics-rollup.ts';

// The Overview's roll-ups (docs/analytics.md): per workspace, channel and UTC hour, the counters of every figure and
// latency histograms with fixed buckets, kept by statement-level triggers in the same transaction as the rows they
// count, so every way a session, turn or message is written (now and later) is counted once, and a request reads a
// few thousand small rows instead of every turn. Counts and bucket numbers only: no text, no customer detail.

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
