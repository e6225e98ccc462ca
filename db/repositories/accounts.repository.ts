/** Workspaces, their users and the users' bearer tokens (stored as SHA-256 hashes only). */
import type { Db } from '../database.ts';
import type { Role, User, Workspace } from '../schema.ts';

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
      tokenId: string;
      tokenHash: string;
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
        await trx.insertInto('tokens').values({ id: input.tokenId, user_id: input.ownerId, token_hash: input.tokenHash, revoked_at: null }).execute();
        return workspace;
      });
    },

    async countWorkspaces(): Promise<number> {
      const row = await db.selectFrom('workspaces').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async createUserWithToken(input: { userId: string; workspaceId: string; email: string; role: Role; tokenId: string; tokenHash: string }): Promise<User> {
      return db.transaction().execute(async (trx) => {
        const user = await trx
          .insertInto('users')
          .values({ id: input.userId, workspace_id: input.workspaceId, email: input.email, role: input.role, revoked_at: null })
          .returningAll()
          .executeTakeFirstOrThrow();
        await trx.insertInto('tokens').values({ id: input.tokenId, user_id: input.userId, token_hash: input.tokenHash, revoked_at: null }).execute();
        return user;
      });
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

    async countLiveOwners(workspaceId: string): Promise<number> {
      const row = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('role', '=', 'owner')
        .where('revoked_at', 'is', null)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** Revokes the user and every token of theirs in one transaction. */
    async revokeUser(userId: string, at: Date): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('users').set({ revoked_at: at }).where('id', '=', userId).execute();
        await trx.updateTable('tokens').set({ revoked_at: at }).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
      });
    },

    async insertToken(input: { tokenId: string; userId: string; tokenHash: string }): Promise<void> {
      await db.insertInto('tokens').values({ id: input.tokenId, user_id: input.userId, token_hash: input.tokenHash, revoked_at: null }).execute();
    },

    async revokeToken(tokenId: string, at: Date): Promise<void> {
      await db.updateTable('tokens').set({ revoked_at: at }).where('id', '=', tokenId).execute();
    },

    /** The live user behind a token hash, or undefined (unknown, revoked token or revoked user). */
    async findPrincipalByTokenHash(tokenHash: string): Promise<Principal | undefined> {
      const row = await db
        .selectFrom('tokens')
        .innerJoin('users', 'users.id', 'tokens.user_id')
        .select(['users.id as userId', 'users.workspace_id as workspaceId', 'users.email', 'users.role', 'tokens.id as tokenId'])
        .where('tokens.token_hash', '=', tokenHash)
        .where('tokens.revoked_at', 'is', null)
        .where('users.revoked_at', 'is', null)
        .executeTakeFirst();
      return row;
    },
  };
}

export type AccountsRepository = ReturnType<typeof accountsRepository>;
