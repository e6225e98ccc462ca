import { sql, type Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // The phone channel's settings per workspace (PUT /v1/phone; docs/phone.md).
  await db.schema
    .createTable('phone_settings')
    .addColumn('workspace_id', 'uuid', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    // E.164; the number the TwiML action dials after a human handoff while the team is available.
    .addColumn('transfer_number', 'text')
    // { time_zone, week: { mon: [['09:00','17:30']], … } }; null: no hours, the manual switch alone decides.
    .addColumn('team_hours', 'jsonb')
    // The ConversationRelay language (BCP 47) and welcome greeting in the TwiML that connects a call.
    .addColumn('language', 'text', (c) => c.notNull().defaultTo('en-US'))
    .addColumn('greeting', 'text')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // The numbers a workspace answers: the primary key makes a number belong to one workspace at most (409 otherwise).
  await db.schema
    .createTable('phone_numbers')
    .addColumn('number', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('phone_numbers_workspace').on('phone_numbers').column('workspace_id').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('phone_numbers').execute();
  await db.schema.dropTable('phone_settings').execute();
}
