/** Workspaces, their users and the users' bearer tokens (stored as SHA-256 hashes only). */
import { sql, type Transaction } from 'kysely';
import type { Db } from '../database.ts';
import type { Database, Role, User, Workspace } from '../schema.ts';
import { isUniqueViolation } from '../unique-violation.ts';

/**
 * Serialises every change to a workspace's owners: the "at least one owner" rule is a read then a write, so two
 * owners removing each other at once would each see two owners without it.
 */
async function lockWorkspace(trx: Transaction<Database>, workspaceId: string): Promise<boolean> {
  const row = await trx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).forUpdate().executeTakeFirst();
  return row !== undefined;
}

/**
 * A token without `expires_at` can only come from an engine older than migration 0020 during a rolling upgrade: it
 * expires this long after it was made, the longest lifetime a token may have (src/limits.ts, MAX_TOKEN_TTL_SECONDS).
 */
const LEGACY_TOKEN_LIFETIME = sql`interval '365 days'`;
/** Not expired: the token's expiry, or the legacy lifetime of one made without, is still ahead. */
export const unexpired = sql<boolean>`coalesce(tokens.expires_at, tokens.created_at + ${LEGACY_TOKEN_LIFETIME}) > now()`;
/** A live token: not revoked, not expired, its user not revoked. */
const liveToken = sql<boolean>`tokens.revoked_at is null and ${unexpired} and users.revoked_at is null`;

/** A token's row: every token expires (docs/reliability.md, "Limits per token"). */
export interface NewTokenRow {
  tokenId: string;
  tokenHash: string;
  expiresAt: Date;
}

/** A user's own token as GET /v1/tokens lists it (never the token or its hash). */
export interface TokenSummary {
  id: string;
  created_at: Date;
  expires_at: Date;
  sign_in: boolean;
}

/** A workspace as the operator lists it (`cli workspace list`). */
export interface WorkspaceSummary {
  id: string;
  name: string;
  created_at: Date;
  /** The live owners' emails. */
  owners: string[];
  /** Live users of every role. */
  users: number;
  disabled_at: Date | null;
  disabled_reason: string | null;
}

export interface Principal {
  userId: string;
  workspaceId: string;
  email: string;
  role: Role;
  tokenId: string;
}

export function accountsRepository(db: Db) {
  return {
    async createWorkspaceWithOwner(input: {
      workspaceId: string;
      name: string;
      ownerId: string;
      ownerEmail: string;
      token: NewTokenRow;
    }): Promise<Workspace> {
      return db.transaction().execute(async (trx) => {
        const workspace = await trx
          .insertInto('workspaces')
          .values({ id: input.workspaceId, name: input.name })
          .returningAll()
          .executeTakeFirstOrThrow();
        await trx
          .insertInto('users')
          .values({ id: input.ownerId, workspace_id: input.workspaceId, email: input.ownerEmail, role: 'owner', revoked_at: null })
          .execute();
        await trx
          .insertInto('tokens')
          .values({ id: input.token.tokenId, user_id: input.ownerId, token_hash: input.token.tokenHash, revoked_at: null, expires_at: input.token.expiresAt })
          .execute();
        return workspace;
      });
    },

    async countWorkspaces(): Promise<number> {
      const row = await db.selectFrom('workspaces').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /**
     * The new user, without a token (they come in through an invite link), or 'email_taken' when a live user of the
     * workspace has that email (also when two add it at once).
     */
    async createUser(input: { userId: string; workspaceId: string; email: string; role: Role }): Promise<User | 'email_taken'> {
      try {
        return await db
          .insertInto('users')
          .values({ id: input.userId, workspace_id: input.workspaceId, email: input.email, role: input.role, revoked_at: null })
          .returningAll()
          .executeTakeFirstOrThrow();
      } catch (err) {
        if (isUniqueViolation(err, 'users_workspace_email')) return 'email_taken';
        throw err;
      }
    },

    async findLiveUserByEmail(workspaceId: string, email: string): Promise<User | undefined> {
      return db
        .selectFrom('users')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
    },

    async findLiveUser(workspaceId: string, userId: string): Promise<User | undefined> {
      return db
        .selectFrom('users')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', userId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
    },

    async listLiveUsers(workspaceId: string): Promise<User[]> {
      return db.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).where('revoked_at', 'is', null).orderBy('created_at').execute();
    },

    /**
     * Revokes the user and every token of theirs, unless they are the workspace's last live owner; under the
     * workspace's lock, so concurrent removals cannot leave it without an owner.
     */
    async revokeUserKeepingAnOwner(workspaceId: string, userId: string, at: Date): Promise<'revoked' | 'not_found' | 'last_owner'> {
      return db.transaction().execute(async (trx) => {
        if (!(await lockWorkspace(trx, workspaceId))) return 'not_found';
        const user = await trx.selectFrom('users').select(['id', 'role']).where('workspace_id', '=', workspaceId).where('id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
        if (!user) return 'not_found';
        if (user.role === 'owner') {
          const owners = await trx
            .selectFrom('users')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('workspace_id', '=', workspaceId)
            .where('role', '=', 'owner')
            .where('revoked_at', 'is', null)
            .executeTakeFirstOrThrow();
          if (Number(owners.n) <= 1) return 'last_owner';
        }
        await trx.updateTable('users').set({ revoked_at: at }).where('id', '=', userId).execute();
        await trx.updateTable('tokens').set({ revoked_at: at }).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
        return 'revoked';
      });
    },

    /**
     * A new token for a live user, unless they already hold `maxLive` live tokens; under the user's row lock so two
     * requests at once cannot both pass the count.
     */
    async insertTokenWithinLimit(input: { tokenId: string; userId: string; tokenHash: string; expiresAt: Date; maxLive: number }): Promise<'created' | 'limit' | 'user_gone'> {
      return db.transaction().execute(async (trx) => {
        const user = await trx.selectFrom('users').select('id').where('id', '=', input.userId).where('revoked_at', 'is', null).forUpdate().executeTakeFirst();
        if (!user) return 'user_gone';
        const live = await trx
          .selectFrom('tokens')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('user_id', '=', input.userId)
          .where('revoked_at', 'is', null)
          .where(unexpired)
          .executeTakeFirstOrThrow();
        if (Number(live.n) >= input.maxLive) return 'limit';
        await trx
          .insertInto('tokens')
          .values({ id: input.tokenId, user_id: input.userId, token_hash: input.tokenHash, revoked_at: null, expires_at: input.expiresAt })
          .execute();
        return 'created';
      });
    },

    /**
     * The operator's way back when a workspace has no owner left (or the owners lost access): the live user with this
     * email becomes an owner, or a new owner is added; either way with a new token. A user whose role changes loses
     * every token they held (a role change revokes them, README: Sign in). Under the workspace's lock.
     */
    async restoreOwner(input: { workspaceId: string; email: string; newUserId: string; token: NewTokenRow; at: Date }): Promise<{ userId: string; created: boolean } | 'not_found'> {
      return db.transaction().execute(async (trx) => {
        if (!(await lockWorkspace(trx, input.workspaceId))) return 'not_found';
        const existing = await trx
          .selectFrom('users')
          .select(['id', 'role'])
          .where('workspace_id', '=', input.workspaceId)
          .where((eb) => eb(eb.fn('lower', ['email']), '=', input.email.toLowerCase()))
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        const userId = existing?.id ?? input.newUserId;
        if (existing && existing.role !== 'owner') {
          await trx.updateTable('users').set({ role: 'owner' }).where('id', '=', existing.id).execute();
          await trx.updateTable('tokens').set({ revoked_at: input.at }).where('user_id', '=', existing.id).where('revoked_at', 'is', null).execute();
        } else if (!existing) {
          await trx.insertInto('users').values({ id: userId, workspace_id: input.workspaceId, email: input.email, role: 'owner', revoked_at: null }).execute();
        }
        await trx
          .insertInto('tokens')
          .values({ id: input.token.tokenId, user_id: userId, token_hash: input.token.tokenHash, revoked_at: null, expires_at: input.token.expiresAt })
          .execute();
        return { userId, created: existing === undefined };
      });
    },

    /** Of these token ids, the ones still live and of a workspace not disabled (the open event streams check theirs with this). */
    async liveTokenIds(tokenIds: readonly string[]): Promise<Set<string>> {
      if (tokenIds.length === 0) return new Set();
      const rows = await db
        .selectFrom('tokens')
        .innerJoin('users', 'users.id', 'tokens.user_id')
        .innerJoin('workspaces', 'workspaces.id', 'users.workspace_id')
        .select('tokens.id')
        .where('tokens.id', 'in', [...tokenIds])
        .where(liveToken)
        // A disabled workspace's streams end as a revoked token's do (src/auth/stream-guard.ts).
        .where('workspaces.disabled_at', 'is', null)
        .execute();
      return new Set(rows.map((r) => r.id));
    },

    async revokeToken(tokenId: string, at: Date): Promise<void> {
      await db.updateTable('tokens').set({ revoked_at: at }).where('id', '=', tokenId).execute();
    },

    /** Revokes one live token of this user; false when the user holds no such live token. */
    async revokeUserToken(userId: string, tokenId: string, at: Date): Promise<boolean> {
      const result = await db
        .updateTable('tokens')
        .set({ revoked_at: at })
        .where('id', '=', tokenId)
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .where(unexpired)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** The user's live tokens, newest first. */
    async listLiveTokens(userId: string): Promise<TokenSummary[]> {
      const rows = await db
        .selectFrom('tokens')
        .select(['id', 'created_at', 'sign_in', sql<Date>`coalesce(tokens.expires_at, tokens.created_at + ${LEGACY_TOKEN_LIFETIME})`.as('expires_at')])
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .where(unexpired)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .execute();
      return rows.map((r) => ({ id: r.id, created_at: new Date(r.created_at), expires_at: new Date(r.expires_at), sign_in: r.sign_in }));
    },

    /**
     * The live user behind a token hash, or undefined (unknown, revoked token or revoked user); `workspaceDisabled`
     * tells the caller to refuse it with its own answer rather than "unknown".
     */
    async findPrincipalByTokenHash(tokenHash: string): Promise<(Principal & { workspaceDisabled: boolean }) | undefined> {
      const row = await db
        .selectFrom('tokens')
        .innerJoin('users', 'users.id', 'tokens.user_id')
        .innerJoin('workspaces', 'workspaces.id', 'users.workspace_id')
        .select(['users.id as userId', 'users.workspace_id as workspaceId', 'users.email', 'users.role', 'tokens.id as tokenId', 'workspaces.disabled_at'])
        .where('tokens.token_hash', '=', tokenHash)
        .where(liveToken)
        .executeTakeFirst();
      if (!row) return undefined;
      const { disabled_at, ...principal } = row;
      return { ...principal, workspaceDisabled: disabled_at !== null };
    },

    async findWorkspace(workspaceId: string): Promise<Workspace | undefined> {
      return db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirst();
    },

    /** Every workspace, oldest first, with its owners and the number of its users. */
    async listWorkspaces(): Promise<WorkspaceSummary[]> {
      const workspaces = await db.selectFrom('workspaces').selectAll().orderBy('created_at').orderBy('id').execute();
      const users = await db.selectFrom('users').select(['workspace_id', 'email', 'role']).where('revoked_at', 'is', null).orderBy('created_at').execute();
      return workspaces.map((w) => {
        const mine = users.filter((u) => u.workspace_id === w.id);
        return {
          id: w.id,
          name: w.name,
          created_at: new Date(w.created_at),
          owners: mine.filter((u) => u.role === 'owner').map((u) => u.email),
          users: mine.length,
          disabled_at: w.disabled_at === null ? null : new Date(w.disabled_at),
          disabled_reason: w.disabled_reason,
        };
      });
    },

    /** Disables (`at` set) or enables (`at` null) a workspace; false when there is no such workspace. */
    async setWorkspaceDisabled(workspaceId: string, at: Date | null, reason: string | null): Promise<boolean> {
      const result = await db.updateTable('workspaces').set({ disabled_at: at, disabled_reason: reason }).where('id', '=', workspaceId).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** Revokes every live token of a user; answers how many. */
    async revokeUserTokens(userId: string, at: Date): Promise<number> {
      const result = await db.updateTable('tokens').set({ revoked_at: at }).where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

export type AccountsRepository = ReturnType<typeof accountsRepository>;
