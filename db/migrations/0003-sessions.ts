import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workspaces').addColumn('team_available', 'boolean', (c) => c.notNull().defaultTo(false)).execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('channel', 'text', (c) => c.notNull().check(sql`channel in ('phone', 'whatsapp', 'webchat')`))
    // The session_id sent to the integrator (protocol §2.1): the call id or the WhatsApp conversation id.
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('idle'))
    .addColumn('language', 'text', (c) => c.notNull().defaultTo('en'))
    .addColumn('customer_phone', 'text')
    .addColumn('customer_email', 'text')
    .addColumn('customer_name', 'text')
    .addColumn('handoff', 'jsonb')
    .addColumn('turn_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('snapshot', 'jsonb')
    .addColumn('machine_version', 'integer', (c) => c.notNull())
    // One turn of a session at a time across processes: the process holding an unexpired lease runs it.
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('sessions_external', ['workspace_id', 'channel', 'external_id'])
    .execute();
  await db.schema.createIndex('sessions_workspace_updated').on('sessions').columns(['workspace_id', 'updated_at']).execute();

  await db.schema
    .createTable('session_turns')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('session_id', 'uuid', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('ordinal', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('customer_message', 'text', (c) => c.notNull())
    .addColumn('reply', 'text')
    .addColumn('source', 'text')
    .addColumn('botlink', 'jsonb')
    .addColumn('knowledge', 'jsonb')
    .addColumn('tool_rounds', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('handoff', 'jsonb')
    .addColumn('timings', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('errors', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ended_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('session_turns_session').on('session_turns').columns(['session_id', 'started_at']).execute();

  await db.schema
    .createTable('notifications')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('session_id', 'uuid', (c) => c.references('sessions.id').onDelete('set null'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('read_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('notifications_workspace').on('notifications').columns(['workspace_id', 'created_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['notifications', 'session_turns', 'sessions']) await db.schema.dropTable(table).execute();
  await db.schema.alterTable('workspaces').dropColumn('team_available').execute();
}
