/** `user list | add | remove`: a workspace's users, under the API's rules (POST /v1/users, DELETE /v1/users/{id}). */
import { roles, type Role } from '../../db/schema.ts';
import { emailOption, print, table, UsageError, withServices, workspaceOption, type CliCommand } from './context.ts';

export const userCommands: CliCommand[] = [
  {
    name: 'user list',
    usage: 'user list --workspace <id> [--json]   its users, their names, roles and whether each set a password',
    async run(values) {
      const workspace = workspaceOption(values);
      const users = await withServices(async ({ accounts }) => accounts.listUsers(await accounts.operatorOf(workspace)));
      const json = users.map((u) => ({ ...u, created_at: new Date(u.created_at).toISOString() }));
      print(values, { users: json }, () =>
        table(
          ['EMAIL', 'NAME', 'ROLE', 'CREATED', 'PASSWORD'],
          json.map((u) => [u.email, u.name ?? '-', u.role, u.created_at.slice(0, 10), u.password_set ? 'set' : 'invited']),
        ),
      );
      return 0;
    },
  },
  {
    name: 'user add',
    usage: `user add --workspace <id> --email <email> --role ${roles.join('|')} [--name <name>] [--json]   the invite link, once (no token: \`token create\` makes one)`,
    async run(values) {
      const workspace = workspaceOption(values);
      const email = emailOption(values);
      const role = values.role;
      if (!role || !(roles as readonly string[]).includes(role)) throw new UsageError(`--role must be one of ${roles.join(', ')}.`);
      const created = await withServices(async ({ accounts }) =>
        accounts.createUser(await accounts.operatorOf(workspace), { email, role: role as Role, name: values.name ?? null }),
      );
      print(values, created, () => [
        `Added ${created.user.email} as ${created.user.role} (${created.user.id}); shown this once:`,
        `  invite: ${created.invite_url ?? '(none)'}`,
      ]);
      return 0;
    },
  },
  {
    name: 'user remove',
    usage: 'user remove --workspace <id> --email <email> [--json]   revokes the user and their tokens (never the last owner)',
    async run(values) {
      const workspace = workspaceOption(values);
      const email = emailOption(values);
      const removed = await withServices(async ({ accounts }) => {
        const user = await accounts.userByEmail(workspace, email);
        await accounts.revokeUser(await accounts.operatorOf(workspace), user.userId);
        return { id: user.userId, email: user.email, role: user.role };
      });
      print(values, { removed }, () => [`Removed ${removed.email} (${removed.role}); their tokens no longer work.`]);
      return 0;
    },
  },
];
