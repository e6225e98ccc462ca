/** Table types of the live events across engines (migration 0019; src/events/live-bus.ts, docs/architecture.md). */
import type { Generated } from 'kysely';
import type { Timestamp } from './columns.ts';

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
