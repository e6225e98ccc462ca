/**
 * The emails that bring people into the dashboard (docs/operations.md, "Email"): an invite and a password reset.
 * Their links are one-time secrets: these emails are sent at once through the mailer and never stored in the email
 * outbox (a failed send is logged without the link; the invite link is still shown to whoever made it, and a reset can
 * be asked again).
 */
import type { MailMessage } from '../email/mailer.ts';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function message(to: string, subject: string, lines: string[], link: string): MailMessage {
  const text = [...lines, '', link, ''].join('\n');
  const html =
    lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('') + `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>`;
  return { to, subject, text, html };
}

export function inviteEmail(input: { to: string; workspace: string; link: string; expiresAt: string }): MailMessage {
  return message(
    input.to,
    `You are invited to ${input.workspace} on Botlink`,
    [
      `You were added to ${input.workspace}'s customer conversations on Botlink.`,
      `Open this link to choose your password and sign in. It works once, until ${new Date(input.expiresAt).toUTCString()}.`,
    ],
    input.link,
  );
}

export function resetEmail(input: { to: string; workspace: string; link: string }): MailMessage {
  return message(
    input.to,
    `Reset your Botlink password (${input.workspace})`,
    [
      `Somebody (we hope you) asked to reset the password you use for ${input.workspace} on Botlink.`,
      'Open this link to choose a new one. It works once, for 1 hour. If you did not ask, ignore this email: your password stays as it is.',
    ],
    input.link,
  );
}
