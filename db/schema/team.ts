/** Table types of the team's presence (migration 0030; docs/architecture.md, "Presence and assignment"). */
import type { Timestamp } from './columns.ts';

/** What a person of the team says they are: `available` takes conversations; `away` and `offline` do not. */
export type PresenceStatus = 'available' | 'away' | 'offline';

export interface TeamPresenceTable {
  user_id: string;
  workspace_id: string;
  status: PresenceStatus;
  changed_at: Timestamp;
  /** Moved by the engine holding the person's open dashboard; "available" lapses after PRESENCE_IDLE_MINUTES without. */
  last_seen_at: Timestamp;
  last_assigned_at: Timestamp | null;
}
