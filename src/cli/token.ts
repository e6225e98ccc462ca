/** `token create | revoke`: a user's bearer tokens (as POST /v1/tokens; revoking all of them ends their live streams). */
import { emailOption, print, UsageError, withServices, workspaceOption, type CliCommand } from './context.ts';

export const tokenCommands: CliCommand[] = [
  {
    name: 'token create',
    usage: 'token create --workspace <id> --email <email> [--json]   a new token for that user, shown once',
    async run(values) {
      const workspace = workspaceOption(values);
      const email = emailOption(values);
      const issued = await withServices(async ({ accounts }) => {
        const user = await accounts.userByEmail(workspace, email);
        return { email: user.email, ...(await accounts.issueToken(user)) };
      });
      print(values, issued, () => [`A new token for ${issued.email}; shown this once:`, `  token: ${issued.token}`]);
      return 0;
    },
  },
  {
    name: 'token revoke',
    usage: 'token revoke --workspace <id> --email <email> --all [--json]   revokes every token of that user',
    async run(values) {
      const workspace = workspaceOption(values);
      const email = emailOption(values);
      // One token is revoked by whoever holds it (DELETE /v1/tokens/current); the operator revokes them all.
      if (!values.all) throw new UsageError('token revoke needs --all: it revokes every token of that user.');
      const revoked = await withServices(async ({ accounts }) => {
        const user = await accounts.userByEmail(workspace, email);
        return { email: user.email, revoked: await accounts.revokeAllTokens(user) };
      });
      print(values, revoked, () => [`Revoked ${revoked.revoked} token${revoked.revoked === 1 ? '' : 's'} of ${revoked.email}.`]);
      return 0;
    },
  },
];
