/** Workspaces, their users and the users' bearer tokens (stored as SHA-256 hashes only). */
import type { Transaction } from 'kysely';
import type { Db } from '../database.ts';
import type { Database, Role, User, Workspace } from '../schema.ts';
import { isUniqueViolation } from '../unique-violation.ts';
import { accountTokensRepository, type NewTokenRow } from './account-tokens.repository.ts';
import { accountWorkspacesRepository } from './account-workspaces.repository.ts';

export { unexpired, type NewTokenRow, type Principal, type TokenSummary } from './account-tokens.repository.ts';
export type { WorkspaceSummary } from './account-workspaces.repository.ts';

/**
 * Serialises every change to a workspace's owners: the "at least one owner" rule is a read then a write, so two
 * owners removing each other at once would each see two owners without it.
 */
async function lockWorkspace(trx: Transaction<Database>, workspaceId: string): Promise<boolean> {
  const row = await trx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).forUpdate().executeTakeFirst();
  return row !== undefined;
}

/** Workspaces made with their owner, users and owners here; tokens and the operator's workspace statements by concern. */
export function accountsRepository(db: Db) {
  return {
    ...accountTokensRepository(db),
    ...accountWorkspacesRepository(db),

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

    /**
     * The new user, without a token (they come in through an invite link), or 'email_taken' when a live user of the
     * workspace has that email (also when two add it at once).
     */
    async createUser(input: { userId: string; workspaceId: string; email: string; role: Role; name?: string | null }): Promise<User | 'email_taken'> {
      try {
        return await db
          .insertInto('users')
          .values({ id: input.userId, workspace_id: input.workspaceId, email: input.email, role: input.role, revoked_at: null, name: input.name ?? null })
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

    /** Gives a live user of the workspace a display name (null: none); false when there is no such user. */
    async setUserName(workspaceId: string, userId: string, name: string | null): Promise<boolean> {
      const result = await db
        .updateTable('users')
        .set({ name })
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', userId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
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
  };
}

export type AccountsRepository = ReturnType<typeof accountsRepository>;
