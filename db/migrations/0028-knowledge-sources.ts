import { sql, type Kysely } from 'kysely';

// Knowledge from where a shop keeps it (docs/knowledge.md, "Websites and files"): a website (a start URL whose links
// are followed) or a sitemap, fetched and re-synced by one engine at a time, and uploaded files. Each page or file
// becomes a knowledge document that points to its source, so deleting a source deletes its passages.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('knowledge_sources')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('website', 'sitemap', 'file')`))
    // Websites and sitemaps: where the sync starts. Files: null.
    .addColumn('url', 'text')
    // What an owner sees in the list: the file's name, or the site's host.
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('schedule', 'text', (c) => c.notNull().defaultTo('daily').check(sql`schedule in ('daily', 'weekly', 'manual')`))
    .addColumn('language', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('queued').check(sql`status in ('queued', 'syncing', 'done', 'failed')`))
    // Progress of the last (or running) sync: URLs found, fetched, and the pages kept.
    .addColumn('found', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('fetched', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('pages', 'integer', (c) => c.notNull().defaultTo(0))
    // [{url, reason}]: what was not taken, in words an owner reads.
    .addColumn('skipped', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('error', 'text')
    .addColumn('last_synced_at', 'timestamptz')
    // When the next sync is due (now: asked for); null: never by itself (files, a manual schedule after its sync).
    .addColumn('next_sync_at', 'timestamptz')
    // One engine at a time: the engine that runs the sync, until when (renewed while it runs).
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'timestamptz', (c) => c.notNull().defaultTo(sql`'epoch'::timestamptz`))
    .addColumn('file_bytes', 'integer')
    .addColumn('file_type', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index knowledge_sources_listing on knowledge_sources (workspace_id, created_at desc, id desc)`.execute(db);
  // The scheduler's look for due syncs.
  await sql`create index knowledge_sources_due on knowledge_sources (next_sync_at) where next_sync_at is not null`.execute(db);
  // A re-upload of a file of the same name replaces it.
  await sql`create unique index knowledge_sources_file_name on knowledge_sources (workspace_id, name) where kind = 'file'`.execute(db);

  // Each page a website's sync keeps: what a re-sync sends as conditions (ETag, Last-Modified) and compares (hash).
  await db.schema
    .createTable('knowledge_source_pages')
    .addColumn('source_id', 'uuid', (c) => c.notNull().references('knowledge_sources.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('etag', 'text')
    .addColumn('last_modified', 'text')
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('document_id', 'uuid', (c) => c.references('knowledge_documents.id').onDelete('set null'))
    .addColumn('fetched_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('knowledge_source_pages_pk', ['source_id', 'url'])
    .execute();

  await db.schema.alterTable('knowledge_documents').addColumn('source_id', 'uuid', (c) => c.references('knowledge_sources.id').onDelete('cascade')).execute();
  await sql`create index knowledge_documents_source on knowledge_documents (source_id) where source_id is not null`.execute(db);
  await sql`alter table knowledge_documents drop constraint knowledge_documents_origin_check`.execute(db);
  await sql`alter table knowledge_documents add constraint knowledge_documents_origin_check check (origin in ('sync', 'dashboard', 'website', 'file'))`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from knowledge_documents where origin in ('website', 'file')`.execute(db);
  await sql`alter table knowledge_documents drop constraint knowledge_documents_origin_check`.execute(db);
  await sql`alter table knowledge_documents add constraint knowledge_documents_origin_check check (origin in ('sync', 'dashboard'))`.execute(db);
  await db.schema.alterTable('knowledge_documents').dropColumn('source_id').execute();
  await db.schema.dropTable('knowledge_source_pages').execute();
  await db.schema.dropTable('knowledge_sources').execute();
}
