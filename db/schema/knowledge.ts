/** Table types of the knowledge base and its sync and widget keys (migration 0002). */
import type { ColumnType, Selectable } from 'kysely';
import type { Timestamp } from './columns.ts';

export type KnowledgeKind = 'page' | 'product';
/**
 * Who wrote a knowledge document (migration 0017): a plugin through the sync API, or a person in the dashboard; since
 * migration 0028 also a website's sync or an uploaded file (a knowledge source).
 */
export type KnowledgeOrigin = 'sync' | 'dashboard' | 'website' | 'file';
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
  /** The website or file it came from (migration 0028); deleting the source deletes it. Null for the others. */
  source_id: ColumnType<string | null, string | null | undefined, string | null>;
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

export type KnowledgeSourceKind = 'website' | 'sitemap' | 'file';
export type KnowledgeSourceSchedule = 'daily' | 'weekly' | 'manual';
export type KnowledgeSourceStatus = 'queued' | 'syncing' | 'done' | 'failed';
/** A URL the sync did not take, and why, in words an owner reads. */
export interface SkippedUrl {
  url: string;
  reason: string;
}

/** A website, sitemap or uploaded file the knowledge base is kept from (migration 0028, docs/knowledge.md). */
export interface KnowledgeSourcesTable {
  id: string;
  workspace_id: string;
  kind: KnowledgeSourceKind;
  /** Websites and sitemaps: where the sync starts; files: null. */
  url: string | null;
  /** The file's name, or the site's host. */
  name: string;
  schedule: ColumnType<KnowledgeSourceSchedule, KnowledgeSourceSchedule | undefined, KnowledgeSourceSchedule>;
  language: string | null;
  status: ColumnType<KnowledgeSourceStatus, KnowledgeSourceStatus | undefined, KnowledgeSourceStatus>;
  /** The last (or running) sync's URLs found and fetched, and the pages kept. */
  found: ColumnType<number, number | undefined, number>;
  fetched: ColumnType<number, number | undefined, number>;
  pages: ColumnType<number, number | undefined, number>;
  skipped: ColumnType<SkippedUrl[], string | undefined, string>;
  error: string | null;
  last_synced_at: Timestamp | null;
  /** Due then (now: asked for); null: not by itself. */
  next_sync_at: Timestamp | null;
  lease_owner: string | null;
  lease_until: Timestamp;
  file_bytes: number | null;
  file_type: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A page a website's sync keeps, with what a re-sync sends as conditions and compares. */
export interface KnowledgeSourcePagesTable {
  source_id: string;
  url: string;
  etag: string | null;
  last_modified: string | null;
  content_hash: string;
  document_id: string | null;
  fetched_at: Timestamp;
}

export type PhrasingOrigin = 'team' | 'generated';

/**
 * Another wording of a passage (migration 0029, docs/knowledge.md, "The team teaches the bot"): how a customer asked
 * what it answers. Searched with its passage: the chunk's tsv holds it with weight B.
 */
export interface KnowledgePhrasingsTable {
  id: string;
  workspace_id: string;
  document_id: string;
  /** The passage (knowledge_chunks.ordinal) it phrases; null: every passage of the document. */
  chunk_ordinal: number | null;
  /** At most MAX_PHRASING_CHARS characters (src/knowledge/phrasing-limits.ts). */
  text: string;
  language: string | null;
  /** team: taught in the dashboard; generated: written by a model from the passage. */
  origin: PhrasingOrigin;
  /** The user who taught it; null for generated ones. */
  created_by: string | null;
  /** Generated ones: a hash of the passage text they were made from (made again only when it changes). */
  passage_hash: string | null;
  /** Generated ones: the model's tokens spent. */
  tokens: number | null;
  created_at: Timestamp;
}

export type KnowledgePhrasing = Selectable<KnowledgePhrasingsTable>;
export type KnowledgeSource = Selectable<KnowledgeSourcesTable>;
export type KnowledgeSourcePage = Selectable<KnowledgeSourcePagesTable>;
export type KnowledgeDocument = Selectable<KnowledgeDocumentsTable>;
export type ApiKey = Selectable<ApiKeysTable>;
