/**
 * First start on an empty embedded database: a workspace and its owner, whose invite link (to set a password and sign
 * in to the dashboard) and token (for scripts and curl) are printed this once.
 */
import type { AccountsService, CreatedWorkspace } from './accounts/accounts-service.ts';

export const FIRST_WORKSPACE = { name: 'My workspace', ownerEmail: 'owner@example.com' } as const;

/**
 * The first workspace and its owner. `BOTLINK_OWNER_EMAIL` and `BOTLINK_WORKSPACE_NAME` (README, Settings) name them;
 * without them the placeholders above, which the owner changes later on the dashboard's Workspace screen.
 */
export async function createFirstWorkspace(
  accounts: AccountsService,
  first: { email: string | null; workspaceName: string | null } = { email: null, workspaceName: null },
): Promise<CreatedWorkspace | null> {
  if (!(await accounts.isEmpty())) return null;
  return accounts.createWorkspace({ name: first.workspaceName ?? FIRST_WORKSPACE.name, ownerEmail: first.email ?? FIRST_WORKSPACE.ownerEmail });
}

export function firstStartMessage(created: CreatedWorkspace, url: string, publicUrl: string): string {
  return [
    '',
    'Botlink: first start on an empty database, so a workspace was created for you.',
    `  workspace:   ${created.workspace.name} (${created.workspace.id})`,
    `  owner:       ${created.owner.email}`,
    `  owner token: ${created.owner.token}`,
    '  This token is shown once; keep it somewhere safe (it is stored only as a hash).',
    '',
    `  Dashboard:   ${publicUrl}/dashboard`,
    ...(created.owner.invite_url
      ? [`  Sign in:     open ${created.owner.invite_url}`, '               and choose a password (the link works once, for 7 days).']
      : []),
    '',
    `  Dashboard API: ${publicUrl}/v1  (description: ${publicUrl}/openapi.json)`,
    '  Next: connect your endpoint and press Test:',
    `    export TOKEN=${created.owner.token}`,
    `    curl -X PUT ${url}/v1/integration -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \\`,
    `         -d '{"endpoint_url":"https://your-system.example.com/botlink/channel"}'`,
    `    curl -X POST ${url}/v1/integration/test -H "Authorization: Bearer $TOKEN"`,
    '',
  ].join('\n');
}
