/**
 * Workspaces, users and tokens. A token is returned exactly once, when it is made; only its hash is stored.
 * Rules: owners may add any role, admins may add admins and agents; nobody removes the last owner; an admin cannot
 * remove an owner.
 */
import { randomUUID } from 'node:crypto';
import type { AccountsRepository, Principal } from '../../db/repositories/accounts.repository.ts';
import type { Role } from '../../db/schema.ts';
import { AppError, forbidden, notFound } from '../errors.ts';
import { hashToken, newToken } from '../auth/tokens.ts';

export interface CreatedWorkspace {
  workspace: { id: string; name: string };
  owner: { id: string; email: string; token: string };
}

export function createAccountsService(deps: { accounts: AccountsRepository; now?: () => Date }) {
  const { accounts } = deps;
  const now = deps.now ?? (() => new Date());

  return {
    async createWorkspace(input: { name: string; ownerEmail: string }): Promise<CreatedWorkspace> {
      const ownerId = randomUUID();
      const token = newToken();
      const workspace = await accounts.createWorkspaceWithOwner({
        workspaceId: randomUUID(),
        name: input.name.trim(),
        ownerId,
        ownerEmail: input.ownerEmail.trim(),
        tokenId: token.id,
        tokenHash: token.hash,
      });
      return { workspace: { id: workspace.id, name: workspace.name }, owner: { id: ownerId, email: input.ownerEmail.trim(), token: token.token } };
    },

    async isEmpty(): Promise<boolean> {
      return (await accounts.countWorkspaces()) === 0;
    },

    async authenticate(token: string): Promise<Principal | undefined> {
      return accounts.findPrincipalByTokenHash(hashToken(token));
    },

    async listUsers(principal: Principal) {
      const users = await accounts.listLiveUsers(principal.workspaceId);
      return users.map((u) => ({ id: u.id, email: u.email, role: u.role, created_at: u.created_at }));
    },

    async createUser(principal: Principal, input: { email: string; role: Role }) {
      if (input.role === 'owner' && principal.role !== 'owner') throw forbidden('Only an owner may add another owner.');
      const email = input.email.trim();
      if (await accounts.findLiveUserByEmail(principal.workspaceId, email)) {
        throw new AppError('conflict', `A user with the email ${email} already exists in this workspace.`);
      }
      const token = newToken();
      const user = await accounts.createUserWithToken({
        userId: randomUUID(),
        workspaceId: principal.workspaceId,
        email,
        role: input.role,
        tokenId: token.id,
        tokenHash: token.hash,
      });
      return { user: { id: user.id, email: user.email, role: user.role }, token: token.token };
    },

    async revokeUser(principal: Principal, userId: string): Promise<void> {
      const user = await accounts.findLiveUser(principal.workspaceId, userId);
      if (!user) throw notFound('The user');
      if (user.role === 'owner') {
        if (principal.role !== 'owner') throw forbidden('Only an owner may remove an owner.');
        if ((await accounts.countLiveOwners(principal.workspaceId)) <= 1) {
          throw new AppError('conflict', 'This is the last owner of the workspace; add another owner first.');
        }
      }
      await accounts.revokeUser(user.id, now());
    },

    async issueToken(principal: Principal): Promise<{ token: string }> {
      const token = newToken();
      await accounts.insertToken({ tokenId: token.id, userId: principal.userId, tokenHash: token.hash });
      return { token: token.token };
    },

    async revokeCurrentToken(principal: Principal): Promise<void> {
      await accounts.revokeToken(principal.tokenId, now());
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
