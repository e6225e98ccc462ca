/** The WhatsApp worker's third stage (docs/whatsapp.md): a reply is sent, retried on a transient failure. */
import type { WhatsappOutboundMessage } from '../../../db/schema.ts';
import type { Lease } from '../../leases/lease-keeper.ts';
import { jitteredDelay, parseRetryAfter, retryDelay } from '../../net/retry-schedule.ts';
import { SEND_MAX_RETRY_AFTER_MS, SEND_RETRY_DELAYS_MS, SEND_RETRY_JITTER } from './limits.ts';
import type { WorkerContext } from './worker-context.ts';
import type { ReplyButton } from './graph-client.ts';
import { isObject } from '../../json-value.ts';

export function createSendStage(ctx: WorkerContext) {
  const { repository, settings, graph, metrics } = ctx.options;
  const { options, log, owner, now, state, wakeAfter } = ctx;
  const retryDelays = options.retryDelaysMs ?? SEND_RETRY_DELAYS_MS;
  const random = options.random ?? Math.random;

  async function deliver(row: WhatsappOutboundMessage, lease: Lease): Promise<void> {
    try {
      await send(row, lease);
    } finally {
      lease.end();
    }
  }

  async function send(row: WhatsappOutboundMessage, lease: Lease): Promise<void> {
    const sendLog = log.child({ workspaceId: row.workspace_id, outboundId: row.id });
    const attempt = row.attempts + 1;
    try {
      const credentials = await settings.credentials(row.workspace_id);
      if (!credentials) {
        metrics?.sends.inc({ result: 'failed' });
        await repository.markFailed(row.id, owner, { httpStatus: null, code: null, detail: 'The workspace has no WhatsApp settings any more.' });
        return;
      }
      const outcome = await graph.send({
        phoneNumberId: row.phone_number_id,
        accessToken: credentials.accessToken,
        to: row.wa_id,
        body: row.body,
        // The satisfaction question's reply buttons (kind survey); none: a text message.
        buttons: replyButtons(row.buttons),
        // Stopping, or the lease lost (another engine sends it now): this request is cancelled.
        signal: AbortSignal.any([state.stopSends.signal, lease.signal]),
      });
      if (outcome.ok) {
        metrics?.sends.inc({ result: 'accepted' });
        await repository.markAccepted(row.id, owner, outcome.messageId, outcome.httpStatus);
        if (row.kind === 'agent') options.onDelivery?.({ workspaceId: row.workspace_id, outboundId: row.id });
        return;
      }
      const failure = { httpStatus: outcome.httpStatus, code: outcome.code, detail: outcome.detail };
      if (outcome.reason === 'aborted') {
        // Stopping (the next process, or this one after a restart, sends it when the lease runs out), or taken over.
        return;
      }
      const scheduled = outcome.retryable ? jitteredDelay(retryDelays, attempt - 1, SEND_RETRY_JITTER, random()) : null;
      if (scheduled !== null) {
        const delay = retryDelay(scheduled, parseRetryAfter(outcome.retryAfter, now()), SEND_MAX_RETRY_AFTER_MS);
        sendLog.warn({ httpStatus: outcome.httpStatus, code: outcome.code, reason: outcome.reason, attempt, retryInMs: delay }, 'WhatsApp send failed; retrying');
        metrics?.sends.inc({ result: 'retry' });
        await repository.markRetry(row.id, owner, delay, failure);
        wakeAfter(delay);
        return;
      }
      // 131047 (outside the 24-hour window), other 4xx, or the retries used up: recorded on the row, not retried.
      sendLog.warn({ httpStatus: outcome.httpStatus, code: outcome.code, reason: outcome.reason, attempt }, 'WhatsApp send failed; not retried');
      metrics?.sends.inc({ result: 'failed' });
      await repository.markFailed(row.id, owner, failure);
      if (row.kind === 'agent') options.onDelivery?.({ workspaceId: row.workspace_id, outboundId: row.id });
    } catch (err) {
      sendLog.warn({ err }, 'WhatsApp send could not be recorded; it is tried again when its lease runs out');
    }
  }

  return deliver;
}

/** The row's `buttons` column (jsonb `[{id, title}]`, migration 0038) as the Graph client takes them; null without. */
function replyButtons(value: unknown): ReplyButton[] | null {
  const list: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  if (!Array.isArray(list)) return null;
  const buttons = list.filter((b): b is ReplyButton => isObject(b) && typeof b.id === 'string' && typeof b.title === 'string');
  return buttons.length === 0 ? null : buttons;
}
