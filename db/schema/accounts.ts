/** Table types of the accounts: workspaces, their users, sign-in tokens, invites and the sign-in throttle. */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Timestamp } from './columns.ts';

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
  /** When somebody first tried a question on the Knowledge screen (migration 0035): the first-day list's step. */
  question_tried_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
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
  /** The name colleagues and customers see, trimmed, 1 to 120 characters; null: taken from the email (migration 0036). */
  name: ColumnType<string | null, string | null | undefined, string | null>;
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

export type Workspace = Selectable<WorkspacesTable>;
export type User = Selectable<UsersTable>;
