/** `workspace create | restore-owner | list | disable | enable`: the operator's view of every workspace. */
import type { WorkspaceSummary } from '../../db/repositories/accounts.repository.ts';
import { emailOption, print, table, UsageError, withServices, workspaceOption, type CliCommand } from './context.ts';

/** The operator's note on a disabled workspace: one line, short. */
const MAX_REASON_CHARS = 500;

function summaryJson(w: WorkspaceSummary) {
  return {
    id: w.id,
    name: w.name,
    created_at: w.created_at.toISOString(),
    owners: w.owners,
    users: w.users,
    disabled_at: w.disabled_at?.toISOString() ?? null,
    disabled_reason: w.disabled_reason,
  };
}

const state = (w: WorkspaceSummary) => (w.disabled_at ? `disabled ${w.disabled_at.toISOString().slice(0, 10)}${w.disabled_reason ? ` (${w.disabled_reason})` : ''}` : 'enabled');

export const workspaceCommands: CliCommand[] = [
  {
    name: 'workspace create',
    usage: 'workspace create --name <name> --owner <email> [--json]   a workspace and its owner: token and invite link, once',
    async run(values) {
      const name = values.name?.trim();
      if (!name) throw new UsageError('--name is required.');
      const owner = emailOption(values, 'owner');
      const created = await withServices(({ accounts }) => accounts.createWorkspace({ name, ownerEmail: owner }));
      const answer = { workspace: created.workspace, owner: { email: created.owner.email, token: created.owner.token, invite_url: created.owner.invite_url } };
      print(values, answer, () => [
        `Created workspace ${created.workspace.name} (${created.workspace.id}).`,
        `Owner ${owner}; shown this once:`,
        `  token:  ${created.owner.token}`,
        `  invite: ${created.owner.invite_url ?? '(none)'}`,
      ]);
      return 0;
    },
  },
  {
    name: 'workspace restore-owner',
    usage: 'workspace restore-owner --workspace <id> --email <email> [--json]   that user becomes an owner (or is added as one)',
    async run(values) {
      const workspace = workspaceOption(values);
      const email = emailOption(values);
      const restored = await withServices(({ accounts }) => accounts.restoreOwner(workspace, email));
      print(values, restored, () => [
        `${email} is ${restored.owner.created ? 'a new' : 'now an'} owner of ${workspace}; shown this once:`,
        `  token:  ${restored.owner.token}`,
        `  invite: ${restored.owner.invite_url ?? '(none)'}`,
      ]);
      return 0;
    },
  },
  {
    name: 'workspace list',
    usage: 'workspace list [--json]   every workspace: id, name, created, owners, users, disabled',
    async run(values) {
      const workspaces = await withServices(({ accounts }) => accounts.listWorkspaces());
      print(values, { workspaces: workspaces.map(summaryJson) }, () =>
        workspaces.length === 0
          ? ['No workspaces yet (workspace create).']
          : table(
              ['ID', 'NAME', 'CREATED', 'OWNERS', 'USERS', 'STATE'],
              workspaces.map((w) => [w.id, w.name, w.created_at.toISOString().slice(0, 10), w.owners.join(', ') || '(none)', String(w.users), state(w)]),
            ),
      );
      return 0;
    },
  },
  {
    name: 'workspace disable',
    usage: 'workspace disable --workspace <id> [--reason <text>] [--json]   refuse its tokens, keys, sign-in and channels',
    async run(values) {
      const workspace = workspaceOption(values);
      const reason = values.reason?.trim() || null;
      if (reason !== null && reason.length > MAX_REASON_CHARS) throw new UsageError(`--reason takes at most ${MAX_REASON_CHARS} characters.`);
      const disabled = await withServices(({ accounts }) => accounts.disableWorkspace(workspace, reason));
      print(values, { workspace: summaryJson(disabled) }, () => [`Disabled ${disabled.name} (${disabled.id}): ${state(disabled)}.`]);
      return 0;
    },
  },
  {
    name: 'workspace enable',
    usage: 'workspace enable --workspace <id> [--json]   serve a disabled workspace again',
    async run(values) {
      const workspace = workspaceOption(values);
      const enabled = await withServices(({ accounts }) => accounts.enableWorkspace(workspace));
      print(values, { workspace: summaryJson(enabled) }, () => [`Enabled ${enabled.name} (${enabled.id}).`]);
      return 0;
    },
  },
];
