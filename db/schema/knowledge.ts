/** Table types of the knowledge base and its sync and widget keys (migration 0002). */
import type { ColumnType, Selectable } from 'kysely';
import type { Timestamp } from './columns.ts';

export type KnowledgeKind = 'page' | 'product';
/** Who wrote a knowledge document (migration 0017): a plugin through the sync API, or a person in the dashboard. */
export type KnowledgeOrigin = 'sync' | 'dashboard';
export type Availability = 'in_stock' | 'out_of_stock' | 'preorder' | 'backorder' | 'discontinued';

export interface KnowledgeDocumentsTable {
  id: string;
  workspace_id: string;
  kind: KnowledgeKind;
  /** The plugin's own id of the page or product (sync API path parameter). */
  external_id: string;
  title: string;
  url: string | null;
  /** Primary language subtag (nl, en, …) or null; picks the text-search config of the chunks. */
  language: string | null;
  /** Plain text (HTML is converted on the way in). For products: the description. */
  body: string;
  /** Products only. numeric: the driver returns a decimal string. */
  price: ColumnType<string | null, string | number | null, string | number | null>;
  currency: string | null;
  sku: string | null;
  availability: Availability | null;
  /** SHA-256 hex over the stored content; equal hash on re-sync means unchanged. */
  content_hash: string;
  /** Defaults to now() (Timestamp already makes it optional on insert). */
  created_at: Timestamp;
  updated_at: Timestamp;
  /** sync (the default) or dashboard; the sync API reads and writes only its own (docs/knowledge.md). */
  origin: ColumnType<KnowledgeOrigin, KnowledgeOrigin | undefined, KnowledgeOrigin>;
  /** A question-and-answer pair: the title is the question, the body the answer. */
  qa: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface KnowledgeChunksTable {
  id: string;
  document_id: string;
  workspace_id: string;
  ordinal: number;
  text: string;
  language: string | null;
  /** tsvector, computed at insert (never read back as a value). */
  tsv: string;
}

export type ApiKeyKind = 'sync' | 'widget';

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  kind: ApiKeyKind;
  /** SHA-256 hex of the key; every lookup goes through it. */
  key_hash: string;
  /** Widget keys only: public by design (embedded in web pages, read-only), so kept readable. Null for sync keys. */
  key_plain: string | null;
  key_hint: string;
  /** Defaults to now() (Timestamp already makes it optional on insert). */
  created_at: Timestamp;
  revoked_at: Timestamp | null;
}

export type KnowledgeDocument = Selectable<KnowledgeDocumentsTable>;
export type ApiKey = Selectable<ApiKeysTable>;
