/**
 * The composition root's people (src/app/service.ts): sign-in (passwords, invite links, failed attempts slowed down),
 * the accounts and workspaces, the live streams' token checks, API keys, and the one mailer that sends their emails.
 */
import type { OpenedDatabase } from '../../db/database.ts';
import { accountsRepository } from '../../db/repositories/accounts.repository.ts';
import { apiKeysRepository } from '../../db/repositories/api-keys.repository.ts';
import { signInRepository } from '../../db/repositories/sign-in.repository.ts';
import { signInThrottleRepository } from '../../db/repositories/sign-in-throttle.repository.ts';
import { workspaceSettingsRepository } from '../../db/repositories/workspace-settings.repository.ts';
import { inviteEmail } from '../accounts/auth-emails.ts';
import { createAccountsService } from '../accounts/accounts-service.ts';
import { createSignInService } from '../accounts/sign-in-service.ts';
import { createApiKeysService } from '../auth/api-keys.ts';
import { createLoginThrottle } from '../auth/login-throttle.ts';
import { createStreamGuard } from '../auth/stream-guard.ts';
import { createMailer } from '../email/mailer.ts';
import type { ServiceOptions } from './options.ts';

export interface AccountsInput {
  options: Pick<ServiceOptions, 'config' | 'logger' | 'signIn' | 'streams'>;
  database: OpenedDatabase;
}

export type Accounts = ReturnType<typeof createAccounts>;

export function createAccounts(input: AccountsInput) {
  const { options, database } = input;
  const { config, logger } = options;
  // Sign-in for people: passwords, invite links, failed attempts slowed down per email and per address.
  const throttle = createLoginThrottle({
    repository: signInThrottleRepository(database.db),
    ...options.signIn,
    onSweepError: (err) => logger.warn({ err }, 'forgetting old sign-in failures failed; the next sweep tries again'),
  });
  // The one mailer (SMTP_URL): invites and password resets here, replies to web chat visitors who left (src/app/channels.ts).
  const mailer = createMailer(config.smtp);
  const signIn = createSignInService({ repository: signInRepository(database.db), throttle, publicUrl: config.publicUrl, mailer, logger });
  const workspaceNames = workspaceSettingsRepository(database.db);
  const accounts = createAccountsService({
    accounts: accountsRepository(database.db),
    invites: signIn,
    emailInvite: ({ to, workspaceId, invite }) => {
      if (!mailer.configured) return false;
      void workspaceNames
        .find(workspaceId)
        .then((workspace) => mailer.send(inviteEmail({ to, workspace: workspace?.name ?? 'your workspace', link: invite.invite_url, expiresAt: invite.expires_at })))
        // Never the link in a log line: it sets the password.
        .catch((err: unknown) => logger.warn({ workspaceId, reason: err instanceof Error ? err.message : String(err) }, 'an invite email could not be sent; the link was shown to whoever made it'));
      return true;
    },
  });
  const streams = createStreamGuard({ liveTokenIds: (ids) => accounts.liveTokenIds(ids), logger, ...options.streams });
  const apiKeys = createApiKeysService({ apiKeys: apiKeysRepository(database.db) });
  return { mailer, signIn, accounts, streams, apiKeys };
}
