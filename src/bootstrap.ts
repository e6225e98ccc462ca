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

/**
 * What a person reads at every start: where Botlink runs and where the dashboard is; on the first start also the
 * workspace, its owner's invite link and token, and next steps whose commands work on this machine as printed. The
 * addresses are PUBLIC_URL's; the commands use `local` (this machine's address) when PUBLIC_URL is not it.
 */
export function startMessage(options: {
  created: CreatedWorkspace | null;
  publicUrl: string;
  /** An address of the service on this machine (http://127.0.0.1:8080 for 0.0.0.0). */
  local: string;
  database: string;
}): string {
  const { created, publicUrl } = options;
  // One address for everything when PUBLIC_URL is this machine's default; otherwise the commands go to this machine.
  const here = /^http:\/\/localhost:\d+$/.test(publicUrl) ? publicUrl : options.local;
  const lines = ['', `Botlink is running: ${publicUrl}  (${options.database})`, `  Dashboard:  ${publicUrl}/dashboard`];
  if (!created) {
    lines.push('  Sign in with your email and password; a forgotten password: an owner or admin makes a new invite link on Users.', '');
    return lines.join('\n');
  }
  lines.push(
    '',
    'First start: a workspace was made for you.',
    `  Workspace:  ${created.workspace.name}` + (created.workspace.name === FIRST_WORKSPACE.name ? '  (rename it on the dashboard: Workspace)' : ''),
    `  Owner:      ${created.owner.email}` + (created.owner.email === FIRST_WORKSPACE.ownerEmail ? '  (change it on the dashboard: Workspace; or set BOTLINK_OWNER_EMAIL before the first start)' : ''),
    ...(created.owner.invite_url ? [`  Sign in:    open ${created.owner.invite_url}`, '              and choose a password (the link works once, for 7 days).'] : []),
    `  Token:      ${created.owner.token}`,
    '              for scripts and curl; shown this once (stored only as a hash), so keep it somewhere safe.',
    '',
    'Next steps (README, A tour):',
    '  1. Channels: switch the website chat on for your site and paste its line into your pages; add your phone number.',
    '  2. Integration (optional): connect your own system. To try the example order desk on this machine, start Botlink',
    '     with OUTBOUND_ALLOW=127.0.0.1/32 NODE_EXTRA_CA_CERTS=test/fixtures/tls/ca.pem, save',
    '     https://127.0.0.1:8443/botlink/channel there, and run: BOTLINK_KEY=<the key shown> npm run example:integrator',
    '  3. The same through the API (GET /openapi.json describes it):',
    `     export TOKEN=${created.owner.token}`,
    `     curl -s ${here}/v1/workspace -H "Authorization: Bearer $TOKEN"`,
    '',
  );
  return lines.join('\n');
}
