/**
 * Workspaces, users and tokens. A token is returned exactly once, when it is made; only its hash is stored; every token
 * expires (docs/reliability.md, "Limits per token"). Rules (README: Sign in): owners may add any role, admins add
 * agents only (adding someone makes their invite link, and the link sets their password, so whoever makes it could take
 * the account); nobody removes the last owner; an admin cannot remove an owner. A new user gets no token: they come in
 * through their invite link.
 */
import { randomUUID } from 'node:crypto';
import type { AccountsRepository, NewTokenRow, Principal, TokenSummary, WorkspaceSummary } from '../../db/repositories/accounts.repository.ts';
import type { Role, User } from '../../db/schema.ts';
import { AppError, forbidden, notFound, workspaceDisabled } from '../errors.ts';
import { hashToken, newToken } from '../auth/tokens.ts';
import { MAX_TOKEN_TTL_SECONDS, MAX_TOKENS_PER_USER } from '../limits.ts';
import { readUserName } from './display-name.ts';
import type { Invite } from './sign-in-service.ts';

export interface CreatedWorkspace {
  workspace: { id: string; name: string };
  owner: { id: string; email: string; token: string; invite_url?: string };
}

/**
 * `invites`: makes one-time invite links (src/accounts/sign-in-service.ts); with it, new users, new workspace owners and
 * restored owners come with an `invite_url` to set their password.
 */
export function createAccountsService(deps: {
  accounts: AccountsRepository;
  /** `createdBy`: the user who makes the link; null: the operator. */
  invites?: { invite(userId: string, createdBy: string | null): Promise<Invite> };
  /**
   * Emails an invite link to its user (SMTP_URL); true when an email was started, false without SMTP. The link is
   * still in the answer: whoever made it can send it another way.
   */
  emailInvite?: (input: { to: string; workspaceId: string; invite: Invite }) => boolean;
  now?: () => Date;
}) {
  const { accounts } = deps;
  const now = deps.now ?? (() => new Date());
  const summary = async (workspaceId: string): Promise<WorkspaceSummary> => {
    const found = (await accounts.listWorkspaces()).find((w) => w.id === workspaceId);
    if (!found) throw notFound('The workspace');
    return found;
  };
  /** The operator acts as an owner of the workspace (so the owners' rules apply, the last-owner rule included). */
  const operatorOf = async (workspaceId: string): Promise<Principal> => {
    if (!(await accounts.findWorkspace(workspaceId))) throw notFound('The workspace');
    return { userId: '', workspaceId, email: 'operator', name: null, role: 'owner', tokenId: '' };
  };
  /** The operator's principal has no user id (operatorOf): their links are recorded as made by the operator. */
  const inviteUrl = async (userId: string, by?: Principal): Promise<{ invite_url?: string }> =>
    deps.invites ? { invite_url: (await deps.invites.invite(userId, by?.userId || null)).invite_url } : {};
  /** A new token that expires `seconds` from now (at most MAX_TOKEN_TTL_SECONDS; that when none is asked). */
  const tokenRow = (seconds: number = MAX_TOKEN_TTL_SECONDS): { token: string; row: NewTokenRow } => {
    const token = newToken();
    const expiresAt = new Date(now().getTime() + Math.min(seconds, MAX_TOKEN_TTL_SECONDS) * 1000);
    return { token: token.token, row: { tokenId: token.id, tokenHash: token.hash, expiresAt } };
  };
  /** Links set a password, so whoever makes one could take the account: admins' and owners' links are made by owners. */
  const mayInvite = (principal: Principal, role: Role): void => {
    if (role !== 'agent' && principal.role !== 'owner') throw forbidden(`Only an owner may add an ${role} or make an invite link for one.`);
  };

  return {
    async createWorkspace(input: { name: string; ownerEmail: string }): Promise<CreatedWorkspace> {
      const ownerId = randomUUID();
      const token = tokenRow();
      const workspace = await accounts.createWorkspaceWithOwner({
        workspaceId: randomUUID(),
        name: input.name.trim(),
        ownerId,
        ownerEmail: input.ownerEmail.trim(),
        token: token.row,
      });
      return {
        workspace: { id: workspace.id, name: workspace.name },
        owner: { id: ownerId, email: input.ownerEmail.trim(), token: token.token, ...(await inviteUrl(ownerId)) },
      };
    },

    async isEmpty(): Promise<boolean> {
      return (await accounts.countWorkspaces()) === 0;
    },

    /** The principal of a live token; undefined for an unknown or revoked one; 403 workspace_disabled while its workspace is. */
    async authenticate(token: string): Promise<Principal | undefined> {
      const found = await accounts.findPrincipalByTokenHash(hashToken(token));
      if (!found) return undefined;
      const { workspaceDisabled: disabled, ...principal } = found;
      if (disabled) throw workspaceDisabled();
      return principal;
    },

    async listUsers(principal: Principal) {
      const users = await accounts.listLiveUsers(principal.workspaceId);
      // password_set: false while the user has not used an invite link yet (the dashboard shows "invited").
      return users.map((u) => ({ id: u.id, email: u.email, name: u.name, role: u.role, created_at: u.created_at, password_set: u.password_hash !== null }));
    },

    /** A new user and their invite link; no token: nobody but the person themselves ever holds one of theirs. */
    async createUser(
      principal: Principal,
      input: { email: string; role: Role; name?: string | null },
    ): Promise<{ user: Pick<User, 'id' | 'email' | 'name' | 'role'>; invite_url?: string; invite_emailed: boolean }> {
      mayInvite(principal, input.role);
      const email = input.email.trim();
      const name = readUserName(input.name);
      const taken = () => new AppError('conflict', `A user with the email ${email} already exists in this workspace.`);
      if (await accounts.findLiveUserByEmail(principal.workspaceId, email)) throw taken();
      // Two requests with one email at once both pass the look-up above; the unique index decides, and the loser is 409.
      const user = await accounts.createUser({ userId: randomUUID(), workspaceId: principal.workspaceId, email, role: input.role, name });
      if (user === 'email_taken') throw taken();
      const invite = deps.invites ? await deps.invites.invite(user.id, principal.userId || null) : null;
      const emailed = invite ? (deps.emailInvite?.({ to: user.email, workspaceId: principal.workspaceId, invite }) ?? false) : false;
      const made = { id: user.id, email: user.email, name: user.name, role: user.role };
      return { user: made, ...(invite ? { invite_url: invite.invite_url } : {}), invite_emailed: emailed };
    },

    /**
     * An owner or admin names a user of the workspace (PATCH /v1/users/{id}); empty removes the name. Owners name anyone,
     * admins agents and themselves, as they add them: a name is what customers read as the team's.
     */
    async renameUser(principal: Principal, userId: string, name: string | null): Promise<{ id: string; email: string; name: string | null; role: Role }> {
      const user = await accounts.findLiveUser(principal.workspaceId, userId);
      if (!user) throw notFound('The user');
      if (user.id !== principal.userId && user.role !== 'agent' && principal.role !== 'owner') throw forbidden(`Only an owner may change the name of an ${user.role}.`);
      const stored = readUserName(name);
      if (!(await accounts.setUserName(principal.workspaceId, user.id, stored))) throw notFound('The user');
      return { id: user.id, email: user.email, name: stored, role: user.role };
    },

    /** A new invite link for a user of the workspace (their older unused links stop working); owners' and admins' by owners only. */
    async inviteUser(principal: Principal, userId: string): Promise<Invite & { invite_emailed: boolean }> {
      if (!deps.invites) throw new AppError('unavailable', 'Invite links are not available on this server.');
      const user = await accounts.findLiveUser(principal.workspaceId, userId);
      if (!user) throw notFound('The user');
      // The link sets the user's password: an admin must not be able to take over an owner's or another admin's account.
      mayInvite(principal, user.role);
      const invite = await deps.invites.invite(user.id, principal.userId || null);
      return { ...invite, invite_emailed: deps.emailInvite?.({ to: user.email, workspaceId: principal.workspaceId, invite }) ?? false };
    },

    async revokeUser(principal: Principal, userId: string): Promise<void> {
      const user = await accounts.findLiveUser(principal.workspaceId, userId);
      if (!user) throw notFound('The user');
      if (user.role === 'owner' && principal.role !== 'owner') throw forbidden('Only an owner may remove an owner.');
      // The last-owner rule is checked again under the workspace's lock: two owners removing each other at once.
      const outcome = await accounts.revokeUserKeepingAnOwner(principal.workspaceId, user.id, now());
      if (outcome === 'not_found') throw notFound('The user');
      if (outcome === 'last_owner') throw new AppError('conflict', 'This is the last owner of the workspace; add another owner first.');
    },

    /**
     * A fresh token for the caller that stops working `expiresInSeconds` from now; absent (or beyond it), after the
     * longest lifetime, MAX_TOKEN_TTL_SECONDS: no token, whatever made it, outlives that.
     */
    async issueToken(principal: Principal, expiresInSeconds: number | null = null): Promise<{ token: string; expires_at: string }> {
      const { token, row } = tokenRow(expiresInSeconds ?? MAX_TOKEN_TTL_SECONDS);
      const outcome = await accounts.insertTokenWithinLimit({
        tokenId: row.tokenId,
        userId: principal.userId,
        tokenHash: row.tokenHash,
        expiresAt: row.expiresAt,
        maxLive: MAX_TOKENS_PER_USER,
      });
      if (outcome === 'user_gone') throw new AppError('unauthorized', 'The bearer token is unknown or revoked.');
      if (outcome === 'limit') {
        throw new AppError('conflict', `You hold ${MAX_TOKENS_PER_USER} live tokens, the most one user may; revoke one first (GET /v1/tokens lists them, DELETE /v1/tokens/{id} revokes one).`);
      }
      return { token, expires_at: row.expiresAt.toISOString() };
    },

    /** The caller's live tokens, newest first; `current` marks the one of this request. */
    async listTokens(principal: Principal): Promise<(TokenSummary & { current: boolean })[]> {
      return (await accounts.listLiveTokens(principal.userId)).map((t) => ({ ...t, current: t.id === principal.tokenId }));
    },

    /** Revokes one of the caller's own live tokens; 404 for any other id (another user's tokens are not theirs to name). */
    async revokeOwnToken(principal: Principal, tokenId: string): Promise<void> {
      if (!(await accounts.revokeUserToken(principal.userId, tokenId, now()))) throw notFound('The token');
    },

    /**
     * The operator's repair (POST /v1/admin/workspaces/{id}/owners, `cli workspace restore-owner`): the user with this
     * email becomes an owner, or is added as one, with a new token shown once.
     */
    async restoreOwner(
      workspaceId: string,
      email: string,
    ): Promise<{ owner: { id: string; email: string; token: string; created: boolean; invite_url?: string } }> {
      const token = tokenRow();
      const restored = await accounts.restoreOwner({ workspaceId, email: email.trim(), newUserId: randomUUID(), token: token.row, at: now() });
      if (restored === 'not_found') throw notFound('The workspace');
      return { owner: { id: restored.userId, email: email.trim(), token: token.token, created: restored.created, ...(await inviteUrl(restored.userId)) } };
    },

    /** Of these token ids, the ones still live: the open event streams end when theirs is not (src/auth/stream-guard.ts). */
    async liveTokenIds(tokenIds: readonly string[]): Promise<Set<string>> {
      return accounts.liveTokenIds(tokenIds);
    },

    async revokeCurrentToken(principal: Principal): Promise<void> {
      await accounts.revokeToken(principal.tokenId, now());
    },

    // ── The operator's (src/cli/): the same rules as the API, acting as an owner of the workspace ──────────────

    async listWorkspaces(): Promise<WorkspaceSummary[]> {
      return accounts.listWorkspaces();
    },

    /**
     * Disables a workspace: its tokens, keys and sign-in are refused (403 workspace_disabled), its open live streams end,
     * and its channels take no new conversations. Disabling again keeps the first time and updates the reason.
     */
    async disableWorkspace(workspaceId: string, reason: string | null): Promise<WorkspaceSummary> {
      const current = await accounts.findWorkspace(workspaceId);
      if (!current) throw notFound('The workspace');
      await accounts.setWorkspaceDisabled(workspaceId, current.disabled_at === null ? now() : new Date(current.disabled_at), reason);
      return summary(workspaceId);
    },

    /** Enables a disabled workspace again: all of the above works again at once. */
    async enableWorkspace(workspaceId: string): Promise<WorkspaceSummary> {
      if (!(await accounts.setWorkspaceDisabled(workspaceId, null, null))) throw notFound('The workspace');
      return summary(workspaceId);
    },

    /** Whether a workspace's channels take conversations: it exists and is not disabled. */
    async isServing(workspaceId: string): Promise<boolean> {
      const workspace = await accounts.findWorkspace(workspaceId);
      return workspace !== undefined && workspace.disabled_at === null;
    },

    operatorOf,

    /** A live user of the workspace as the principal their tokens carry (the operator's `token` commands). */
    async userByEmail(workspaceId: string, email: string): Promise<Principal> {
      await operatorOf(workspaceId);
      const user = await accounts.findLiveUserByEmail(workspaceId, email.trim());
      if (!user) throw notFound(`The user ${email.trim()}`);
      return { userId: user.id, workspaceId, email: user.email, name: user.name, role: user.role, tokenId: '' };
    },

    /** Revokes every live token of a user (their open live streams end); answers how many. */
    async revokeAllTokens(principal: Principal): Promise<number> {
      return accounts.revokeUserTokens(principal.userId, now());
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
