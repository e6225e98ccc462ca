/** What WhatsApp's queues share (migration 0007; the claiming rule is in whatsapp.repository.ts): the statuses' order, the lease deadline. */
import { sql } from 'kysely';
import type { WhatsappOutboundStatus } from '../schema.ts';

/** The order delivery statuses move in; a status never replaces a higher one (read never goes back to delivered). */
export const STATUS_RANK: Readonly<Record<WhatsappOutboundStatus, number>> = {
  queued: 0,
  accepted: 1,
  sent: 2,
  // A failure reported after `sent` is news; one reported after `delivered` or `read` is not believed.
  failed: 3,
  delivered: 4,
  read: 5,
};

export const interval = (ms: number) => sql<Date>`now() + ${`${Math.round(ms)} milliseconds`}::interval`;
