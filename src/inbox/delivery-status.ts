/**
 * The delivery status of agents' WhatsApp messages, shown live on the team's side (docs/interfaces.md, "The team's
 * side"): the WhatsApp worker's word that a send was answered or that Meta reported on messages becomes a
 * `message_status` on each message's session stream. Apart from the inbox service because the WhatsApp channel needs
 * it when it is built, and the inbox service needs the channel (its worker sends the agents' messages).
 */
import { inboxRepository } from '../../db/repositories/inbox.repository.ts';
import type { Db } from '../../db/database.ts';
import type { SessionRuntime } from '../sessions/session-runtime.ts';
import { messageStatus } from './inbox-service.ts';

/** Which outgoing rows may have a new status: one just sent (`outboundId`), or Meta's message ids in a status webhook. */
export interface DeliveryChange {
  workspaceId: string;
  outboundId?: string;
  messageIds?: string[];
}

export function createDeliveryStatus(deps: { db: Db; runtime: Pick<SessionRuntime, 'notify'> }) {
  const repo = inboxRepository(deps.db);
  /** Shows the current status of the agents' messages the change names on their sessions' streams. */
  return async function deliveryChanged(change: DeliveryChange): Promise<void> {
    for (const m of await repo.agentDeliveries(change.workspaceId, change)) {
      deps.runtime.notify({
        type: 'message_status',
        sessionId: m.session_id,
        message_id: m.id,
        status: messageStatus(m.status),
        failure: m.status === 'failed' ? { http_status: m.http_status, code: m.error_code, reason: m.error_detail } : null,
      });
    }
  };
}
