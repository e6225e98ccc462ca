/**
 * The email outbox (migration 0032; src/email/outbox.ts): emails stored before anything is sent, claimed by one engine
 * at a time (a claim moves next_attempt_at past the claim's end, FOR UPDATE SKIP LOCKED keeps engines apart), and
 * marked sent, retried later, or given up.
 */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { EmailOutboxRow } from '../schema.ts';

export interface NewEmail {
  id: string;
  workspace_id: string | null;
  kind: string;
  session_id: string | null;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  created_at: Date;
}

export function emailOutboxRepository(db: Db) {
  return {
    async insert(row: NewEmail): Promise<void> {
      await db.insertInto('email_outbox').values({ ...row, next_attempt_at: row.created_at, sent_at: null, failed_at: null, last_error: null }).execute();
    },

    /** Up to `limit` emails due at `now`, claimed until `claimUntil`. */
    async claim(now: Date, claimUntil: Date, limit: number): Promise<EmailOutboxRow[]> {
      const { rows } = await sql<EmailOutboxRow>`
        update email_outbox set next_attempt_at = ${claimUntil}, attempts = attempts + 1
        where id in (
          select id from email_outbox
          where sent_at is null and failed_at is null and next_attempt_at <= ${now}
          order by next_attempt_at
          limit ${limit}
          for update skip locked
        )
        returning *
      `.execute(db);
      return rows;
    },

    async sent(id: string, at: Date): Promise<void> {
      await db.updateTable('email_outbox').set({ sent_at: at, last_error: null }).where('id', '=', id).execute();
    },

    async retryAt(id: string, at: Date, error: string): Promise<void> {
      await db.updateTable('email_outbox').set({ next_attempt_at: at, last_error: error }).where('id', '=', id).execute();
    },

    async failed(id: string, at: Date, error: string): Promise<void> {
      await db.updateTable('email_outbox').set({ failed_at: at, last_error: error }).where('id', '=', id).execute();
    },

    /** The emails of a conversation (tests, support). */
    async ofSession(sessionId: string): Promise<EmailOutboxRow[]> {
      return db.selectFrom('email_outbox').selectAll().where('session_id', '=', sessionId).orderBy('created_at').execute();
    },
  };
}

export type EmailOutboxRepository = ReturnType<typeof emailOutboxRepository>;
