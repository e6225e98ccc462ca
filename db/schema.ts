// Over 400 lines: every table's types in one place, as Kysely's Database interface wants them.
/** Kysely table types: one interface per table, as the migrations create them. */
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: Timestamp;
  /** The manual team switch (PUT /v1/team): a human handoff on the phone connects only while it is on. */
  team_available: Generated<boolean>;
  /** Set while the operator has disabled the workspace (migration 0013): tokens, keys, sign-in and channels refuse. */
  disabled_at: Timestamp | null;
  /** The operator's note with `disabled_at` (`cli workspace disable --reason`); not shown to the workspace's users. */
  disabled_reason: string | null;
  /** IANA time zone the owner chose (migration 0018); null: not chosen. */
  time_zone: string | null;
  /** A web chat with no message for this many minutes ends (migration 0018; docs/webchat.md). */
  webchat_idle_minutes: Generated<number>;
  /** A waiting conversation nobody took goes back to the bot after this many minutes; null: never (migration 0019). */
  handback_after_minutes: number | null;
  /** Conversation content is kept this many days (1..3650); null: until erased (migration 0023; docs/privacy.md). */
  retention_days: ColumnType<number | null, number | null | undefined, number | null>;
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
  /** `scrypt$N$r$p$salt$hash` (src/auth/passwords.ts); null: no password set (migration 0011). */
  password_hash: Generated<string | null>;
}

export interface TokensTable {
  id: string;
  user_id: string;
  /** SHA-256 of the bearer token, hex; the token itself is never stored. */
  token_hash: string;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
  /**
   * When the token stops working by itself. Every token made since migration 0020 has one (at most
   * MAX_TOKEN_TTL_SECONDS away); null only in a row an older engine wrote during a rolling upgrade, which counts as
   * expiring that long after `created_at`.
   */
  expires_at: Timestamp | null;
  /** Made by signing in (POST /v1/auth/login, /v1/auth/password); at the token limit these are revoked first (0011). */
  sign_in: Generated<boolean>;
}

/** One-time invite links: a user sets their password with one (POST /v1/auth/password; migration 0011). */
export interface InvitesTable {
  id: string;
  user_id: string;
  /** SHA-256 of the link's token, hex; the token itself is never stored. */
  token_hash: string;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  /** Set when a newer invite for the same user replaced this unused one. */
  revoked_at: Timestamp | null;
  created_at: Timestamp;
  /** The user who made the link; null: the operator (first start, CLI, restore-owner) (migration 0020). */
  created_by: Generated<string | null>;
}

/** Failed sign-ins per key, shared by every engine (migration 0020; src/auth/login-throttle.ts). */
export interface SignInFailuresTable {
  /** `address:<client address>`, `user:<user id>` or `email:<lower-case email>` (an email no account has). */
  key: string;
  /** Attempts counted within the window, each counted before its password was checked and refunded when right. */
  failures: number;
  last_at: Timestamp;
  /** Attempts are refused until then; null: none refused. */
  blocked_until: Timestamp | null;
}

/** The addresses a user signed in from, with the last success from each (migration 0020). */
export interface SignInAddressesTable {
  user_id: string;
  address: string;
  succeeded_at: Timestamp;
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
  /** The session_id sent to the integrator (protocol §2.1). */
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
  /** The statechart's `handler` region (migration 0019): bot, waiting for a person, or held by `agent_user_id`. */
  handled_by: Generated<HandledBy>;
  agent_user_id: string | null;
  waiting_since: Timestamp | null;
  /** When a waiting conversation goes back to the bot (handback_after_minutes); null: never. */
  handback_at: Timestamp | null;
  handler_revision: Generated<number>;
}

export type HandledBy = 'bot' | 'waiting' | 'agent';
export type MessageFrom = 'customer' | 'bot' | 'agent';

/** The chat channels' messages in order (migration 0019): customer, bot and agent alike. */
export interface SessionMessagesTable {
  id: string;
  seq: Generated<string>;
  session_id: string;
  from: MessageFrom;
  text: string;
  source: string | null;
  agent_user_id: string | null;
  turn_id: string | null;
  outbound_id: string | null;
  at: ColumnType<Date, Date | string | undefined, Date | string>;
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

/** What a notification is about: a handoff the team follows up, or the bot-link endpoint going down and recovering. */
export type NotificationKind = 'forward' | 'human_followup' | 'endpoint_down' | 'endpoint_recovered';

export interface NotificationsTable {
  id: string;
  workspace_id: string;
  session_id: string | null;
  kind: NotificationKind;
  message: string;
  created_at: Timestamp;
  read_at: Timestamp | null;
}

// Knowledge base and sync keys (migration 0002).

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

export interface WebhookEventsTable {
  /** The Standard Webhooks webhook-id. */
  id: string;
  workspace_id: string;
  event: 'new_chat' | 'escalation' | 'new_lead' | 'test' | 'endpoint_down' | 'endpoint_recovered';
  payload: Json;
  created_at: Timestamp;
}

export interface Database {
  workspaces: WorkspacesTable;
  users: UsersTable;
  tokens: TokensTable;
  invites: InvitesTable;
  sign_in_failures: SignInFailuresTable;
  sign_in_addresses: SignInAddressesTable;
  integrations: IntegrationsTable;
  knowledge_documents: KnowledgeDocumentsTable;
  knowledge_chunks: KnowledgeChunksTable;
  api_keys: ApiKeysTable;
  sessions: SessionsTable;
  session_turns: SessionTurnsTable;
  session_messages: SessionMessagesTable;
  notifications: NotificationsTable;
  webhook_events: WebhookEventsTable;
}

export type Workspace = Selectable<WorkspacesTable>;
export type User = Selectable<UsersTable>;
export type Integration = Selectable<IntegrationsTable>;
export type NewIntegration = Insertable<IntegrationsTable>;
export type KnowledgeDocument = Selectable<KnowledgeDocumentsTable>;
export type ApiKey = Selectable<ApiKeysTable>;

// Website chat (migration 0008; src/channels/webchat). Declaration merging adds the tables to `Database` above.

export interface WebchatConversationsTable {
  /** The `conversation_id` of protocol §6 and the session's external_id. */
  id: string;
  workspace_id: string;
  page_url: string;
  /** Primary language subtag the widget or browser gave; null: the session's default. */
  language: string | null;
  /** protocol §6 new_lead: the latest contact details the visitor left. */
  visitor_name: string | null;
  visitor_email: string | null;
  /** May be empty (protocol §6). */
  visitor_phone: string | null;
  lead_at: Timestamp | null;
  /** When each escalation type was emitted; each at most once per conversation (docs/webchat.md). */
  escalation_requested_at: Timestamp | null;
  escalation_detected_at: Timestamp | null;
  created_at: Timestamp;
  /** SHA-256 (hex) of the visitor token answered once at the start (migration 0019). */
  visitor_token_hash: string | null;
}

export interface WebchatSettingsTable {
  workspace_id: string;
  /** Web origins (`https://shop.example`) whose pages may call the website-chat API; JSON array of strings. */
  allowed_origins: Json;
  /** The widget's switch (migration 0018): off, visitors are told chat is closed. */
  enabled: Generated<boolean>;
  updated_at: Timestamp;
}

export interface Database {
  webchat_conversations: WebchatConversationsTable;
  webchat_settings: WebchatSettingsTable;
}

export type WebchatConversation = Selectable<WebchatConversationsTable>;

// Phone channel and team hours (migration 0006; src/channels/phone). Declaration merging adds the tables to `Database`.

export interface PhoneSettingsTable {
  workspace_id: string;
  /** E.164; dialled by the TwiML action after a human handoff while the team is available. */
  transfer_number: string | null;
  /** `{ time_zone, week }` (src/channels/phone/team-hours.ts); null: the manual team switch alone decides. */
  team_hours: Json | null;
  /** BCP 47 language of the ConversationRelay (TwiML `language`). */
  language: Generated<string>;
  /** TwiML welcomeGreeting; null: none. */
  greeting: string | null;
  updated_at: Timestamp;
}

export interface PhoneNumbersTable {
  /** E.164; the primary key, so a number belongs to one workspace at most. */
  number: string;
  workspace_id: string;
  created_at: Timestamp;
}

export interface Database {
  phone_settings: PhoneSettingsTable;
  phone_numbers: PhoneNumbersTable;
}

// WhatsApp (migration 0007; src/channels/whatsapp, docs/whatsapp.md). Declaration merging adds the tables to `Database`.

export interface WhatsappAccountsTable {
  workspace_id: string;
  /** Meta's id of the business number; unique, so an incoming webhook names one workspace at most. */
  phone_number_id: string;
  /** The Graph API access token, sealed with the master key (context `whatsapp-token:<workspace id>`). */
  access_token_sealed: string;
  token_hint: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WhatsappWebhookEventsTable {
  id: string;
  /** The raw body as Meta sent and signed it. */
  body: string;
  received_at: Timestamp;
  processed_at: Timestamp | null;
  outcome: 'processed' | 'ignored' | 'unknown_number' | 'invalid' | 'failed' | null;
  detail: string | null;
  attempts: Generated<number>;
  claimed_by: string | null;
  claimed_until: Timestamp | null;
}

export interface WhatsappConversationsTable {
  workspace_id: string;
  wa_id: string;
  /** The session_id sent to the integrator (protocol §2.1). */
  external_id: string;
  sequence: Generated<number>;
  started_at: Timestamp;
  last_message_at: Timestamp;
  profile_name: string | null;
  notice_at: Timestamp | null;
}

/** `workspace_disabled`: stored but not answered, the operator disabled the workspace (docs/operations.md). */
export type WhatsappInboundOutcome = 'reply' | 'notice' | 'notice_recent' | 'silent' | 'empty' | 'cancelled' | 'failed' | 'workspace_disabled'
  /** Stored for the person who handles the conversation; neither the bot nor the integrator answers it. */
  | 'held';

export interface WhatsappInboundMessagesTable {
  id: string;
  workspace_id: string;
  /** Meta's wamid; unique per workspace (deduplicates Meta's retries). */
  message_id: string;
  event_id: string | null;
  phone_number_id: string;
  wa_id: string;
  type: string;
  text: string | null;
  profile_name: string | null;
  sent_at: Timestamp;
  state: Generated<'pending' | 'done' | 'failed'>;
  outcome: WhatsappInboundOutcome | null;
  session_external_id: string | null;
  attempts: Generated<number>;
  claimed_by: string | null;
  claimed_until: Timestamp | null;
  created_at: Timestamp;
  processed_at: Timestamp | null;
}

export type WhatsappOutboundStatus = 'queued' | 'accepted' | 'sent' | 'failed' | 'delivered' | 'read';

export interface WhatsappOutboundMessagesTable {
  id: string;
  workspace_id: string;
  inbound_id: string | null;
  phone_number_id: string;
  wa_id: string;
  /** reply: the bot's answer; notice: the text-only notice or a sentence of the service; agent: a person's message. */
  kind: 'reply' | 'notice' | 'agent';
  body: string;
  /** messages[0].id of the Graph answer. */
  message_id: string | null;
  status: Generated<WhatsappOutboundStatus>;
  status_rank: Generated<number>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  claimed_by: string | null;
  claimed_until: Timestamp | null;
  http_status: number | null;
  error_code: number | null;
  error_detail: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  accepted_at: Timestamp | null;
  sent_at: Timestamp | null;
  delivered_at: Timestamp | null;
  read_at: Timestamp | null;
  failed_at: Timestamp | null;
}

export interface Database {
  whatsapp_accounts: WhatsappAccountsTable;
  whatsapp_webhook_events: WhatsappWebhookEventsTable;
  whatsapp_conversations: WhatsappConversationsTable;
  whatsapp_inbound_messages: WhatsappInboundMessagesTable;
  whatsapp_outbound_messages: WhatsappOutboundMessagesTable;
}

export type WhatsappAccount = Selectable<WhatsappAccountsTable>;
export type WhatsappInboundMessage = Selectable<WhatsappInboundMessagesTable>;
export type WhatsappOutboundMessage = Selectable<WhatsappOutboundMessagesTable>;

// Outgoing webhooks: endpoints, deliveries and their attempts (migration 0005; src/webhooks, docs/webhooks.md).
// Declaration merging adds the tables to `Database`.

export type WebhookSubscribableEvent = 'new_chat' | 'escalation' | 'new_lead' | 'endpoint_down' | 'endpoint_recovered';
export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled';

export interface WebhookEndpointsTable {
  id: string;
  workspace_id: string;
  event: WebhookSubscribableEvent;
  url: string;
  /** The whsec_ secret, sealed with the master key (context `webhook-secret:<endpoint id>`). */
  secret_sealed: string;
  secret_hint: string;
  /** After a rotation: the previous secret, which signs too until `previous_secret_expires_at`. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Timestamp | null;
  disabled_at: Timestamp | null;
  /** Why the endpoint was disabled, in a sentence for the owner. */
  disabled_reason: string | null;
  /** The first failed attempt since the last success (the 5-day rule counts from here). */
  failing_since: Timestamp | null;
  last_failure_at: Timestamp | null;
  last_success_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookDeliveriesTable {
  id: string;
  /** The outbox row; its id is the `webhook-id` of every attempt. */
  event_id: string;
  workspace_id: string;
  /** Null once the endpoint was deleted. */
  endpoint_id: string | null;
  event: string;
  kind: Generated<'event' | 'test'>;
  status: Generated<WebhookDeliveryStatus>;
  attempt_count: Generated<number>;
  next_attempt_at: Timestamp;
  lease_owner: string | null;
  lease_until: Timestamp | null;
  last_status: number | null;
  last_error: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  completed_at: Timestamp | null;
}

export interface WebhookAttemptsTable {
  /** With `attempt`, the primary key. */
  delivery_id: string;
  /** 1 for the first attempt of the delivery. */
  attempt: number;
  url: string;
  started_at: Timestamp;
  status: 'succeeded' | 'failed';
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  /** The first 4 KB of the receiver's answer. */
  response_excerpt: string | null;
}

export interface Database {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}

export type WebhookEndpoint = Selectable<WebhookEndpointsTable>;
export type WebhookDelivery = Selectable<WebhookDeliveriesTable>;
export type WebhookAttempt = Selectable<WebhookAttemptsTable>;

// Endpoint health (migration 0012; src/botlink/endpoint-health.ts). One row per workspace, shared by every process.

export interface EndpointHealthTable {
  workspace_id: string;
  /** The endpoint these outcomes belong to; a new URL starts healthy. */
  endpoint_url: string;
  state: 'healthy' | 'degraded' | 'down' | 'probing';
  since: Timestamp;
  consecutive_failures: number;
  consecutive_responses: number;
  last_failure_at: Timestamp | null;
  /** The newest outcomes, oldest first: `[{at, kind, latencyMs}]` with `at` in ms since the epoch. */
  recent: ColumnType<unknown, string, string>;
  last_problem: string | null;
  /** The last background probe (any process): probes are spaced by HEALTH_PROBE_INTERVAL_MS across processes. */
  probed_at: Timestamp | null;
  updated_at: Timestamp;
}

export interface Database {
  endpoint_health: EndpointHealthTable;
}

// Live events across engines (migration 0019; src/events/live-bus.ts, docs/architecture.md).
export interface LiveEventsTable {
  id: Generated<string>;
  topic: string;
  key: string;
  origin: string;
  payload: unknown;
  /** Defaults to now() (Timestamp allows leaving it out of an insert). */
  at: Timestamp;
}

export interface LiveWatchesTable {
  topic: string;
  key: string;
  engine: string;
  expires_at: Timestamp;
}

export interface Database {
  live_events: LiveEventsTable;
  live_watches: LiveWatchesTable;
}

// Privacy (migration 0023; src/privacy, docs/privacy.md): the audit log and the jobs one engine at a time runs.
export interface AuditLogTable {
  id: Generated<string>;
  workspace_id: string;
  at: Timestamp;
  user_id: string | null;
  /** The acting user's email as it was then. */
  user_email: string | null;
  ip: string | null;
  action: string;
  target: string | null;
}

export interface JobClaimsTable {
  name: string;
  holder: string | null;
  claimed_until: Timestamp;
  last_run_at: Timestamp | null;
}

export interface Database {
  audit_log: AuditLogTable;
  job_claims: JobClaimsTable;
}
