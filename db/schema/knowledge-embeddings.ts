/** Table type of the passages' and phrasings' embeddings (migration 0033, docs/knowledge.md "Embeddings"). */
import type { ColumnType } from 'kysely';
import type { Timestamp } from './columns.ts';

export interface KnowledgeEmbeddingsTable {
  id: string;
  workspace_id: string;
  document_id: string;
  /** A passage's vector: its chunk's ordinal; null for a phrasing's. */
  chunk_ordinal: number | null;
  /** A phrasing's vector: the phrasing; null for a passage's. */
  phrasing_id: string | null;
  /** SHA-256 hex of the text embedded: a passage's document title, a newline and its text; a phrasing's text. */
  text_hash: string;
  /** The embedding model (LLM_EMBEDDING_MODEL) that made it. */
  model: string;
  /** real[]: the drivers read it as numbers (written as an array literal). */
  vector: ColumnType<number[], string, string>;
  /** The model's tokens for this text; null when it sent no usage. */
  tokens: number | null;
  updated_at: Timestamp;
}
