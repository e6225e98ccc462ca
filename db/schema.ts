/**
 * Kysely table types: one interface per table, as the migrations create them, kept by aggregate in db/schema/*.ts.
 * This module re-exports them all and holds the `Database` interface Kysely is typed with, so importers name one
 * module.
 */
import type { InvitesTable, SignInAddressesTable, SignInFailuresTable, TokensTable, UsersTable, WorkspacesTable } from './schema/accounts.ts';
import type { EndpointHealthTable, IntegrationsTable } from './schema/integration.ts';
import type {
  ApiKeysTable,
  KnowledgeChunksTable,
  KnowledgeDocumentsTable,
  KnowledgePhrasingsTable,
  KnowledgeSourcePagesTable,
  KnowledgeSourcesTable,
} from './schema/knowledge.ts';
import type { KnowledgeEmbeddingsTable } from './schema/knowledge-embeddings.ts';
import type { LiveEventsTable, LiveWatchesTable } from './schema/live-events.ts';
import type { PhoneNumbersTable, PhoneSettingsTable } from './schema/phone.ts';
import type { AuditLogTable, JobClaimsTable } from './schema/privacy.ts';
import type { NotificationsTable, SessionMessagesTable, SessionTurnsTable, SessionsTable } from './schema/sessions.ts';
import type { KnowledgeChangeMarksTable, KnowledgeChecksTable, KnowledgeRechecksTable, ScenarioRunsTable, ScenariosTable } from './schema/scenarios.ts';
import type { TeamPresenceTable } from './schema/team.ts';
import type { SavedRepliesTable, SessionNotesTable } from './schema/team-tools.ts';
import type { WebchatConversationsTable, WebchatEarlierLeadsTable, WebchatSettingsTable } from './schema/webchat.ts';
import type { EmailOutboxTable, SessionSatisfactionTable, WebchatVisitorStateTable } from './schema/visitor.ts';
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable, WebhookEventsTable } from './schema/webhooks.ts';
import type {
  WhatsappAccountsTable,
  WhatsappConversationsTable,
  WhatsappInboundMessagesTable,
  WhatsappOutboundMessagesTable,
  WhatsappWebhookEventsTable,
} from './schema/whatsapp.ts';

export type { Json } from './schema/columns.ts';
export * from './schema/accounts.ts';
export * from './schema/integration.ts';
export * from './schema/knowledge.ts';
export * from './schema/knowledge-embeddings.ts';
export * from './schema/live-events.ts';
export * from './schema/phone.ts';
export * from './schema/privacy.ts';
export * from './schema/scenarios.ts';
export * from './schema/sessions.ts';
export * from './schema/team.ts';
export * from './schema/team-tools.ts';
export * from './schema/webchat.ts';
export * from './schema/visitor.ts';
export * from './schema/webhooks.ts';
export * from './schema/whatsapp.ts';

export interface Database {
  // Accounts and sign-in.
  workspaces: WorkspacesTable;
  users: UsersTable;
  tokens: TokensTable;
  invites: InvitesTable;
  sign_in_failures: SignInFailuresTable;
  sign_in_addresses: SignInAddressesTable;
  // The integration and its endpoint's health.
  integrations: IntegrationsTable;
  endpoint_health: EndpointHealthTable;
  // The knowledge base and its keys.
  knowledge_documents: KnowledgeDocumentsTable;
  knowledge_chunks: KnowledgeChunksTable;
  knowledge_sources: KnowledgeSourcesTable;
  knowledge_source_pages: KnowledgeSourcePagesTable;
  knowledge_phrasings: KnowledgePhrasingsTable;
  knowledge_embeddings: KnowledgeEmbeddingsTable;
  api_keys: ApiKeysTable;
  // Conversations.
  sessions: SessionsTable;
  session_turns: SessionTurnsTable;
  session_messages: SessionMessagesTable;
  notifications: NotificationsTable;
  // The team's presence per person (who takes waiting conversations).
  team_presence: TeamPresenceTable;
  // The team's tools: saved replies and private notes.
  saved_replies: SavedRepliesTable;
  session_notes: SessionNotesTable;
  // Outgoing webhooks.
  webhook_events: WebhookEventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  // The channels: website chat, phone, WhatsApp.
  webchat_conversations: WebchatConversationsTable;
  webchat_earlier_leads: WebchatEarlierLeadsTable;
  webchat_settings: WebchatSettingsTable;
  phone_settings: PhoneSettingsTable;
  phone_numbers: PhoneNumbersTable;
  whatsapp_accounts: WhatsappAccountsTable;
  whatsapp_webhook_events: WhatsappWebhookEventsTable;
  whatsapp_conversations: WhatsappConversationsTable;
  whatsapp_inbound_messages: WhatsappInboundMessagesTable;
  whatsapp_outbound_messages: WhatsappOutboundMessagesTable;
  // Live events across engines.
  live_events: LiveEventsTable;
  live_watches: LiveWatchesTable;
  // Privacy: the audit log and the claims of the jobs one engine at a time runs.
  audit_log: AuditLogTable;
  job_claims: JobClaimsTable;
  // The visitor's side: presence and typing, satisfaction, the email outbox.
  webchat_visitor_state: WebchatVisitorStateTable;
  session_satisfaction: SessionSatisfactionTable;
  email_outbox: EmailOutboxTable;
  // Test scenarios and their runs (docs/scenarios.md).
  scenarios: ScenariosTable;
  scenario_runs: ScenarioRunsTable;
  // Answers a knowledge change moved: saved checks, the workspaces' change marks, the re-runs (migration 0040).
  knowledge_checks: KnowledgeChecksTable;
  knowledge_change_marks: KnowledgeChangeMarksTable;
  knowledge_rechecks: KnowledgeRechecksTable;
}
