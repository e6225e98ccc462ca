import { sql, type Kysely } from 'kysely';
import { messagesSql, sessionsSql, turnsSql } from '../analytics-rollup.ts';

// Test scenarios (docs/scenarios.md): a workspace's scripted test conversations, their runs, and the mark on the
// sessions those runs made. A test conversation goes through the real engine but never reaches the team's lists, the
// Overview, exports, webhooks or retention counts: the mark is set when its session row is made, so the roll-up
// triggers below leave it out from its first row on. Its sessions go with their run (on delete cascade), and a run
// with its scenario.

/** The roll-up triggers' functions (migrations 0022, 0024), with or without test conversations left out. */
async function replaceRollups(db: Kysely<unknown>, realOnly: boolean): Promise<void> {
  const functions = {
    analytics_sessions_added: [sessionsSql('added', true, realOnly)],
    analytics_turns_added: turnsSql('added', true, realOnly),
    analytics_messages_added: messagesSql('added', true, realOnly),
  };
  for (const [name, statements] of Object.entries(functions)) {
    await sql.raw(`create or replace function ${name}() returns trigger language plpgsql as $body$
    begin
      ${statements.map((s) => `${s};`).join('\n')}
      return null;
    end $body$`).execute(db);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('scenarios')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    // The scenario as written (src/scenarios/scenario-schema.ts), checked before it is stored.
    .addColumn('definition', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // The CLI finds a scenario by its name: one per workspace.
  await db.schema.createIndex('scenarios_name').on('scenarios').columns(['workspace_id', 'name']).unique().execute();

  await db.schema
    .createTable('scenario_runs')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('scenario_id', 'uuid', (c) => c.notNull().references('scenarios.id').onDelete('cascade'))
    // The scenario as it was when the run was asked for: editing it later does not change a run.
    .addColumn('definition', 'jsonb', (c) => c.notNull())
    // queued → running (claimed by one engine) → done.
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('queued'))
    .addColumn('runs', 'integer', (c) => c.notNull())
    .addColumn('passed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failures', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('transcripts', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'timestamptz')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('scenario_runs_scenario').on('scenario_runs').columns(['scenario_id', 'created_at']).execute();
  // The workers' claim: what waits, and what an engine that stopped left running.
  await sql`create index scenario_runs_open on scenario_runs (created_at) where status <> 'done'`.execute(db);

  await db.schema.alterTable('sessions').addColumn('test_run_id', 'uuid', (c) => c.references('scenario_runs.id').onDelete('cascade')).execute();
  await sql`create index sessions_test_run on sessions (test_run_id) where test_run_id is not null`.execute(db);

  await replaceRollups(db, true);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await replaceRollups(db, false);
  // Test conversations go with their runs.
  await sql`delete from sessions where test_run_id is not null`.execute(db);
  await db.schema.alterTable('sessions').dropColumn('test_run_id').execute();
  await db.schema.dropTable('scenario_runs').execute();
  await db.schema.dropTable('scenarios').execute();
}
