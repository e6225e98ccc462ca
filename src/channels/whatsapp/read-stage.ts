/** The WhatsApp worker's first stage (docs/whatsapp.md): a stored webhook body becomes customer messages and status changes. */
import { randomUUID } from 'node:crypto';
import type { NewInbound, StatusChange } from '../../../db/repositories/whatsapp.repository.ts';
import { MAX_EVENT_ATTEMPTS, STATUS_MATCH_WINDOW_MS, STATUS_RETRY_DELAY_MS } from './limits.ts';
import { parseWebhook, WebhookPayloadError } from './payload.ts';
import type { WorkerContext } from './worker-context.ts';

export function createReadStage(ctx: WorkerContext) {
  const { repository, settings, metrics } = ctx.options;
  const { options, log, owner, now, wakeAfter } = ctx;

  async function readEvent(event: { id: string; body: string; attempts: number; received_at: Date | string }): Promise<void> {
    const eventLog = log.child({ eventId: event.id });
    if (event.attempts > MAX_EVENT_ATTEMPTS) {
      eventLog.error({ attempts: event.attempts - 1 }, 'a stored WhatsApp webhook could not be read; given up');
      metrics?.events.inc({ outcome: 'failed' });
      await repository.finishEvent(event.id, owner, 'failed', `gave up after ${event.attempts - 1} attempts`);
      return;
    }
    let parsed;
    try {
      parsed = parseWebhook(event.body, new Date(now()));
    } catch (err) {
      if (!(err instanceof WebhookPayloadError)) throw err;
      // Signed by Meta yet not its shape: nothing to retry, kept for inspection.
      eventLog.warn({ reason: err.message }, 'a signed WhatsApp webhook is not a whatsapp_business_account payload; ignored');
      metrics?.events.inc({ outcome: 'invalid' });
      await repository.finishEvent(event.id, owner, 'invalid', err.message);
      return;
    }

    const workspaces = new Map<string, string | undefined>();
    const unknown = new Set<string>();
    const inbound: NewInbound[] = [];
    const statuses: StatusChange[] = [];
    for (const change of parsed.changes) {
      if (!workspaces.has(change.phoneNumberId)) workspaces.set(change.phoneNumberId, await settings.workspaceFor(change.phoneNumberId));
      const workspaceId = workspaces.get(change.phoneNumberId);
      if (workspaceId === undefined) {
        unknown.add(change.phoneNumberId);
        continue;
      }
      for (const m of change.messages) {
        inbound.push({
          id: randomUUID(),
          workspace_id: workspaceId,
          message_id: m.id,
          event_id: event.id,
          phone_number_id: change.phoneNumberId,
          wa_id: m.waId,
          type: m.type,
          text: m.text,
          reply_id: m.replyId,
          profile_name: m.profileName,
          sent_at: m.sentAt,
        });
      }
      for (const s of change.statuses) {
        statuses.push({
          workspaceId,
          messageId: s.messageId,
          status: s.status,
          at: s.at,
          errorCode: s.error?.code ?? null,
          errorTitle: s.error?.title ?? null,
        });
      }
    }
    if (parsed.skipped > 0) eventLog.warn({ skipped: parsed.skipped }, 'parts of a WhatsApp webhook could not be read and were skipped');
    if (unknown.size > 0) {
      // Answered 200 and kept: Meta would retry a refusal for days, and a number is connected by PUT /v1/whatsapp.
      eventLog.warn({ phoneNumberIds: [...unknown] }, 'WhatsApp webhook for a phone_number_id no workspace has connected; stored and ignored');
    }

    const outcome = inbound.length + statuses.length > 0 ? 'processed' : unknown.size > 0 ? 'unknown_number' : 'ignored';
    const detail = unknown.size > 0 ? `unknown phone_number_id ${[...unknown].join(', ')}` : null;
    // The body belongs to a workspace when it names one only: its retention then applies to it (docs/privacy.md).
    const named = new Set([...workspaces.values()].filter((w) => w !== undefined));
    const workspaceId = named.size === 1 ? [...named][0]! : null;
    if (outcome !== 'processed') {
      metrics?.events.inc({ outcome });
      await repository.finishEvent(event.id, owner, outcome, detail, workspaceId);
      return;
    }
    const young = now() - new Date(event.received_at).getTime() < STATUS_MATCH_WINDOW_MS;
    const result = await repository.applyEvent({
      eventId: event.id,
      owner,
      inbound,
      statuses,
      outcome,
      detail,
      deferUnmatchedMs: young ? STATUS_RETRY_DELAY_MS : null,
      workspaceId,
    });
    metrics?.events.inc({ outcome: result.deferred ? 'deferred' : outcome });
    if (options.onDelivery && statuses.length > 0) {
      for (const workspaceId of new Set(statuses.map((s) => s.workspaceId))) {
        options.onDelivery({ workspaceId, messageIds: statuses.filter((s) => s.workspaceId === workspaceId).map((s) => s.messageId) });
      }
    }
    if (result.deferred) wakeAfter(STATUS_RETRY_DELAY_MS);
    const duplicates = inbound.length - result.inserted;
    if (duplicates > 0) eventLog.debug({ duplicates }, 'WhatsApp messages seen before (a retry of Meta); skipped');
  }

  return readEvent;
}
