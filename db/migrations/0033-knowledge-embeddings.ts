import { sql, type Kysely } from 'kysely';

// Passage embeddings for the optional embedding model (docs/knowledge.md, "Embeddings"): one vector per passage
// (a document's chunk, by ordinal: a chunk's id changes when its document is chunked again, its ordinal does not) and
// one per phrasing. `text_hash` and `model` say what the vector was made from, so a passage is embedded again only
// when its text (or the model) changed. Vectors are real[] on both databases, ranked by cosine in the engine:
// pgvector is a later step.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('knowledge_embeddings')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('workspace_id', 'uuid', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('document_id', 'uuid', (c) => c.notNull().references('knowledge_documents.id').onDelete('cascade'))
    // A passage's vector: its chunk's ordinal; null for a phrasing's.
    .addColumn('chunk_ordinal', 'integer')
    // A phrasing's vector: the phrasing (it goes with it); null for a passage's.
    .addColumn('phrasing_id', 'uuid', (c) => c.references('knowledge_phrasings.id').onDelete('cascade'))
    // SHA-256 hex of the text embedded (a passage: its document's title, a newline and its text; a phrasing: its text).
    .addColumn('text_hash', 'text', (c) => c.notNull())
    // LLM_EMBEDDING_MODEL when it was made: another model's vectors are not comparable, and are made again.
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('vector', sql`real[]`, (c) => c.notNull())
    // The model's tokens for this text (a request's tokens shared among its inputs); null when it sent no usage.
    .addColumn('tokens', 'integer')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('knowledge_embeddings_one_target', sql`(chunk_ordinal is null) <> (phrasing_id is null)`)
    .execute();
  await sql`create unique index knowledge_embeddings_passage on knowledge_embeddings (document_id, chunk_ordinal) where phrasing_id is null`.execute(db);
  await sql`create unique index knowledge_embeddings_phrasing on knowledge_embeddings (phrasing_id) where phrasing_id is not null`.execute(db);
  await sql`create index knowledge_embeddings_workspace on knowledge_embeddings (workspace_id)`.execute(db);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('knowledge_embeddings').execute();
}
