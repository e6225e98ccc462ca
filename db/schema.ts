/** Kysely table types: one interface per table, as the migrations create them. */
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: Generated<Timestamp>;
}

export type Role = 'owner' | 'admin' | 'agent';
export const roles: readonly Role[] = ['owner', 'admin', 'agent'];

export interface UsersTable {
  id: string;
  workspace_id: string;
  email: string;
  role: Role;
  created_at: Generated<Timestamp>;
  revoked_at: Timestamp | null;
}

export interface TokensTable {
  id: string;
  user_id: string;
  /** SHA-256 of the bearer token, hex; the token itself is never stored. */
  token_hash: string;
  created_at: Generated<Timestamp>;
  revoked_at: Timestamp | null;
}

export interface IntegrationsTable {
  workspace_id: string;
  endpoint_url: string;
  /** The shared key, sealed with the master key (AES-256-GCM, bound to the workspace id). */
  key_sealed: string;
  key_hint: string;
  created_at: Generated<Timestamp>;
  updated_at: Timestamp;
}

export interface Database {
  workspaces: WorkspacesTable;
  users: UsersTable;
  tokens: TokensTable;
  integrations: IntegrationsTable;
}

export type Workspace = Selectable<WorkspacesTable>;
export type User = Selectable<UsersTable>;
export type Integration = Selectable<IntegrationsTable>;
export type NewIntegration = Insertable<IntegrationsTable>;
