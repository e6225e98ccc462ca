/**
 * Signing in with an email and a password, and setting a password through a one-time invite link (README: Sign in;
 * docs/reliability.md: Limits per token). Both answer a new bearer token of the usual kind, which expires after
 * LOGIN_TOKEN_TTL_SECONDS; when the user already holds the most live tokens, their oldest token made by signing in (or,
 * when there is none, their oldest token) is revoked rather than the sign-in refused.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { SignInRepository } from '../../db/repositories/sign-in.repository.ts';
import type { Role } from '../../db/schema.ts';
import { hashPassword, passwordProblem, verifyDummy, verifyPassword } from '../auth/passwords.ts';
import type { LoginThrottle } from '../auth/login-throttle.ts';
import { hashToken, newToken } from '../auth/tokens.ts';
import { AppError, workspaceDisabled } from '../errors.ts';
import { INVITE_TTL_MS, LOGIN_TOKEN_TTL_SECONDS, MAX_TOKENS_PER_USER } from '../limits.ts';

export interface SignedIn {
  token: string;
  expires_at: string;
  user: { id: string; email: string; role: Role };
  workspace: { id: string; name: string };
}

export interface Invite {
  /** `{PUBLIC_URL}/dashboard/invite#<token>`: in the fragment, so the token is never sent in a request or logged. */
  invite_url: string;
  expires_at: string;
}

/** The one answer to a wrong email or a wrong password: it does not say which. */
export const WRONG_CREDENTIALS = 'The email or password is not right.';

const INVITE_PREFIX = 'bli_';

export function createSignInService(deps: { repository: SignInRepository; throttle: LoginThrottle; publicUrl: string; now?: () => Date }) {
  const { repository, throttle } = deps;
  const now = deps.now ?? (() => new Date());

  async function tokenFor(): Promise<{ token: string; record: { tokenId: string; tokenHash: string; expiresAt: Date; maxLive: number } }> {
    const token = newToken();
    const expiresAt = new Date(now().getTime() + LOGIN_TOKEN_TTL_SECONDS * 1000);
    return { token: token.token, record: { tokenId: token.id, tokenHash: token.hash, expiresAt, maxLive: MAX_TOKENS_PER_USER } };
  }

  return {
    /** A new invite link for a user, made by `createdBy` (null: the operator); their older unused links stop working. */
    async invite(userId: string, createdBy: string | null): Promise<Invite> {
      const token = INVITE_PREFIX + randomBytes(32).toString('base64url');
      const at = now();
      const expiresAt = new Date(at.getTime() + INVITE_TTL_MS);
      await repository.createInvite({ id: randomUUID(), userId, tokenHash: hashToken(token), expiresAt, at, createdBy });
      return { invite_url: `${deps.publicUrl}/dashboard/invite#${token}`, expires_at: expiresAt.toISOString() };
    },

    /**
     * Email and password. The email is looked up in every workspace (or in `workspaceId`); the password is checked
     * against each account found with a password. One match signs in; several are a 409 that names those workspaces
     * (the caller proved the password for each), to be sent again with `workspace_id`.
     */
    async login(input: { email: string; password: string; workspaceId?: string; address: string }): Promise<SignedIn> {
      const wait = throttle.retryAfterSeconds(input.email, input.address);
      if (wait > 0) {
        throw new AppError('rate_limited', `Too many failed sign-ins; try again in ${wait} second${wait === 1 ? '' : 's'}.`, { retry_after: wait });
      }
      const candidates = await repository.findCandidates(input.email, input.workspaceId);
      const matched = [];
      for (const candidate of candidates) if (await verifyPassword(input.password, candidate.passwordHash)) matched.push(candidate);
      if (candidates.length === 0) await verifyDummy(input.password);
      if (matched.length === 0) {
        throttle.failed(input.email, input.address);
        throw new AppError('unauthorized', WRONG_CREDENTIALS);
      }
      throttle.succeeded(input.email);
      // A disabled workspace is said so only to whoever proved the password; the others are signed in to as usual.
      const open = matched.filter((m) => !m.workspaceDisabled);
      if (open.length === 0) throw workspaceDisabled();
      if (open.length > 1) {
        throw new AppError('conflict', 'This email and password sign in to several workspaces; send workspace_id with the one to sign in to.', {
          workspaces: open.map((m) => ({ id: m.workspaceId, name: m.workspaceName })),
        });
      }
      const user = open[0]!;
      const { token, record } = await tokenFor();
      if (!(await repository.insertSignInToken(user.userId, record, now()))) throw new AppError('unauthorized', WRONG_CREDENTIALS);
      return {
        token,
        expires_at: record.expiresAt.toISOString(),
        user: { id: user.userId, email: user.email, role: user.role },
        workspace: { id: user.workspaceId, name: user.workspaceName },
      };
    },

    /** Sets the password of the invite's user, uses the invite up, and signs the user in. */
    async setPassword(input: { invite: string; password: string }): Promise<SignedIn> {
      const problem = passwordProblem(input.password);
      if (problem) throw new AppError('validation_failed', problem, [{ field: 'password', message: problem }]);
      const invite = await repository.findInvite(hashToken(input.invite.trim()));
      if (!invite) throw new AppError('not_found', 'This invite link is not known; check that it was copied whole, or ask an owner or admin for a new one.');
      const refused = (outcome: 'used' | 'revoked' | 'expired' | 'user_gone'): AppError =>
        new AppError('gone', {
          used: 'This invite link was already used; sign in with your email and password, or ask an owner or admin for a new link.',
          revoked: 'This invite link was replaced by a newer one; use the newest link, or ask an owner or admin for a new one.',
          expired: 'This invite link has expired; ask an owner or admin for a new one.',
          user_gone: 'The user of this invite link was removed from the workspace.',
        }[outcome]);
      if (invite.userRevokedAt !== null) throw refused('user_gone');
      // Kept for later: the link still works once the operator enables the workspace again.
      if (invite.workspaceDisabledAt !== null) throw workspaceDisabled();
      if (invite.usedAt !== null) throw refused('used');
      if (invite.revokedAt !== null) throw refused('revoked');
      if (new Date(invite.expiresAt).getTime() <= now().getTime()) throw refused('expired');
      const passwordHash = await hashPassword(input.password);
      const { token, record } = await tokenFor();
      const redeemed = await repository.redeemInvite({ inviteId: invite.id, passwordHash, token: record, at: now() });
      if (typeof redeemed === 'string') throw refused(redeemed);
      return { token, expires_at: record.expiresAt.toISOString(), ...redeemed };
    },
  };
}

export type SignInService = ReturnType<typeof createSignInService>;
