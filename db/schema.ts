/** Kysely table types: one interface per table, as the migrations create them. */
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: Timestamp;
  /** The manual team switch (PUT /v1/team): a human handoff on the phone connects only while it is on. */
  team_available: Generated<boolean>;
}

export type Role = 'owner' | 'admin' | 'agent';
export const roles: readonly Role[] = ['owner', 'admin', 'agent'];

export interface UsersTable {
  id: string;
  workspace_id: string;
  email: string;
  role: Role;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
}

export interface TokensTable {
  id: string;
  user_id: string;
  /** SHA-256 of the bearer token, hex; the token itself is never stored. */
  token_hash: string;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
}

export interface IntegrationsTable {
  workspace_id: string;
  endpoint_url: string;
  /** The shared key, sealed with the master key (AES-256-GCM, bound to the workspace id). */
  key_sealed: string;
  key_hint: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type Json = ColumnType<unknown, string, string>;

export interface SessionsTable {
  id: string;
  workspace_id: string;
  channel: 'phone' | 'whatsapp' | 'webchat';
  /** The session_id sent to the integrator (spec §2.1). */
  external_id: string;
  status: Generated<'active' | 'ended'>;
  /** The machine's state value, for the dashboard. */
  state: Generated<string>;
  language: Generated<string>;
  customer_phone: string | null;
  customer_email: string | null;
  customer_name: string | null;
  handoff: Json | null;
  turn_count: Generated<number>;
  /** The actor's persisted snapshot (JSON) and the machine version that wrote it. */
  snapshot: Json | null;
  machine_version: number;
  lease_owner: string | null;
  lease_until: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SessionTurnsTable {
  id: string;
  session_id: string;
  ordinal: number;
  status: 'completed' | 'cancelled';
  language: string;
  customer_message: string;
  reply: string | null;
  source: string | null;
  botlink: Json | null;
  knowledge: Json | null;
  tool_rounds: Json;
  handoff: Json | null;
  timings: Json;
  errors: Json;
  started_at: Timestamp;
  ended_at: Timestamp;
}

export interface NotificationsTable {
  id: string;
  workspace_id: string;
  session_id: string | null;
  kind: 'forward' | 'human_followup';
  message: string;
  created_at: Timestamp;
  read_at: Timestamp | null;
}

// Knowledge base and sync keys (migration 0002).

export type KnowledgeKind = 'page' | 'product';
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

export interface WebhookEventsTable {
  /** The Standard Webhooks webhook-id. */
  id: string;
  workspace_id: string;
  event: 'new_chat' | 'escalation' | 'new_lead' | 'test';
  payload: Json;
  created_at: Timestamp;
}

export interface Database {
  workspaces: WorkspacesTable;
  users: UsersTable;
  tokens: TokensTable;
  integrations: IntegrationsTable;
  knowledge_documents: KnowledgeDocumentsTable;
  knowledge_chunks: KnowledgeChunksTable;
  api_keys: ApiKeysTable;
  sessions: SessionsTable;
  session_turns: SessionTurnsTable;
  notifications: NotificationsTable;
  webhook_events: WebhookEventsTable;
}

export type Workspace = Selectable<WorkspacesTable>;
export type User = Selectable<UsersTable>;
export type Integration = Selectable<IntegrationsTable>;
export type NewIntegration = Insertable<IntegrationsTable>;
export type KnowledgeDocument = Selectable<KnowledgeDocumentsTable>;
export type ApiKey = Selectable<ApiKeysTable>;
