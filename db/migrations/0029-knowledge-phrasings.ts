import { sql, type Kysely } from 'kysely';

// Other words for a passage (docs/knowledge.md, "The team teaches the bot"): the way a customer asked what a passage
// answers, taught by the team ('team') or written by a model from the passage ('generated'). They are searched like
// the passage's text: the write side puts a chunk's phrasings into that chunk's tsv with weight B.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('knowledge_phrasings')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('document_id', 'uuid', (c) => c.notNull().references('knowledge_documents.id').onDelete('cascade'))
    // The passage (chunk ordinal) it phrases; null: the whole document (every passage of it).
    .addColumn('chunk_ordinal', 'integer')
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('language', 'text')
    .addColumn('origin', 'text', (c) => c.notNull().check(sql`origin in ('team', 'generated')`))
    // The user who taught it (team); null for generated ones, or after the user was removed.
    .addColumn('created_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    // Generated ones: a hash of the passage text they came from, so they are made again only when the passage changes.
    .addColumn('passage_hash', 'text')
    // Generated ones: the model's tokens spent on them.
    .addColumn('tokens', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index knowledge_phrasings_document on knowledge_phrasings (document_id)`.execute(db);
  await sql`create index knowledge_phrasings_origin on knowledge_phrasings (workspace_id, origin)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('knowledge_phrasings').execute();
}
