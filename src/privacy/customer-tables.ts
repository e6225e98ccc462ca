/**
 * Every table of the database, and how one customer's rows in it are reached (docs/privacy.md, "Export and
 * erasure"), or why it holds no customer's data. The export and the erasure go through this map table by table, and
 * a test lists the database's tables from information_schema and fails on one without an entry: a table added later
 * is either reached here or says why it need not be.
 *
 * Every condition is an exact match within one workspace: ids of the customer's conversations, a whole number or
 * email, JSON fields by name; never a substring of a text.
 */
import { sql, type RawBuilder } from 'kysely';

/** The customer's records in one workspace, as `findCustomer` (customer-data.ts) resolved them. */
export interface CustomerRecords {
  workspaceId: string;
  /** The number asked about, in digits (E.164 without `+`); null when asked by email. */
  digits: string | null;
  /** The email asked about, lower-cased; null when asked by number. */
  email: string | null;
  /** Their sessions (our row ids). */
  sessionIds: string[];
  /** Those sessions' external ids: the session_id and conversation_id the integrator and webhooks were given. */
  externalIds: string[];
  /** Their web chats (webchat_conversations ids). */
  webchatIds: string[];
  /** Their WhatsApp ids. */
  waIds: string[];
  /** The workspace's WhatsApp numbers (Meta's phone_number_id) that talked with them, and its number now. */
  phoneNumberIds: string[];
}

export interface CustomerTable {
  /** How the customer's rows are reached, in words. */
  reach: string;
  /**
   * What an owner calls one row and several, in the answer's `said` and the audit log; none for copies kept for the
   * engine's own work (live updates, webhook deliveries), which go with what they copy.
   */
  said?: readonly [one: string, many: string];
  /** The columns that name one row. */
  key: readonly string[];
  /** The customer's rows: a condition over the table's own columns. */
  where: (c: CustomerRecords) => RawBuilder<boolean>;
  /** Columns an export leaves out (a token's hash, the actor's copy of the turns already exported). */
  omit?: readonly string[];
  /**
   * Rows not yet processed are marked to go once processed instead of being deleted under their worker: the column
   * that is null until then, and the flag.
   */
  later?: { pendingWhile: string; flag: string };
}

export interface NoCustomerData {
  none: string;
}

const ref = (column: string) => sql.ref(column);
const NOTHING = sql<boolean>`false`;

/** `column in (values)`; false for none. */
function anyOf(column: string, values: readonly string[]): RawBuilder<boolean> {
  return values.length ? sql<boolean>`${ref(column)} in (${sql.join(values)})` : NOTHING;
}

/**
 * A number as written anywhere (`+31 6 1111 2222`, `0031 (0)6…`, `31611112222`) as its E.164 digits, compared whole.
 * A national number (`06 …`) has no country and matches nothing.
 */
export function numberDigits(value: RawBuilder<unknown> | ReturnType<typeof sql.ref>): RawBuilder<string> {
  return sql<string>`regexp_replace(regexp_replace(regexp_replace(coalesce(${value}, ''), '\\(0\\)', '', 'g'), '[^0-9]', '', 'g'), '^00', '')`;
}

const inWorkspace = (c: CustomerRecords) => sql<boolean>`${ref('workspace_id')} = ${c.workspaceId}`;
const and = (...parts: RawBuilder<boolean>[]) => sql<boolean>`(${sql.join(parts, sql` and `)})`;
const or = (...parts: RawBuilder<boolean>[]) => sql<boolean>`(${sql.join(parts, sql` or `)})`;

/** Webhook payloads about them: their conversations by id, or their lead's email or number, as JSON fields. */
function webhookPayloads(c: CustomerRecords, payload: RawBuilder<unknown>): RawBuilder<boolean> {
  const ids = [...c.webchatIds, ...c.externalIds, ...c.sessionIds];
  return or(
    ids.length ? sql<boolean>`${payload}->>'conversation_id' in (${sql.join(ids)})` : NOTHING,
    ids.length ? sql<boolean>`${payload}->>'session_id' in (${sql.join(ids)})` : NOTHING,
    c.email ? sql<boolean>`lower(${payload}->>'email') = ${c.email}` : NOTHING,
    c.digits ? sql<boolean>`${numberDigits(sql`${payload}->>'phone'`)} = ${c.digits}` : NOTHING,
  );
}

const eventsOfCustomer = (c: CustomerRecords) => sql`select e.id from webhook_events e where e.workspace_id = ${c.workspaceId} and ${webhookPayloads(c, sql.ref('e.payload'))}`;

/**
 * Meta's raw bodies with a change for one of the workspace's numbers that names the customer: as the sender of a
 * message, a contact, or the recipient of a status. A body another workspace read is never theirs.
 */
function rawBodies(c: CustomerRecords): RawBuilder<boolean> {
  if (c.waIds.length === 0) return NOTHING;
  const vars = sql`jsonb_build_object('pnids', ${JSON.stringify(c.phoneNumberIds)}::jsonb, 'wa', ${JSON.stringify(c.waIds)}::jsonb)`;
  const path = '$.entry[*].changes[*].value ? (@.metadata.phone_number_id == $pnids[*] && (@.messages[*].from == $wa[*] || @.contacts[*].wa_id == $wa[*] || @.statuses[*].recipient_id == $wa[*]))';
  return and(
    or(inWorkspace(c), sql<boolean>`${ref('workspace_id')} is null`),
    or(
      sql<boolean>`${ref('id')} in (select m.event_id from whatsapp_inbound_messages m where m.workspace_id = ${c.workspaceId} and m.wa_id in (${sql.join(c.waIds)}))`,
      sql<boolean>`jsonb_path_exists(privacy_jsonb(${ref('body')}), ${path}::jsonpath, ${vars})`,
    ),
  );
}

/**
 * In the order an erasure deletes: what refers to a row goes before it, so each table's count is of its own rows
 * (nothing is left for a cascade to remove unseen).
 */
export const CUSTOMER_TABLES = {
  // Live updates of their conversations across engines.
  live_events: {
    reach: "the session stream's events of their sessions (key), the inbox's events of this workspace naming one of them (payload sessionId)",
    key: ['id'],
    where: (c) =>
      or(
        and(sql<boolean>`${ref('topic')} = 'session'`, anyOf('key', c.sessionIds)),
        and(sql<boolean>`${ref('topic')} = 'inbox'`, sql<boolean>`${ref('key')} = ${c.workspaceId}`, c.sessionIds.length ? sql<boolean>`${ref('payload')}->>'sessionId' in (${sql.join(c.sessionIds)})` : NOTHING),
      ),
  },
  notifications: { said: ['team notification', 'team notifications'], reach: 'the notifications of their sessions in this workspace', key: ['id'], where: (c) => and(inWorkspace(c), anyOf('session_id', c.sessionIds)) },
  webhook_attempts: {
    reach: 'the delivery attempts of the webhook payloads below (a receiver may echo a payload in its answer)',
    key: ['delivery_id', 'attempt'],
    where: (c) => sql<boolean>`${ref('delivery_id')} in (select d.id from webhook_deliveries d where d.workspace_id = ${c.workspaceId} and d.event_id in (${eventsOfCustomer(c)}))`,
  },
  webhook_deliveries: {
    reach: 'the deliveries of the webhook payloads below, delivered or not',
    key: ['id'],
    where: (c) => and(inWorkspace(c), sql<boolean>`${ref('event_id')} in (${eventsOfCustomer(c)})`),
  },
  webhook_events: { said: ['webhook payload', 'webhook payloads'],
    reach: "this workspace's webhook payloads whose conversation_id or session_id is one of their conversations, or whose email or phone field is theirs",
    key: ['id'],
    where: (c) => and(inWorkspace(c), webhookPayloads(c, ref('payload'))),
  },
  email_outbox: { said: ['email to them', 'emails to them'],
    reach: "this workspace's emails to their address or about their sessions (an agent's reply to a visitor who had left), sent or waiting",
    key: ['id'],
    where: (c) => and(inWorkspace(c), or(anyOf('session_id', c.sessionIds), c.email ? sql<boolean>`lower(${ref('to_address')}) = ${c.email.toLowerCase()}` : NOTHING)),
  },
  session_satisfaction: { said: ['satisfaction answer', 'satisfaction answers'], reach: 'their answers to the satisfaction question, with any comment', key: ['session_id'], where: (c) => and(inWorkspace(c), anyOf('session_id', c.sessionIds)) },
  webchat_visitor_state: { reach: 'when their web chats were last open, and their typing', key: ['conversation_id'], where: (c) => and(inWorkspace(c), anyOf('conversation_id', c.webchatIds)) },
  session_messages: { said: ['message', 'messages'], reach: 'the messages of their sessions', key: ['id'], where: (c) => anyOf('session_id', c.sessionIds) },
  session_turns: { said: ['message', 'messages'], reach: 'the turns of their sessions', key: ['id'], where: (c) => anyOf('session_id', c.sessionIds) },
  whatsapp_webhook_events: { said: ['WhatsApp delivery from Meta', 'WhatsApp deliveries from Meta'],
    reach:
      "Meta's raw bodies this workspace read (or nobody read yet) with a change for one of its numbers naming their WhatsApp id (messages[].from, contacts[].wa_id, statuses[].recipient_id), and those their messages came in; one not processed yet goes once processed",
    key: ['id'],
    where: rawBodies,
    later: { pendingWhile: 'processed_at', flag: 'erase_after_processing' },
  },
  whatsapp_outbound_messages: { said: ['WhatsApp message', 'WhatsApp messages'], reach: "this workspace's messages sent to their WhatsApp id", key: ['id'], where: (c) => and(inWorkspace(c), anyOf('wa_id', c.waIds)) },
  whatsapp_inbound_messages: { said: ['WhatsApp message', 'WhatsApp messages'], reach: "this workspace's messages received from their WhatsApp id", key: ['id'], where: (c) => and(inWorkspace(c), anyOf('wa_id', c.waIds)) },
  whatsapp_conversations: { said: ['WhatsApp contact', 'WhatsApp contacts'],
    reach: "this workspace's WhatsApp conversation with their WhatsApp id (with the profile name)",
    key: ['workspace_id', 'wa_id'],
    where: (c) => and(inWorkspace(c), anyOf('wa_id', c.waIds)),
  },
  webchat_earlier_leads: { said: ['earlier contact details', 'earlier contact details'], reach: 'the leads their web chats replaced', key: ['id'], where: (c) => and(inWorkspace(c), anyOf('conversation_id', c.webchatIds)) },
  sessions: { said: ['conversation', 'conversations'], reach: 'their sessions in this workspace, with the customer details', key: ['id'], where: (c) => and(inWorkspace(c), anyOf('id', c.sessionIds)), omit: ['snapshot'] },
  webchat_conversations: { said: ['website chat', 'website chats'], reach: 'their web chats in this workspace, with the lead', key: ['id'], where: (c) => and(inWorkspace(c), anyOf('id', c.webchatIds)), omit: ['visitor_token_hash'] },

  // No customer's data.
  analytics_handed_over: { none: 'a session id already counted as handed over (no personal data); goes with its session (on delete cascade)' },
  analytics_hours: { none: 'counts per hour and channel (docs/analytics.md)' },
  analytics_latency: { none: 'latency histograms per hour and channel' },
  api_keys: { none: "the workspace's keys" },
  audit_log: { none: 'who of the team did what; a target never holds a customer number or email (docs/privacy.md, "Audit log")' },
  endpoint_health: { none: "the integrator's endpoint's health: times and failures in words" },
  integrations: { none: "the integrator's endpoint and sealed key" },
  invites: { none: "the team's invite links" },
  job_claims: { none: 'which engine runs a job' },
  knowledge_change_marks: { none: "when a workspace's knowledge was last written, for the saved checks' re-run" },
  knowledge_checks: { none: "questions the team saved from Try a question with the answer the knowledge base gave (docs/scenarios.md), never a customer's" },
  knowledge_chunks: { none: "the workspace's knowledge base, cut into passages" },
  knowledge_embeddings: { none: "vectors of the knowledge base's passages and phrasings (LLM_EMBEDDING_MODEL)" },
  knowledge_documents: { none: "the workspace's knowledge base: pages, files and entries the team wrote or chose to keep" },
  knowledge_rechecks: { none: "the saved checks' answers before and after a knowledge change, and the test runs played again" },
  knowledge_phrasings: { none: "other words for the knowledge base's passages, taught by the team or written by a model from the passage; no customer's key reaches them" },
  knowledge_source_pages: { none: "the pages of the shop's own website the knowledge base keeps, with their ETag and hash" },
  knowledge_sources: { none: "the websites and files the workspace's knowledge base is kept from, and their syncs' progress" },
  kysely_migration: { none: 'the migrations run' },
  kysely_migration_lock: { none: "the migrations' lock" },
  live_watches: { none: 'which engine watches which stream, by id, for a minute' },
  phone_numbers: { none: "the workspace's own numbers" },
  phone_settings: { none: "the workspace's transfer number, team hours and greeting" },
  saved_replies: { none: "the team's saved replies: answers they wrote for any customer" },
  scenarios: { none: "the team's test scenarios (docs/scenarios.md): messages and a test customer they wrote to try the bot, never a customer's conversation" },
  scenario_runs: {
    none: "the results and transcripts of test scenarios: test conversations the engine held with itself (their sessions are marked test_run_id and go with the run), never a customer's",
  },
  session_notes: {
    none: "the team's private notes on a conversation: never shown to the customer, so not in their export (docs/interfaces.md, \"The team's tools\"); erased with their session (on delete cascade)",
  },
  sign_in_addresses: { none: "addresses the team's users signed in from" },
  sign_in_failures: {
    none: 'failed sign-ins per user email or address, shared by every workspace: a throttle of sign-ins, not a record of a customer',
  },
  team_presence: { none: "whether each of the team's users is available, away or offline" },
  tokens: { none: "the team's tokens (hashes)" },
  users: { none: "the team's accounts" },
  webchat_settings: { none: 'the origins allowed to show the widget' },
  webhook_endpoints: { none: "the workspace's webhook addresses and sealed secrets" },
  whatsapp_accounts: { none: "the workspace's WhatsApp number and sealed token" },
  workspaces: { none: "the workspace's name and settings" },
} satisfies Record<string, CustomerTable | NoCustomerData>;

type Tables = typeof CUSTOMER_TABLES;
export type CustomerTableName = { [T in keyof Tables]: Tables[T] extends CustomerTable ? T : never }[keyof Tables];

/** Counts per table in an owner's words: `2 conversations, 5 messages, 1 website chat`, or `nothing`. */
export function inWords(counts: Partial<Record<CustomerTableName, number>>): string {
  const totals = new Map<string, { n: number; one: string; many: string }>();
  // Against the erasure's order: what holds the rest (chats, conversations) is said first.
  for (const [table, entry] of customerTables().reverse()) {
    const n = counts[table] ?? 0;
    if (!entry.said || n <= 0) continue;
    const [one, many] = entry.said;
    const total = totals.get(many) ?? { n: 0, one, many };
    total.n += n;
    totals.set(many, total);
  }
  return [...totals.values()].map((t) => `${t.n} ${t.n === 1 ? t.one : t.many}`).join(', ') || 'nothing';
}

/** The tables that hold customers' data, in the order an erasure deletes. */
export function customerTables(): [CustomerTableName, CustomerTable][] {
  const entries: [string, CustomerTable | NoCustomerData][] = Object.entries(CUSTOMER_TABLES);
  return entries.filter((e): e is [CustomerTableName, CustomerTable] => 'where' in e[1]);
}
