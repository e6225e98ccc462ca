/**
 * The one mailer (docs/operations.md, "Email"): SMTP_URL and SMTP_FROM, through nodemailer. Replies to web chat
 * visitors who left use it now; invites and password resets can later. It only sends: what must not be lost goes
 * through the outbox (src/email/outbox.ts), which retries. The URL holds the password: it is never logged.
 */
import nodemailer from 'nodemailer';
import { SMTP_TIMEOUT_MS } from './limits.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  /** Whether SMTP is set (the dashboard shows it). */
  readonly configured: boolean;
  /** Sends one message; throws {@link MailError} when the server refused it or could not be reached. */
  send(message: MailMessage): Promise<void>;
  close(): void;
}

/** A send that failed; `permanent` when the server refused it for good (5xx), so trying again will not help. */
export class MailError extends Error {
  readonly permanent: boolean;
  constructor(message: string, permanent: boolean) {
    super(message);
    this.name = 'MailError';
    this.permanent = permanent;
  }
}

export function createMailer(smtp: { url: string; from: string } | null): Mailer {
  if (!smtp) {
    return {
      configured: false,
      send: () => Promise.reject(new MailError('SMTP_URL is not set.', false)),
      close() {},
    };
  }
  const url = new URL(smtp.url);
  const transport = nodemailer.createTransport({
    host: url.hostname,
    port: url.port ? Number(url.port) : url.protocol === 'smtps:' ? 465 : 587,
    secure: url.protocol === 'smtps:',
    ...(url.username ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } } : {}),
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
    // Never the URL or the password in a log line.
    logger: false,
  });
  return {
    configured: true,
    async send(message) {
      try {
        await transport.sendMail({ from: smtp.from, to: message.to, subject: message.subject, text: message.text, html: message.html });
      } catch (err) {
        const code = (err as { responseCode?: number }).responseCode;
        // The server's answer without the command that carried credentials.
        const reason = code ? `the SMTP server answered ${code}` : `the SMTP server could not be reached (${(err as { code?: string }).code ?? 'error'})`;
        throw new MailError(reason, code !== undefined && code >= 500 && code < 600);
      }
    },
    close() {
      transport.close();
    },
  };
}
