import { sql, type Kysely } from 'kysely';

// Migrations take Kysely<any>: they describe the schema as it was then, not today's types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  // One row per synced page or product (protocol §1.6); the plugin's own id is the key, so a re-sync overwrites.
  await db.schema
    .createTable('knowledge_documents')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('page', 'product')`))
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    // Primary language subtag (nl, en, …) or null when the plugin did not say; it picks the text-search config.
    .addColumn('language', 'text')
    // Plain text: HTML is converted before it is stored, so what is chunked is what is stored.
    .addColumn('body', 'text', (c) => c.notNull())
    // Products only (null for pages). numeric keeps prices exact; currency is ISO 4217.
    .addColumn('price', 'numeric(14, 4)')
    .addColumn('currency', 'text')
    .addColumn('sku', 'text')
    .addColumn('availability', 'text', (c) =>
      c.check(sql`availability in ('in_stock', 'out_of_stock', 'preorder', 'backorder', 'discontinued')`),
    )
    // SHA-256 over the stored content: an identical re-sync is answered `unchanged` without touching the chunks.
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('knowledge_documents_external', ['workspace_id', 'kind', 'external_id'])
    .execute();

  await db.schema
    .createTable('knowledge_chunks')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('document_id', 'uuid', (c) => c.notNull().references('knowledge_documents.id').onDelete('cascade'))
    // Copied from the document so the search filters one table before it joins.
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('ordinal', 'integer', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('language', 'text')
    // Computed at insert with the chunk's own language config (dutch, english or simple): title weight A, text D.
    .addColumn('tsv', sql`tsvector`, (c) => c.notNull())
    .addUniqueConstraint('knowledge_chunks_ordinal', ['document_id', 'ordinal'])
    .execute();
  await sql`create index knowledge_chunks_tsv on knowledge_chunks using gin (tsv)`.execute(db);
  await db.schema.createIndex('knowledge_chunks_workspace').on('knowledge_chunks').column('workspace_id').execute();

  // Keys of the sync API (protocol §1.6, §5.7). Every key is found by its SHA-256 hash. The sync key is a secret that can
  // write: only its hash is kept and it is shown once. The widget key is embedded in the customer's public web pages
  // and can only read, so it is not a secret: it is also kept as is (`key_plain`) so the dashboard can show it again.
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('sync', 'widget')`))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_plain', 'text')
    .addColumn('key_hint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .addCheckConstraint('api_keys_plain_widget_only', sql`(kind = 'widget') = (key_plain is not null)`)
    .execute();
  // One live key of each kind per workspace; a new sync key revokes the previous one in the same transaction.
  await sql`create unique index api_keys_live on api_keys (workspace_id, kind) where revoked_at is null`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['api_keys', 'knowledge_chunks', 'knowledge_documents']) await db.schema.dropTable(table).execute();
}
