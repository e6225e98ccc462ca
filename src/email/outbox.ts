/**
 * The email outbox (docs/operations.md, "Email"): an email is stored first (so a reply the API acknowledged is not
 * lost when SMTP is down for a while), then sent by whichever engine claims it, and tried again with a growing wait
 * (EMAIL_RETRY_BASE_MS doubling up to EMAIL_RETRY_MAX_MS) until MAX_EMAIL_ATTEMPTS; a permanent refusal (5xx) ends it
 * at once. Nothing is sent while SMTP_URL is unset, and nothing is stored then either.
 */
import { randomUUID } from 'node:crypto';
import type { EmailOutboxRepository, NewEmail } from '../../db/repositories/email-outbox.repository.ts';
import { errorText } from '../errors.ts';
import type { Logger } from '../log.ts';
import { EMAIL_BATCH, EMAIL_CLAIM_MS, EMAIL_POLL_MS, EMAIL_RETRY_BASE_MS, EMAIL_RETRY_MAX_MS, MAX_EMAIL_ATTEMPTS } from './limits.ts';
import { MailError, type Mailer, type MailMessage } from './mailer.ts';

export interface EmailOutboxDeps {
  repository: EmailOutboxRepository;
  mailer: Mailer;
  logger: Logger;
  pollMs?: number;
  retryBaseMs?: number;
  now?: () => number;
}

export function createEmailOutbox(deps: EmailOutboxDeps) {
  const { repository, mailer } = deps;
  const now = deps.now ?? Date.now;
  const pollMs = deps.pollMs ?? EMAIL_POLL_MS;
  const retryBaseMs = deps.retryBaseMs ?? EMAIL_RETRY_BASE_MS;
  const log = deps.logger.child({ component: 'email' });
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = true;

  async function sendDue(): Promise<void> {
    do {
      again = false;
      const at = now();
      const claimed = await repository.claim(new Date(at), new Date(at + EMAIL_CLAIM_MS), EMAIL_BATCH);
      for (const row of claimed) {
        try {
          await mailer.send({ to: row.to_address, subject: row.subject, text: row.text_body, html: row.html_body });
          await repository.sent(row.id, new Date(now()));
          log.info({ emailId: row.id, kind: row.kind, workspaceId: row.workspace_id }, 'email sent');
        } catch (err) {
          const reason = err instanceof MailError ? err.message : errorText(err);
          const permanent = err instanceof MailError && err.permanent;
          if (permanent || row.attempts >= MAX_EMAIL_ATTEMPTS) {
            await repository.failed(row.id, new Date(now()), reason);
            log.warn({ emailId: row.id, kind: row.kind, attempts: row.attempts, reason }, 'email given up');
          } else {
            const wait = Math.min(EMAIL_RETRY_MAX_MS, retryBaseMs * 2 ** (row.attempts - 1));
            await repository.retryAt(row.id, new Date(now() + wait), reason);
            log.warn({ emailId: row.id, kind: row.kind, attempts: row.attempts, retryInMs: wait, reason }, 'email not sent; it is tried again');
          }
        }
      }
      if (claimed.length === EMAIL_BATCH) again = true;
    } while (again && !stopped);
  }

  function run(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = sendDue()
      .catch((err: unknown) => log.error({ err: errorText(err) }, 'the email outbox could not be read'))
      .finally(() => {
        running = null;
      });
    return running;
  }

  return {
    get configured(): boolean {
      return mailer.configured;
    },

    /** Stores an email and wakes the sender; false (nothing stored) when SMTP is not set. */
    async enqueue(email: Omit<NewEmail, 'id' | 'created_at'> & MailMessageParts): Promise<boolean> {
      if (!mailer.configured) return false;
      await repository.insert({ ...email, id: randomUUID(), created_at: new Date(now()) });
      if (!stopped) void run();
      return true;
    },

    /** Sends what is due now (the poll does it every pollMs; tests call it). */
    run,

    start(): void {
      if (!mailer.configured || timer) return;
      stopped = false;
      timer = setInterval(() => void run(), pollMs);
      timer.unref();
      void run();
    },

    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      await running;
      mailer.close();
    },
  };
}

/** What the outbox stores of a message besides its addressee. */
type MailMessageParts = Pick<NewEmail, 'to_address' | 'subject' | 'text_body' | 'html_body'>;
export type { MailMessage };
export type EmailOutbox = ReturnType<typeof createEmailOutbox>;
