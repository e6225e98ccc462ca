/**
 * First start on an empty embedded database: a workspace and its owner, whose invite link (to set a password and sign
 * in to the dashboard) and token (for scripts and curl) are printed this once.
 */
import type { AccountsService, CreatedWorkspace } from './accounts/accounts-service.ts';
import { FIRST_WORKSPACE } from './accounts/first-workspace.ts';

/**
 * The first workspace and its owner. `BOTLINK_OWNER_EMAIL` and `BOTLINK_WORKSPACE_NAME` (README, Settings) name them;
 * without them the placeholders of src/accounts/first-workspace.ts, which the owner changes later on the dashboard's Workspace screen.
 */
export async function createFirstWorkspace(
  accounts: AccountsService,
  first: { email: string | null; workspaceName: string | null } = { email: null, workspaceName: null },
): Promise<CreatedWorkspace | null> {
  if (!(await accounts.isEmpty())) return null;
  return accounts.createWorkspace({ name: first.workspaceName ?? FIRST_WORKSPACE.name, ownerEmail: first.email ?? FIRST_WORKSPACE.ownerEmail });
}

/** The first owner's way in: a password through the invite link. */
export function signInLine(inviteUrl: string): string {
  return `Sign in: open ${inviteUrl}\n         and choose a password (the link works once, for 7 days).`;
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
    lines.push('  Sign in with your email and password; a forgotten password: "Forgot your password?" (with SMTP_URL) or a new invite link from an owner or admin on Users.', '');
    return lines.join('\n');
  }
  lines.push(
    '',
    'First start: a workspace was made for you.',
    `  Workspace:  ${created.workspace.name}` + (created.workspace.name === FIRST_WORKSPACE.name ? '  (rename it on the dashboard: Workspace)' : ''),
    `  Owner:      ${created.owner.email}` + (created.owner.email === FIRST_WORKSPACE.ownerEmail ? '  (change it on the dashboard: Workspace; or set BOTLINK_OWNER_EMAIL before the first start)' : ''),
    `  Token:      ${created.owner.token}`,
    '              for scripts and curl; shown this once (stored only as a hash), so keep it somewhere safe.',
    `              Try it: curl -s ${here}/v1/workspace -H "Authorization: Bearer <the token>"`,
    '',
    'Next steps: the Overview lists them and ticks each one as it is done (README, A tour):',
    '  1. Knowledge: add your website, a file or a page, so the bot knows your shop (it knows nothing yet).',
    '  2. Knowledge: try a question as a customer would ask it.',
    '  3. Channels: switch the website chat on for your site and paste its line into your pages.',
    '  4. Users: invite a colleague; Inbox: say who is available to answer.',
    '  Links that start with http://localhost work on this computer only: README, "Put it online".',
    '',
  );
  // Last, so it is what the terminal shows when the start is done (and main.ts says it again after a minute).
  if (created.owner.invite_url) lines.push(signInLine(created.owner.invite_url), '');
  return lines.join('\n');
}
