/** The users' bearer tokens (stored as SHA-256 hashes only): made within a limit, checked, listed, revoked. */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { Role } from '../schema.ts';

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

export interface Principal {
  userId: string;
  workspaceId: string;
  email: string;
  /** The display name the user has (migration 0036); null: none, named from the email (src/accounts/display-name.ts). */
  name: string | null;
  role: Role;
  tokenId: string;
}

/** Every statement that reads or writes tokens alone (those made with a workspace or an owner are in accounts.repository.ts). */
export function accountTokensRepository(db: Db) {
  return {
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
        .select(['users.id as userId', 'users.workspace_id as workspaceId', 'users.email', 'users.name', 'users.role', 'tokens.id as tokenId', 'workspaces.disabled_at'])
        .where('tokens.token_hash', '=', tokenHash)
        .where(liveToken)
        .executeTakeFirst();
      if (!row) return undefined;
      const { disabled_at, ...principal } = row;
      return { ...principal, workspaceDisabled: disabled_at !== null };
    },

    /** Revokes every live token of a user; answers how many. */
    async revokeUserTokens(userId: string, at: Date): Promise<number> {
      const result = await db.updateTable('tokens').set({ revoked_at: at }).where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}
