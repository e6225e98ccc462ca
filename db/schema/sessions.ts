/** Table types of the conversations: sessions, their turns and messages; and the team's notifications. */
import type { ColumnType, Generated } from 'kysely';
import type { Json, Timestamp } from './columns.ts';

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
  /** The statechart's `attendant` region (migration 0019): bot, waiting for a person, or held by `agent_user_id`. */
  handled_by: Generated<HandledBy>;
  agent_user_id: string | null;
  waiting_since: Timestamp | null;
  /** When a waiting conversation goes back to the bot (handback_after_minutes); null: never. */
  handback_at: Timestamp | null;
  attendant_revision: Generated<number>;
  /** The colleague a waiting conversation is assigned to (migration 0030), for the wait of `assigned_waiting_since`. */
  assigned_user_id: ColumnType<string | null, string | null | undefined, string | null>;
  assigned_waiting_since: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** A test conversation of this scenario run (migration 0039, docs/scenarios.md); null for every customer's. */
  test_run_id: ColumnType<string | null, string | null | undefined, string | null>;
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
export type NotificationKind = 'forward' | 'human_followup' | 'endpoint_down' | 'endpoint_recovered' | 'mention';

export interface NotificationsTable {
  id: string;
  workspace_id: string;
  session_id: string | null;
  kind: NotificationKind;
  message: string;
  created_at: Timestamp;
  read_at: Timestamp | null;
  /** The one user it is for (a note's @mention, migration 0031); null: the whole team. */
  user_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The note whose @mention it tells of (migration 0037): one per note and colleague, gone with the note. */
  note_id: ColumnType<string | null, string | null | undefined, string | null>;
}
