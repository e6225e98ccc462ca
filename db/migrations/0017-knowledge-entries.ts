import { sql, type Kysely } from 'kysely';

// Entries written by hand in the dashboard beside what the sync API sends (docs/knowledge.md). They live in the same
// tables, so the search finds them as it finds synced pages; `origin` keeps the two apart.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // sync: sent by a plugin through the sync API, read-only in the dashboard. dashboard: written by an owner or admin,
  // never seen, overwritten or deleted by the sync API. Every existing row came through the sync API.
  await db.schema
    .alterTable('knowledge_documents')
    .addColumn('origin', 'text', (c) => c.notNull().defaultTo('sync').check(sql`origin in ('sync', 'dashboard')`))
    .execute();
  // A question-and-answer pair: a page whose title is the question (indexed with the title's weight, A) and whose body
  // is the answer.
  await db.schema.alterTable('knowledge_documents').addColumn('qa', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  // The plugin's external_id names a synced document only: a hand-made entry's external_id (its own id) can never be
  // reached by a sync PUT or DELETE of the same id.
  await sql`alter table knowledge_documents drop constraint knowledge_documents_external`.execute(db);
  await sql`alter table knowledge_documents add constraint knowledge_documents_external unique (workspace_id, origin, kind, external_id)`.execute(db);
  // The dashboard's list: a workspace's entries of one origin, most recently changed first.
  await sql`create index knowledge_documents_listing on knowledge_documents (workspace_id, origin, updated_at desc, id desc)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index knowledge_documents_listing`.execute(db);
  await sql`delete from knowledge_documents where origin <> 'sync'`.execute(db);
  await sql`alter table knowledge_documents drop constraint knowledge_documents_external`.execute(db);
  await sql`alter table knowledge_documents add constraint knowledge_documents_external unique (workspace_id, kind, external_id)`.execute(db);
  await db.schema.alterTable('knowledge_documents').dropColumn('qa').execute();
  await db.schema.alterTable('knowledge_documents').dropColumn('origin').execute();
}
