/** Table types of the phone channel and team hours (migration 0006; src/channels/phone). */
import type { Generated } from 'kysely';
import type { Json, Timestamp } from './columns.ts';

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
