/** The WhatsApp worker's second stage (docs/whatsapp.md): a customer message is answered, in its customer's order. */
import { randomUUID } from 'node:crypto';
import type { WhatsappInboundMessage, WhatsappInboundOutcome } from '../../../db/schema.ts';
import { MAX_WHATSAPP_TEXT_CHARS } from '../../ai/limits.ts';
import type { Lease } from '../../leases/lease-keeper.ts';
import { detectLanguage } from '../../text/detect-language.ts';
import { CONVERSATION_IDLE_MS, MAX_INBOUND_ATTEMPTS, UNSUPPORTED_NOTICE_INTERVAL_MS } from './limits.ts';
import { e164 } from './payload.ts';
import { SILENT_TYPES } from './silent-types.ts';
import { phrase } from '../../ai/phrases.ts';
import type { Deliver, WorkerContext } from './worker-context.ts';
import type { SurveyTap } from './satisfaction.ts';
import type { SessionRuntime, TestConversation, TurnResult } from '../../sessions/session-runtime.ts';

export function createAnswerStage(ctx: WorkerContext, deliver: Deliver) {
  const { repository, runtime, metrics } = ctx.options;
  const { options, log, owner, state, track, wake, sendLeases } = ctx;
  const idleMs = options.conversationIdleMs ?? CONVERSATION_IDLE_MS;
  const sendLeaseMs = sendLeases.leaseMs;

  function answerInOrder(row: WhatsappInboundMessage, lease: Lease): void {
    state.turns++;
    const key = `${row.workspace_id}\u0000${row.wa_id}`;
    const previous = state.chains.get(key) ?? Promise.resolve();
    // Ended however the answer ends: finished (the lease given back with it) or left to run out and be tried again.
    const next = previous.then(() => answer(row, lease)).finally(() => {
      lease.end();
      state.turns--;
      if (state.chains.get(key) === next) state.chains.delete(key);
      wake();
    });
    state.chains.set(key, next);
    track(next);
  }

  /** A tap on a reply button: the satisfaction answer it is (src/channels/whatsapp/satisfaction.ts), or none. */
  async function tapped(workspaceId: string, waId: string, replyId: string): Promise<SurveyTap | null> {
    return (await options.satisfaction?.tapped({ workspaceId, waId, replyId })) ?? null;
  }

  async function answer(row: WhatsappInboundMessage, lease: Lease): Promise<void> {
    const messageLog = log.child({ workspaceId: row.workspace_id, inboundId: row.id });
    try {
      if (lease.lost) return; // taken over while it waited in its customer's chain
      // Acknowledged means stored, so the message is kept; a disabled workspace does not answer it (nor later).
      if (options.serving && !(await options.serving(row.workspace_id))) {
        messageLog.info('a WhatsApp message for a disabled workspace: stored, not answered');
        metrics?.messages.inc({ outcome: 'workspace_disabled' });
        await repository.finishInbound({ id: row.id, owner, state: 'done', outcome: 'workspace_disabled', sendLeaseMs });
        return;
      }
      // A tap on a reply button: the satisfaction question's answer, kept for the session it was asked in, whose
      // conversation it joins without touching the customer's current one; never a turn, never answered.
      const tap = row.reply_id === null ? null : await tapped(row.workspace_id, row.wa_id, row.reply_id);
      const conversation = row.session_external_id ?? tap?.sessionExternalId ?? (await repository.touchConversation({
        workspaceId: row.workspace_id,
        waId: row.wa_id,
        at: new Date(row.sent_at),
        profileName: row.profile_name,
        newExternalId: randomUUID(),
        idleMs,
      })).external_id;
      if (!(await repository.startInbound(row.id, owner, conversation))) return; // another process took it over
      const attempt = row.attempts + 1;

      let outcome: WhatsappInboundOutcome;
      let reply: { kind: 'reply' | 'notice'; body: string } | null = null;
      try {
        if (row.type === 'text') {
          if (!row.text || row.text.trim() === '') outcome = 'empty';
          else {
            const answered = await whatsappTurn(runtime, {
              workspaceId: row.workspace_id,
              conversation,
              text: row.text,
              waId: row.wa_id,
              // The turn is named after Meta's message id, so a retried message cannot write a second turn.
              turnId: row.message_id,
            });
            outcome = answered.outcome;
            if (answered.outcome === 'reply') reply = { kind: 'reply', body: answered.body };
          }
        } else if (row.reply_id !== null) {
          // The answer kept, or a tap that answers nothing open (a second tap, another app's button): stored, and
          // answered with nothing, not even the text-only notice (docs/whatsapp.md, "The satisfaction question").
          outcome = tap?.recorded ? 'satisfaction' : 'button_reply';
        } else if (SILENT_TYPES.has(row.type)) {
          outcome = 'silent';
        } else if (await repository.claimNotice(row.workspace_id, row.wa_id, UNSUPPORTED_NOTICE_INTERVAL_MS)) {
          // Never the bot link: there is no text to send it. The conversation's language when it has one.
          outcome = 'notice';
          reply = { kind: 'notice', body: phrase('text_only', (await repository.sessionLanguage(row.workspace_id, conversation)) ?? 'en') };
        } else {
          outcome = 'notice_recent';
        }
      } catch (err) {
        if (!state.running || attempt >= MAX_INBOUND_ATTEMPTS) {
          if (!state.running) {
            await repository.releaseInbound(row.id, owner);
            return;
          }
          messageLog.error({ err, attempts: attempt }, 'a WhatsApp message could not be answered; given up');
          metrics?.messages.inc({ outcome: 'failed' });
          await repository.finishInbound({ id: row.id, owner, attempts: attempt, state: 'failed', outcome: 'failed', sendLeaseMs });
          return;
        }
        // Kept claimed, no longer renewed: tried again when the lease runs out, here or in another process.
        messageLog.warn({ err, attempts: attempt }, 'a WhatsApp message could not be answered; it will be tried again');
        return;
      }

      metrics?.messages.inc({ outcome });
      messageLog.debug({ type: row.type, outcome }, 'WhatsApp message handled');
      if (lease.lost) {
        // Another engine took the message over while this one stalled: it answers; this answer is not written.
        messageLog.warn({ outcome }, 'a WhatsApp message was taken over while it was answered here; this answer is dropped');
        return;
      }
      const finished = await repository.finishInbound({
        id: row.id,
        owner,
        attempts: attempt,
        state: 'done',
        outcome,
        sendLeaseMs,
        ...(reply
          ? {
              reply: {
                id: randomUUID(),
                workspace_id: row.workspace_id,
                inbound_id: row.id,
                phone_number_id: row.phone_number_id,
                wa_id: row.wa_id,
                kind: reply.kind,
                body: reply.body,
              },
            }
          : {}),
      });
      // The first attempt is made in the customer's chain, so their answers leave in order.
      if (finished.reply) await deliver(finished.reply, sendLeases.hold(finished.reply.id));
    } catch (err) {
      messageLog.warn({ err }, 'WhatsApp message handling failed; it will be tried again when its lease runs out');
    }
  }

  return answerInOrder;
}

/**
 * One customer text message's turn, and the reply as it is sent: the seam between the session and the Graph API. The
 * worker queues the reply for sending; a scenario's test conversation (docs/scenarios.md) keeps it instead, so a test
 * never reaches Meta or a customer.
 */
export async function whatsappTurn(
  runtime: Pick<SessionRuntime, 'handleMessage'>,
  input: { workspaceId: string; conversation: string; text: string; waId: string; turnId: string; test?: TestConversation },
): Promise<{ outcome: 'cancelled' | 'held' } | { outcome: 'reply'; body: string; result: Extract<TurnResult, { cancelled: false }> }> {
  // WhatsApp carries no language: the customer's words tell it (docs/whatsapp.md, "Languages"). A message too short to
  // tell ("ok", "Hallo") sends none, and the session keeps the language it had (English at first).
  const language = detectLanguage(input.text);
  const result = await runtime.handleMessage({
    workspaceId: input.workspaceId,
    channel: 'whatsapp',
    externalId: input.conversation,
    text: input.text,
    ...(language ? { language } : {}),
    customerPhone: e164(input.waId),
    turnId: input.turnId,
    ...(input.test ? { test: input.test } : {}),
  });
  if (result.cancelled) return { outcome: 'cancelled' };
  // A person handles the conversation: stored and shown in the inbox; neither the bot nor the integrator answers.
  if (result.held) return { outcome: 'held' };
  return { outcome: 'reply', body: cutChars(result.text, MAX_WHATSAPP_TEXT_CHARS), result };
}

function cutChars(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join('');
}
