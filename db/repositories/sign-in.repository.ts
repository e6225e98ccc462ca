/** Sign-in: users' password hashes, one-time invite links (stored as SHA-256 hashes only) and the tokens sign-in makes. */
import type { Transaction } from 'kysely';
import type { Db } from '../database.ts';
import type { Database, Role } from '../schema.ts';
import { unexpired } from './accounts.repository.ts';

export interface SignInCandidate {
  userId: string;
  email: string;
  name: string | null;
  role: Role;
  workspaceId: string;
  workspaceName: string;
  /** The workspace's time zone (the dashboard shows times in it); null: not chosen. */
  timeZone: string | null;
  passwordHash: string;
  /** The operator disabled the workspace: the password is still checked, then sign-in is refused (403). */
  workspaceDisabled: boolean;
}

export interface NewToken {
  tokenId: string;
  tokenHash: string;
  expiresAt: Date;
  /** Live tokens a user may hold; the oldest live ones are revoked to make room for this one. */
  maxLive: number;
}

/** The largest number of workspaces one email is tried in (each costs a password verification). */
const MAX_CANDIDATES = 10;

/**
 * Inserts a token made by signing in for a live user, revoking their live tokens beyond `maxLive - 1` first: signing in
 * never fails for the limit (docs/reliability.md). The oldest tokens made by signing in go first, then the oldest
 * others (a script's). Under the user's row lock, as POST /v1/tokens counts under it too.
 */
async function insertTokenEvictingOldest(trx: Transaction<Database>, userId: string, token: NewToken, at: Date): Promise<boolean> {
  const user = await trx.selectFrom('users').select('id').where('id', '=', userId).where('revoked_at', 'is', null).forUpdate().executeTakeFirst();
  if (!user) return false;
  const live = await trx
    .selectFrom('tokens')
    .select('id')
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where(unexpired)
    .orderBy('sign_in', 'desc')
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  const excess = live.length - (token.maxLive - 1);
  if (excess > 0) {
    await trx
      .updateTable('tokens')
      .set({ revoked_at: at })
      .where('id', 'in', live.slice(0, excess).map((t) => t.id))
      .execute();
  }
  await trx
    .insertInto('tokens')
    .values({ id: token.tokenId, user_id: userId, token_hash: token.tokenHash, revoked_at: null, expires_at: token.expiresAt, sign_in: true })
    .execute();
  return true;
}

export function signInRepository(db: Db) {
  return {
    /** Live users with this email (any case) and a password, in every workspace or in the one given. */
    async findCandidates(email: string, workspaceId?: string): Promise<SignInCandidate[]> {
      let query = db
        .selectFrom('users')
        .innerJoin('workspaces', 'workspaces.id', 'users.workspace_id')
        .select(['users.id as userId', 'users.email', 'users.name', 'users.role', 'workspaces.id as workspaceId', 'workspaces.name as workspaceName', 'workspaces.time_zone as timeZone'])
        .select(['users.password_hash as passwordHash', 'workspaces.disabled_at'])
        .where((eb) => eb(eb.fn('lower', ['users.email']), '=', email.trim().toLowerCase()))
        .where('users.revoked_at', 'is', null)
        .where('users.password_hash', 'is not', null);
      if (workspaceId !== undefined) query = query.where('workspaces.id', '=', workspaceId);
      const rows = await query.orderBy('users.created_at').limit(MAX_CANDIDATES).execute();
      return rows.map(({ disabled_at, ...r }) => ({ ...r, passwordHash: r.passwordHash!, workspaceDisabled: disabled_at !== null }));
    },

    /** A token for a user who signed in; false when the user was removed meanwhile. */
    async insertSignInToken(userId: string, token: NewToken, at: Date): Promise<boolean> {
      return db.transaction().execute((trx) => insertTokenEvictingOldest(trx, userId, token, at));
    },

    /** A new invite for a user, made by `createdBy` (null: the operator); their older unused invites stop working. */
    async createInvite(input: { id: string; userId: string; tokenHash: string; expiresAt: Date; at: Date; createdBy: string | null }): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('invites')
          .set({ revoked_at: input.at })
          .where('user_id', '=', input.userId)
          .where('used_at', 'is', null)
          .where('revoked_at', 'is', null)
          .execute();
        await trx
          .insertInto('invites')
          .values({
            id: input.id,
            user_id: input.userId,
            token_hash: input.tokenHash,
            expires_at: input.expiresAt,
            used_at: null,
            revoked_at: null,
            created_at: input.at,
            created_by: input.createdBy,
          })
          .execute();
      });
    },

    async findInvite(tokenHash: string) {
      return db
        .selectFrom('invites')
        .innerJoin('users', 'users.id', 'invites.user_id')
        .innerJoin('workspaces', 'workspaces.id', 'users.workspace_id')
        .select([
          'invites.id',
          'invites.user_id as userId',
          'invites.expires_at as expiresAt',
          'invites.used_at as usedAt',
          'invites.revoked_at as revokedAt',
          'users.revoked_at as userRevokedAt',
          'workspaces.disabled_at as workspaceDisabledAt',
        ])
        .where('invites.token_hash', '=', tokenHash)
        .executeTakeFirst();
    },

    /**
     * Uses an invite: sets its user's password, revokes every token they held (a new password ends every session
     * and every copy of a token, README: Sign in) and makes them a token, once. Under the invite's row lock, so two
     * uses at once give one success; the invite's state is checked again there. `name`: the name the person gave
     * themselves with it (undefined keeps theirs).
     */
    async redeemInvite(input: { inviteId: string; passwordHash: string; token: NewToken; at: Date; name?: string | null }): Promise<
      | { user: { id: string; email: string; name: string | null; role: Role }; workspace: { id: string; name: string; time_zone: string | null } }
      | 'used'
      | 'revoked'
      | 'expired'
      | 'user_gone'
    > {
      return db.transaction().execute(async (trx) => {
        const invite = await trx.selectFrom('invites').selectAll().where('id', '=', input.inviteId).forUpdate().executeTakeFirstOrThrow();
        if (invite.used_at !== null) return 'used';
        if (invite.revoked_at !== null) return 'revoked';
        if (new Date(invite.expires_at).getTime() <= input.at.getTime()) return 'expired';
        const user = await trx
          .selectFrom('users')
          .innerJoin('workspaces', 'workspaces.id', 'users.workspace_id')
          .select(['users.id', 'users.email', 'users.name', 'users.role', 'workspaces.id as workspaceId', 'workspaces.name as workspaceName', 'workspaces.time_zone'])
          .where('users.id', '=', invite.user_id)
          .where('users.revoked_at', 'is', null)
          .executeTakeFirst();
        if (!user) return 'user_gone';
        const name = input.name === undefined ? user.name : input.name;
        await trx.updateTable('users').set({ password_hash: input.passwordHash, name }).where('id', '=', user.id).execute();
        await trx.updateTable('invites').set({ used_at: input.at }).where('id', '=', invite.id).execute();
        await trx.updateTable('tokens').set({ revoked_at: input.at }).where('user_id', '=', user.id).where('revoked_at', 'is', null).execute();
        await insertTokenEvictingOldest(trx, user.id, input.token, input.at);
        return {
          user: { id: user.id, email: user.email, name, role: user.role },
          workspace: { id: user.workspaceId, name: user.workspaceName, time_zone: user.time_zone },
        };
      });
    },
  };
}

export type SignInRepository = ReturnType<typeof signInRepository>;
