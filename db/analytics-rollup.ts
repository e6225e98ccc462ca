/**
 * The Overview's roll-ups as SQL (docs/analytics.md, "How the figures are kept"): the statements the triggers of
 * migrations 0022 and 0024 run for each new session, turn and message. Counts and bucket numbers only: no text, no
 * customer detail.
 *
 * `slotted` (0024 on): each database connection adds to rows of its own slot, `pg_backend_pid() % ANALYTICS_SLOTS`,
 * so two transactions counting into the same workspace, hour and channel do not wait for each other's commit (one row
 * per hour was a lock every message of a workspace queued for). The readers sum over the slots; the compaction
 * (src/analytics/compaction.ts) folds the slots of past hours into slot 0.
 */

/** How many rows per workspace, hour and channel (and per bucket) concurrent writers spread over. */
export const ANALYTICS_SLOTS = 16;
const ANALYTICS_SLOT = `(pg_backend_pid() % ${ANALYTICS_SLOTS})::smallint`;

/** The UTC hour of a timestamptz, whatever the connection's TimeZone. */
const hourOf = (column: string) => `(date_trunc('hour', ${column} at time zone 'UTC') at time zone 'UTC')`;

export const COUNTERS = [
  'conversations', 'customer_messages', 'handed_over',
  'by_integrator', 'by_knowledge_base', 'by_ai', 'by_fallback', 'by_agent',
  'endpoint_requests', 'endpoint_answers',
  'no_answer_timeout', 'no_answer_status', 'no_answer_invalid', 'no_answer_empty', 'no_answer_down',
] as const;

/**
 * Adds the grouped rows of `select` (columns: workspace_id, hour, channel, then `columns`) to the hour rows; with
 * `slotted`, to the rows of this connection's slot.
 */
function addToHours(columns: readonly string[], select: string, slotted: boolean): string {
  return upsert('analytics_hours', ['workspace_id', 'hour', 'channel'], columns, select, '1, 2, 3', slotted);
}

function addToLatency(select: string, slotted: boolean): string {
  const key = ['workspace_id', 'kind', 'hour', 'channel', 'bucket'];
  return upsert('analytics_latency', key, ['count'], select, '1, 4, 2, 3, 5', slotted, ['workspace_id', 'hour', 'channel', 'kind', 'bucket']);
}

/**
 * Adds `select`'s rows (the columns `insertOrder`, then `values`) to `table`, whose key is `key`; with `slotted`, into
 * this connection's slot, in `order` (key order, so two statements wait for each other rather than deadlock).
 */
function upsert(
  table: string,
  key: readonly string[],
  values: readonly string[],
  select: string,
  order: string,
  slotted: boolean,
  insertOrder: readonly string[] = key,
): string {
  const columns = [...insertOrder, ...values, ...(slotted ? ['slot'] : [])];
  const rows = slotted ? `select x.*, ${ANALYTICS_SLOT} from (${select}) x order by ${order}` : select;
  return `insert into ${table} (${columns.join(', ')})
    ${rows}
    on conflict (${[...key, ...(slotted ? ['slot'] : [])].join(', ')}) do update set
      ${values.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(',\n      ')}`;
}

/** The condition that leaves test conversations out, on a session aliased `s` (or true before 0039). */
const real = (realOnly: boolean, alias = 's') => (realOnly ? `${alias}.test_run_id is null` : 'true');

/** Sessions of `source` counted as conversations in the hour they started. */
export const sessionsSql = (source: string, slotted = false, realOnly = false) =>
  addToHours(['conversations'], `select workspace_id, ${hourOf('created_at')} as h, channel, count(*)
    from ${source} s where ${real(realOnly)} group by 1, 2, 3 order by 1, 2, 3`, slotted);

/**
 * Turns of `source`: the customer message, who answered it, what the endpoint did (docs/analytics.md, "The endpoint")
 * in the hour the message arrived; the endpoint's latency and the first reply time as histogram buckets.
 */
export function turnsSql(source: string, slotted = false, realOnly = false): string[] {
  const t = `select s.workspace_id, s.channel, ${hourOf('a.started_at')} as h, a.source, a.ordinal, a.reply,
      a.botlink ->> 'outcome' as outcome, analytics_no_answer(a.botlink ->> 'reason') as no_answer,
      (a.botlink ->> 'latencyMs')::numeric as latency, (extract(epoch from a.ended_at - a.started_at) * 1000)::numeric as took
    from ${source} a join sessions s on s.id = a.session_id where ${real(realOnly)}`;
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
    `select a.session_id from ${source} a join sessions s on s.id = a.session_id where a.handoff is not null and ${real(realOnly)}`,
    slotted,
  );
  // The endpoint's latency: requests that got a response or ran out of time (a down endpoint was not waited for).
  const latency = addToLatency(`select workspace_id, h, channel, kind, b, count(*) from (
      select workspace_id, h, channel, 'endpoint' as kind, analytics_bucket(latency) as b from (${t}) t
        where latency is not null and (outcome = 'answer' or no_answer in ('timeout', 'status', 'invalid', 'empty'))
      union all
      select workspace_id, h, channel, 'first_reply', analytics_bucket(took) from (${t}) t where ordinal = 1 and reply is not null
    ) x group by 1, 2, 3, 4, 5 order by 1, 4, 2, 3, 5`, slotted);
  return [hours, latency];
}

/**
 * One upsert of the hour rows per statement: the rows' own counters (`counters`: column → 0/1 per row of `rows`, which
 * has workspace_id, h and channel) and the conversations handed over for the first time (a session of `handoffs`
 * not yet in analytics_handed_over; counted once, in the hour it started: docs/analytics.md). One upsert in key order,
 * so two statements counting into the same hours wait for each other instead of deadlocking.
 */
function countIntoHours(counters: Record<string, string>, rows: string, handoffs: string, slotted: boolean): string {
  const columns = Object.keys(counters);
  return `with marked as (
      insert into analytics_handed_over (session_id)
      select distinct session_id from (${handoffs}) x order by 1
      on conflict do nothing
      returning session_id
    ), contributions as (
      select workspace_id, h, channel, ${columns.map((c) => `coalesce(${counters[c]}, 0) as ${c}`).join(', ')}, 0 as handed_over from (${rows}) r
      union all
      select s.workspace_id, ${hourOf('s.created_at')}, s.channel, ${columns.map(() => '0').join(', ')}, 1
      from marked m join sessions s on s.id = m.session_id
    )
    ${addToHours([...columns, 'handed_over'], `select workspace_id, h, channel, ${[...columns, 'handed_over'].map((c) => `sum(${c})::int`).join(', ')}
      from contributions group by 1, 2, 3 order by 1, 2, 3`, slotted)}`;
}

/** Messages of `source` outside turns: agents' replies, and customer messages held while a person handles the chat. */
export function messagesSql(source: string, slotted = false, realOnly = false): string[] {
  const m = `select s.workspace_id, s.channel, ${hourOf('a.at')} as h, a."from"
    from ${source} a join sessions s on s.id = a.session_id
    where (a."from" = 'agent' or (a."from" = 'customer' and a.turn_id is null)) and ${real(realOnly)}`;
  const handoffs = `select a.session_id from ${source} a join sessions s on s.id = a.session_id where a."from" = 'agent' and ${real(realOnly)}`;
  return [countIntoHours({ customer_messages: `("from" = 'customer')::int`, by_agent: `("from" = 'agent')::int` }, m, handoffs, slotted)];
}


/**
 * Folds the rows of slots other than 0 into slot 0: those of hours before `before` (an SQL expression), at most `limit`
 * keys per table and statement, skipping rows another fold holds; without either, all of them. Two statements, the hour
 * rows and the histograms; each answers the rows it moved (`moved`).
 */
export function foldSlotsSql(options: { before?: string; limit?: number } = {}): string[] {
  const where = ['slot <> 0', ...(options.before ? [`hour < ${options.before}`] : [])].join(' and ');
  const limit = options.limit === undefined ? '' : ` limit ${Math.trunc(options.limit)}`;
  const fold = (table: string, key: readonly string[], values: readonly string[]) => `with moved as (
      delete from ${table} t using (
        select ${key.join(', ')}, slot from ${table} where ${where} order by ${key.join(', ')}, slot${limit} for update skip locked
      ) k
      where ${[...key, 'slot'].map((c) => `t.${c} = k.${c}`).join(' and ')}
      returning t.*
    ), added as (
      insert into ${table} (${key.join(', ')}, slot, ${values.join(', ')})
      select ${key.join(', ')}, 0, ${values.map((c) => `sum(${c})::int`).join(', ')} from moved
      group by ${key.join(', ')} order by ${key.join(', ')}
      on conflict (${key.join(', ')}, slot) do update set
        ${values.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(',\n        ')}
    )
    select count(*)::int as moved from moved`;
  return [
    fold('analytics_hours', ['workspace_id', 'hour', 'channel'], COUNTERS),
    fold('analytics_latency', ['workspace_id', 'kind', 'hour', 'channel', 'bucket'], ['count']),
  ];
}
