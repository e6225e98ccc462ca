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
import { accountKeyOfEmail, accountKeyOfUser, type AccountKey, type LoginThrottle } from '../auth/login-throttle.ts';
import { hashToken, newToken } from '../auth/tokens.ts';
import { AppError, workspaceDisabled } from '../errors.ts';
import { INVITE_TTL_MS, LOGIN_HASHES_PER_ADDRESS, LOGIN_HASHES_PER_EMAIL, LOGIN_TOKEN_TTL_SECONDS, MAX_TOKENS_PER_USER, RESET_ADDRESS_RATE_LIMIT, RESET_RATE_LIMIT, RESET_TTL_MS } from '../limits.ts';
import type { Mailer } from '../email/mailer.ts';
import type { Logger } from '../log.ts';
import { createRateLimiter } from '../rate-limiter.ts';
import { resetEmail } from './auth-emails.ts';
import { readUserName } from './display-name.ts';

export interface SignedIn {
  token: string;
  expires_at: string;
  user: { id: string; email: string; name: string | null; role: Role };
  /** `time_zone`: the dashboard shows every time in it (null: not chosen; the browser's). */
  workspace: { id: string; name: string; time_zone: string | null };
}

export interface Invite {
  /** `{PUBLIC_URL}/dashboard/invite#<token>`: in the fragment, so the token is never sent in a request or logged. */
  invite_url: string;
  expires_at: string;
}

/** The one answer to a wrong email or a wrong password: it does not say which. */
export const WRONG_CREDENTIALS = 'The email or password is not right.';

const INVITE_PREFIX = 'bli_';

const rateLimited = (wait: number): AppError =>
  new AppError('rate_limited', `Too many failed sign-ins; try again in ${wait} second${wait === 1 ? '' : 's'}.`, { retry_after: wait });

/**
 * Sign-ins waiting for or running a password hash in this process, per client address and per email: beyond
 * LOGIN_HASHES_PER_ADDRESS / LOGIN_HASHES_PER_EMAIL a further one is turned away at once, so one client's burst holds
 * at most that many places in the hashing queue every other user's sign-in waits in (docs/reliability.md).
 */
function hashSlots() {
  const inFlight = new Map<string, number>();
  const add = (key: string, n: number) => {
    const next = (inFlight.get(key) ?? 0) + n;
    if (next <= 0) inFlight.delete(key);
    else inFlight.set(key, next);
  };
  const take = (key: string, most: number): (() => void) | null => {
    if ((inFlight.get(key) ?? 0) >= most) return null;
    add(key, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      add(key, -1);
    };
  };
  return {
    /** A place for this address; null when it holds its most already. Call the answer to give it back. */
    address: (address: string) => take(`address:${address}`, LOGIN_HASHES_PER_ADDRESS),
    /** A place for this email; null when it holds its most already. */
    email: (email: string) => take(`email:${email}`, LOGIN_HASHES_PER_EMAIL),
  };
}

export function createSignInService(deps: {
  repository: SignInRepository;
  throttle: LoginThrottle;
  publicUrl: string;
  /** Sends password-reset links (SMTP_URL); without SMTP a reset asked for sends nothing. */
  mailer?: Mailer;
  logger?: Logger;
  now?: () => Date;
}) {
  // Password resets per address and per email: each may send an email, so a burst and then a slow trickle.
  const resetsPerEmail = createRateLimiter(RESET_RATE_LIMIT);
  const resetsPerAddress = createRateLimiter(RESET_ADDRESS_RATE_LIMIT);
  const { repository, throttle } = deps;
  const now = deps.now ?? (() => new Date());
  const slots = hashSlots();

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
     * against each account found with a password that the throttle lets through (src/auth/login-throttle.ts: the
     * attempt is counted before any hash and refunded when right). One match signs in; several are a 409 that names
     * those workspaces (the caller proved the password for each), to be sent again with `workspace_id`.
     */
    async login(input: { email: string; password: string; workspaceId?: string; address: string }): Promise<SignedIn> {
      const email = input.email.trim().toLowerCase();
      const busy = () => new AppError('rate_limited', 'Too many sign-ins at once for this email or from this address; try again in 1 second.', { retry_after: 1 });
      const releases: (() => void)[] = [];
      const place = (release: (() => void) | null) => {
        if (!release) throw busy();
        releases.push(release);
      };
      let matched;
      try {
        place(slots.address(input.address));
        const candidates = await repository.findCandidates(email, input.workspaceId);
        const known = await throttle.knownAt(candidates.map((c) => c.userId), input.address);
        // The email's places bound a burst at one account; its user, from where they signed in before, needs none.
        if (known.size === 0) place(slots.email(email));
        const accounts: AccountKey[] =
          candidates.length === 0
            ? [{ key: accountKeyOfEmail(email), known: false }]
            : candidates.map((c) => ({ key: accountKeyOfUser(c.userId), known: known.has(c.userId) }));
        const reservation = await throttle.reserve({ address: input.address, accounts, refusalKey: `${input.address}\n${email}\n${input.workspaceId ?? ''}` });
        if (!reservation.reserved) throw rateLimited(reservation.retryAfterSeconds);
        const open = new Set(reservation.accounts.map((a) => a.key));
        const checked = candidates.filter((c) => open.has(accountKeyOfUser(c.userId)));
        matched = [];
        try {
          for (const candidate of checked) {
            const order = { first: known.has(candidate.userId), lane: input.address };
            if (await verifyPassword(input.password, candidate.passwordHash, order)) matched.push(candidate);
          }
          if (checked.length === 0) await verifyDummy(input.password, { lane: input.address });
        } catch (err) {
          await throttle.settle(reservation, null);
          throw err;
        }
        await throttle.settle(reservation, matched.map((m) => ({ key: accountKeyOfUser(m.userId), userId: m.userId })));
      } finally {
        for (const release of releases) release();
      }
      if (matched.length === 0) throw new AppError('unauthorized', WRONG_CREDENTIALS);
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
        user: { id: user.userId, email: user.email, name: user.name, role: user.role },
        workspace: { id: user.workspaceId, name: user.workspaceName, time_zone: user.timeZone },
      };
    },

    /**
     * "Forgot password" (POST /v1/auth/reset): for each live user with this email and a password, in a workspace that
     * is not disabled, a one-time link that sets a new password (an invite of RESET_TTL_MS, which replaces their older
     * unused links) is emailed. The caller learns nothing of whether the email exists: the sending happens after the
     * answer, and the limits are per address and per email whether or not it does.
     */
    requestReset(input: { email: string; address: string }): void {
      const email = input.email.trim().toLowerCase();
      const message = (seconds: number) => `Too many password resets asked; try again in ${seconds} s.`;
      resetsPerAddress.takeOrRefuse(input.address, message);
      resetsPerEmail.takeOrRefuse(email, message);
      const mailer = deps.mailer;
      if (!mailer?.configured) {
        deps.logger?.info('a password reset was asked, but SMTP_URL is not set: nothing is sent');
        return;
      }
      void (async () => {
        const candidates = (await repository.findCandidates(email)).filter((c) => !c.workspaceDisabled);
        for (const candidate of candidates) {
          const token = INVITE_PREFIX + randomBytes(32).toString('base64url');
          const at = now();
          const expiresAt = new Date(at.getTime() + RESET_TTL_MS);
          await repository.createInvite({ id: randomUUID(), userId: candidate.userId, tokenHash: hashToken(token), expiresAt, at, createdBy: null });
          await mailer.send(resetEmail({ to: candidate.email, workspace: candidate.workspaceName, link: `${deps.publicUrl}/dashboard/reset#${token}` }));
        }
      })().catch((err: unknown) => deps.logger?.warn({ reason: err instanceof Error ? err.message : String(err) }, 'a password-reset email could not be sent'));
    },

    /**
     * Sets the password of the invite's user, uses the invite up, and signs the user in; with `name`, the name they
     * give themselves too (empty removes it).
     */
    async setPassword(input: { invite: string; password: string; name?: string | null }): Promise<SignedIn> {
      const problem = passwordProblem(input.password);
      if (problem) throw new AppError('validation_failed', problem, [{ field: 'password', message: problem }]);
      const name = input.name === undefined ? undefined : readUserName(input.name);
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
      const redeemed = await repository.redeemInvite({ inviteId: invite.id, passwordHash, token: record, at: now(), ...(name === undefined ? {} : { name }) });
      if (typeof redeemed === 'string') throw refused(redeemed);
      return { token, expires_at: record.expiresAt.toISOString(), ...redeemed };
    },
  };
}

export type SignInService = ReturnType<typeof createSignInService>;
