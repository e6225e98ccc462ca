import { sql, type Kysely } from 'kysely';

// Answers that a knowledge change moved (docs/scenarios.md, "Answers a knowledge change moved"): the questions an
// owner saved with the answer they got ("saved checks"), the mark a knowledge write leaves for its workspace (one row
// per workspace, so a sync batch of many pages is one mark), and each re-run's result: every check's answer before and
// after, and the web-chat scenarios it ran again.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('knowledge_checks')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('question', 'text', (c) => c.notNull())
    // The language the question was answered in when saved: a re-run asks in the same one.
    .addColumn('language', 'text', (c) => c.notNull())
    // The expected answer: what the question got when saved, or a re-run's answer the owner accepted.
    .addColumn('answer', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // One check per question and language: a second save of the same question is a 409.
  await db.schema.createIndex('knowledge_checks_question').on('knowledge_checks').columns(['workspace_id', 'language', 'question']).unique().execute();

  await db.schema
    .createTable('knowledge_change_marks')
    .addColumn('workspace_id', 'uuid', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    // The first and the latest write since the last re-run: the re-run waits for a quiet spell after the latest,
    // but no longer than a while after the first (src/scenarios/limits.ts).
    .addColumn('first_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('knowledge_rechecks')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('finished_at', 'timestamptz', (c) => c.notNull())
    // The knowledge's version the re-run answered from: a write that changed nothing (a sync sending a page again)
    // finds the same version and runs nothing.
    .addColumn('knowledge_version', 'text', (c) => c.notNull())
    // [{check_id, question, language, before, before_source, after, after_source, changed}]
    .addColumn('checks', 'jsonb', (c) => c.notNull())
    // [{scenario_id, name, before: {run_id, runs, passed}, after_run_id}]
    .addColumn('scenarios', 'jsonb', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('knowledge_rechecks_latest').on('knowledge_rechecks').columns(['workspace_id', 'finished_at']).execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('knowledge_rechecks').execute();
  await db.schema.dropTable('knowledge_change_marks').execute();
  await db.schema.dropTable('knowledge_checks').execute();
  await sql`delete from job_claims where name like 'knowledge-recheck:%'`.execute(db);
}
