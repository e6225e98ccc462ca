/**
 * Table types of privacy (migration 0023; src/privacy, docs/privacy.md): the audit log and the claims of the jobs one
 * engine at a time runs.
 */
import type { Generated } from 'kysely';
import type { Timestamp } from './columns.ts';

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
  lease_owner: string | null;
  lease_until: Timestamp;
  last_run_at: Timestamp | null;
}
