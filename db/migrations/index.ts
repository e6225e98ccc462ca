/**
 * Every migration, in order. A static list (rather than reading the folder) so the same set runs under Node, vitest
 * and a bundled image, and a missing file is a type error instead of a silently skipped migration. Kysely applies
 * them by name; keep this list in that order too, so a reader sees the schema grow as the database does.
 */
import type { Migration } from 'kysely/migration';
import * as m0001 from './0001-foundation.ts';
import * as m0002 from './0002-knowledge.ts';
import * as m0003 from './0003-sessions.ts';
import * as m0004 from './0004-outbox.ts';
import * as m0005 from './0005-webhook-delivery.ts';
import * as m0006 from './0006-phone.ts';
import * as m0007 from './0007-whatsapp.ts';
import * as m0008 from './0008-webchat.ts';
import * as m0009 from './0009-abandoned-calls.ts';
import * as m0010 from './0010-token-expiry.ts';
import * as m0011 from './0011-passwords.ts';
import * as m0012 from './0012-endpoint-health.ts';
import * as m0013 from './0013-workspace-disable.ts';
import * as m0014 from './0014-knowledge-search.ts';
import * as m0015 from './0015-webhook-delivery-storage.ts';
import * as m0016 from './0016-live-events.ts';
import * as m0017 from './0017-knowledge-entries.ts';
import * as m0018 from './0018-workspace-settings.ts';
import * as m0019 from './0019-inbox.ts';
import * as m0020 from './0020-accounts-under-attack.ts';
import * as m0022 from './0022-analytics.ts';
import * as m0023 from './0023-privacy.ts';
import * as m0024 from './0024-analytics-slots.ts';
import * as m0025 from './0025-inbox-held.ts';
import * as m0026 from './0026-privacy-scope.ts';
import * as m0027 from './0027-audit-owner.ts';
import * as m0028 from './0028-knowledge-sources.ts';
import * as m0029 from './0029-knowledge-phrasings.ts';
import * as m0030 from './0030-team-presence.ts';
import * as m0031 from './0031-team-replies-notes.ts';
import * as m0032 from './0032-visitor-side.ts';
import * as m0033 from './0033-knowledge-embeddings.ts';
import * as m0034 from './0034-customer-context.ts';
import * as m0035 from './0035-first-day.ts';
import * as m0036 from './0036-user-names.ts';
import * as m0037 from './0037-note-edits.ts';
import * as m0038 from './0038-whatsapp-reply-buttons.ts';
import * as m0039 from './0039-scenarios.ts';
import * as m0040 from './0040-knowledge-checks.ts';
import * as m0043 from './0043-one-lease-spelling.ts';
import * as m0044 from './0044-attendant-revision.ts';

export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-knowledge': m0002, // knowledge base, sync and widget keys
  '0003-sessions': m0003, // sessions, turns, notifications, team switch
  '0004-outbox': m0004, // webhook_events
  '0005-webhook-delivery': m0005, // webhook endpoints, deliveries, attempts
  '0006-phone': m0006, // phone numbers and team hours
  '0007-whatsapp': m0007, // WhatsApp settings, raw events, messages
  '0008-webchat': m0008, // web chat conversations and settings
  '0009-abandoned-calls': m0009, // index for ending phone sessions nobody continues
  '0010-token-expiry': m0010, // optional token expiry
  '0011-passwords': m0011, // passwords and one-time invite links
  '0012-endpoint-health': m0012, // bot-link endpoint health; endpoint_down / endpoint_recovered webhooks
  '0013-workspace-disable': m0013, // the operator disables and enables a workspace
  '0014-knowledge-search': m0014, // the knowledge search's tsqueries built while planning
  '0015-webhook-delivery-storage': m0015, // fewer index writes per delivery: HOT lease writes, attempts keyed by (delivery, number)
  '0016-live-events': m0016, // live events across engines and what each engine's streams watch
  '0017-knowledge-entries': m0017, // hand-made knowledge entries (origin dashboard) and question-and-answer pairs
  '0018-workspace-settings': m0018, // workspace time zone, web chat idle end, the widget's on/off switch
  '0019-inbox': m0019, // who handles a conversation, chat messages, agent replies, visitor tokens, hand-back setting
  '0020-accounts-under-attack': m0020, // sign-in failures shared by every engine, known sign-in addresses, who made an invite, every token expires
  '0022-analytics': m0022, // the Overview's roll-ups: hourly counters and latency histograms kept by triggers, with a backfill
  '0023-privacy': m0023, // the audit log, retention per workspace, jobs one engine runs at a time
  '0024-analytics-slots': m0024, // the roll-ups in a slot per database connection: messages of a workspace no longer queue for one row
  '0025-inbox-held': m0025, // the conversations one agent holds, for the Inbox's Mine view
  '0026-privacy-scope': m0026, // raw WhatsApp bodies know their workspace, earlier web chat leads: erasure within one workspace
  '0027-audit-owner': m0027, // the audit log owned by a role nobody logs in as: the engine adds and reads, its purge is the owner's function
  '0028-knowledge-sources': m0028, // websites, sitemaps and files as knowledge sources, their pages, documents that know their source
  '0029-knowledge-phrasings': m0029, // other words for a passage: the customer's wording the team taught, or a model wrote
  '0030-team-presence': m0030, // presence per person and assignment
  '0031-team-replies-notes': m0031, // saved replies and private notes
  '0032-visitor-side': m0032, // typing, satisfaction, the visitor's presence, email to visitors
  '0033-knowledge-embeddings': m0033, // passage vectors for the optional embedding model
  '0034-customer-context': m0034, // the web chat visitor's browser time zone, for the customer panel
  '0035-first-day': m0035, // the Overview's first-day list: whether somebody tried a question
  '0036-user-names': m0036, // users' display names
  '0037-note-edits': m0037, // private notes edited and deleted; a mention's notification names its note
  '0038-whatsapp-reply-buttons': m0038, // WhatsApp's satisfaction question as reply buttons, and the customer's tap
  '0039-scenarios': m0039, // test scenarios, their runs, and the mark on the test conversations they make
  '0040-knowledge-checks': m0040, // saved checks, the mark a knowledge write leaves, and the re-runs' answers before and after
  '0043-one-lease-spelling': m0043, // lease_owner and lease_until on every table that leases work
  '0044-attendant-revision': m0044, // sessions.handler_revision is attendant_revision: "handler" is an HTTP route's word
};
