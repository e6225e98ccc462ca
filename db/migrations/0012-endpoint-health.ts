import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The health of each workspace's bot-link endpoint (src/botlink/endpoint-health.ts), shared by every process: one
  // row, updated under its row lock with the outcomes a process saw since its last write.
  await db.schema
    .createTable('endpoint_health')
    .addColumn('workspace_id', 'uuid', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    .addColumn('endpoint_url', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('healthy', 'degraded', 'down', 'probing')`))
    .addColumn('since', 'timestamptz', (c) => c.notNull())
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('consecutive_responses', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_failure_at', 'timestamptz')
    .addColumn('recent', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('last_problem', 'text')
    .addColumn('probed_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  // The probe sweep looks for endpoints that are down.
  await sql`create index endpoint_health_down on endpoint_health (probed_at) where state = 'down'`.execute(db);

  // The owner may be told by webhook when the endpoint goes down and when it recovers (docs/webhooks.md).
  await sql`alter table webhook_events drop constraint webhook_events_event_check`.execute(db);
  await sql`alter table webhook_events add constraint webhook_events_event_check
    check (event in ('new_chat', 'escalation', 'new_lead', 'test', 'endpoint_down', 'endpoint_recovered'))`.execute(db);
  await sql`alter table webhook_endpoints drop constraint webhook_endpoints_event_check`.execute(db);
  await sql`alter table webhook_endpoints add constraint webhook_endpoints_event_check
    check (event in ('new_chat', 'escalation', 'new_lead', 'endpoint_down', 'endpoint_recovered'))`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from webhook_endpoints where event in ('endpoint_down', 'endpoint_recovered')`.execute(db);
  await sql`delete from webhook_events where event in ('endpoint_down', 'endpoint_recovered')`.execute(db);
  await sql`alter table webhook_endpoints drop constraint webhook_endpoints_event_check`.execute(db);
  await sql`alter table webhook_endpoints add constraint webhook_endpoints_event_check check (event in ('new_chat', 'escalation', 'new_lead'))`.execute(db);
  await sql`alter table webhook_events drop constraint webhook_events_event_check`.execute(db);
  await sql`alter table webhook_events add constraint webhook_events_event_check check (event in ('new_chat', 'escalation', 'new_lead', 'test'))`.execute(db);
  await db.schema.dropTable('endpoint_health').execute();
}
