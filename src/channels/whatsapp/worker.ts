// Over 400 lines: the three stages of one pipeline (read, answer, send) share its claim loop, chains and counters.
/**
 * The WhatsApp processing worker (docs/whatsapp.md): everything that happens after the 200.
 *
 *   raw event ──read──▶ customer messages (deduplicated) + delivery statuses
 *   customer message ──turn (session runtime) or text-only notice──▶ reply (queued)
 *   reply ──Graph API──▶ accepted | retried later | failed
 *
 * Each stage claims its rows from the database (FOR UPDATE SKIP LOCKED with a lease), so several processes share the
 * work and each row is handled by one of them. The worker is woken after every stored webhook and polls every
 * WORKER_POLL_MS as a backstop (rows another process stored, retries that came due, leases that ran out).
 *
 * One customer's messages are answered one after the other, in the order they were sent: on WhatsApp every message
 * gets its answer, while the session machine would cancel a running turn for a newer message (a phone barge-in).
 */
import { randomUUID } from 'node:crypto';
import type { NewInbound, StatusChange, WhatsappRepository } from '../../../db/repositories/whatsapp.repository.ts';
import type { WhatsappInboundMessage, WhatsappInboundOutcome, WhatsappOutboundMessage } from '../../../db/schema.ts';
import { MAX_WHATSAPP_TEXT_CHARS } from '../../ai/limits.ts';
import { EVENT_LEASE_MS } from '../../leases/durations.ts';
import { createLeaseKeeper, type Lease } from '../../leases/lease-keeper.ts';
import type { Logger } from '../../log.ts';
import { jitteredDelay, parseRetryAfter, retryDelay } from '../../net/retry-schedule.ts';
import type { SessionRuntime } from '../../sessions/session-runtime.ts';
import { detectLanguage } from '../../text/detect-language.ts';
import type { GraphClient } from './graph-client.ts';
import {
  CONVERSATION_IDLE_MS,
  EVENT_CLAIM_BATCH,
  EVENT_RETENTION_MS,
  MAX_CONCURRENT_SENDS,
  MAX_CONCURRENT_TURNS,
  MAX_EVENT_ATTEMPTS,
  MAX_INBOUND_ATTEMPTS,
  PRUNE_BATCH,
  PRUNE_INTERVAL_MS,
  SEND_MAX_RETRY_AFTER_MS,
  SEND_RETRY_DELAYS_MS,
  SEND_RETRY_JITTER,
  STATUS_MATCH_WINDOW_MS,
  STATUS_RETRY_DELAY_MS,
  UNSUPPORTED_NOTICE_INTERVAL_MS,
  WORKER_POLL_MS,
} from './limits.ts';
import type { WhatsappMetrics } from './metrics.ts';
import { e164, parseWebhook, WebhookPayloadError } from './payload.ts';
import { SILENT_TYPES } from './silent-types.ts';
import { phrase } from '../../ai/phrases.ts';
import type { WhatsappSettings } from './settings.ts';

export interface WhatsappWorkerOptions {
  repository: WhatsappRepository;
  settings: Pick<WhatsappSettings, 'workspaceFor' | 'credentials'>;
  runtime: Pick<SessionRuntime, 'handleMessage'>;
  graph: Pick<GraphClient, 'sendText'>;
  /** Whether the workspace takes conversations (AccountsService.isServing); absent: every workspace does. */
  serving?: (workspaceId: string) => Promise<boolean>;
  logger: Logger;
  metrics?: WhatsappMetrics;
  /** Names this process in `claimed_by`; default a random id. */
  owner?: string;
  /** The lease of a message being answered and of a reply being sent; default LEASE_MS (src/leases/durations.ts). */
  leaseMs?: number;
  /** Backstop poll in ms; default {@link WORKER_POLL_MS}. */
  pollMs?: number;
  /** Waits before each retry of a send; default {@link SEND_RETRY_DELAYS_MS}. */
  retryDelaysMs?: readonly number[];
  /** Silence after which a customer's next message starts a new conversation; default {@link CONVERSATION_IDLE_MS}. */
  conversationIdleMs?: number;
  /** The clock of the retention sweep, the status window, payload times and `Retry-After`, ms since epoch; default Date.now. */
  now?: () => number;
  /** Uniform in [0, 1): the jitter of retry delays; default Math.random. */
  random?: () => number;
  /**
   * The delivery status of an agent's message may have changed: its send was answered (`outboundId`), or Meta's
   * status webhooks named messages of the workspace (`messageIds`). The team's side shows it live.
   */
  onDelivery?: (change: { workspaceId: string; outboundId?: string; messageIds?: string[] }) => void;
}

export function createWhatsappWorker(options: WhatsappWorkerOptions) {
  const { repository, settings, runtime, graph, metrics } = options;
  const log = options.logger.child({ component: 'whatsapp' });
  const owner = options.owner ?? `whatsapp-${randomUUID()}`;
  const pollMs = options.pollMs ?? WORKER_POLL_MS;
  const retryDelays = options.retryDelaysMs ?? SEND_RETRY_DELAYS_MS;
  const idleMs = options.conversationIdleMs ?? CONVERSATION_IDLE_MS;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  // Renewed while the message is answered (or waits in its customer's chain) and while its reply is sent.
  const inboundLeases = createLeaseKeeper({ kind: 'whatsapp_inbound', owner, logger: log, store: { renew: (ids, o, ms) => repository.renewInbound(ids, o, ms) }, ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}) });
  const sendLeases = createLeaseKeeper({ kind: 'whatsapp_outbound', owner, logger: log, store: { renew: (ids, o, ms) => repository.renewOutbound(ids, o, ms) }, ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}) });
  const sendLeaseMs = sendLeases.leaseMs;

  let running = false;
  let draining: Promise<void> | null = null;
  let again = false;
  let poll: NodeJS.Timeout | undefined;
  let lastPrune = 0;
  const timers = new Set<NodeJS.Timeout>();
  const stopSends = new AbortController();
  /** Per customer (workspace + wa_id): the tail of their chain of messages being answered. */
  const chains = new Map<string, Promise<void>>();
  const inFlight = new Set<Promise<void>>();
  let turns = 0;
  let sends = 0;

  function wake(): void {
    if (!running) return;
    if (draining) {
      again = true;
      return;
    }
    draining = drain()
      .catch((err: unknown) => log.warn({ err }, 'whatsapp worker pass failed; the next poll retries'))
      .finally(() => {
        draining = null;
        if (again) {
          again = false;
          wake();
        }
      });
  }

  function wakeAfter(ms: number): void {
    if (!running) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      wake();
    }, ms);
    timer.unref();
    timers.add(timer);
  }

  function track(work: Promise<void>): void {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  }

  async function drain(): Promise<void> {
    for (;;) {
      again = false;
      const events = await repository.claimEvents(owner, EVENT_LEASE_MS, EVENT_CLAIM_BATCH);
      for (const event of events) await readEvent(event);

      if (turns < MAX_CONCURRENT_TURNS) {
        const claimed = await inboundLeases.claim((o, ms) => repository.claimInbound(o, ms, MAX_CONCURRENT_TURNS - turns));
        for (const { row, lease } of claimed) answerInOrder(row, lease);
      }
      if (sends < MAX_CONCURRENT_SENDS) {
        for (const { row, lease } of await sendLeases.claim((o, ms) => repository.claimOutbound(o, ms, MAX_CONCURRENT_SENDS - sends))) {
          sends++;
          track(deliver(row, lease).finally(() => {
            sends--;
            wake();
          }));
        }
      }
      if (now() - lastPrune > PRUNE_INTERVAL_MS) {
        lastPrune = now();
        const pruned = await repository.pruneEvents(EVENT_RETENTION_MS, PRUNE_BATCH);
        if (pruned > 0) log.info({ pruned }, 'deleted processed WhatsApp webhook bodies past their retention');
      }
      // A full batch of events means more may be waiting; a wake during this pass means new rows arrived.
      if (events.length < EVENT_CLAIM_BATCH && !again) return;
    }
  }

  // ── Stage 1: a stored webhook body becomes customer messages and status changes ─────────────────────────────

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
    if (outcome !== 'processed') {
      metrics?.events.inc({ outcome });
      await repository.finishEvent(event.id, owner, outcome, detail);
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

  // ── Stage 2: a customer message is answered ─────────────────────────────────────────────────────────────────

  function answerInOrder(row: WhatsappInboundMessage, lease: Lease): void {
    turns++;
    const key = `${row.workspace_id}\u0000${row.wa_id}`;
    const previous = chains.get(key) ?? Promise.resolve();
    // Ended however the answer ends: finished (the lease given back with it) or left to run out and be tried again.
    const next = previous.then(() => answer(row, lease)).finally(() => {
      lease.end();
      turns--;
      if (chains.get(key) === next) chains.delete(key);
      wake();
    });
    chains.set(key, next);
    track(next);
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
      const conversation = row.session_external_id ?? (await repository.touchConversation({
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
            // WhatsApp carries no language: the customer's words tell it (docs/whatsapp.md, "Languages"). A message too
            // short to tell ("ok", "Hallo") sends none, and the session keeps the language it had (English at first).
            const language = detectLanguage(row.text);
            const result = await runtime.handleMessage({
              workspaceId: row.workspace_id,
              channel: 'whatsapp',
              externalId: conversation,
              text: row.text,
              ...(language ? { language } : {}),
              customerPhone: e164(row.wa_id),
              // The turn is named after Meta's message id, so a retried message cannot write a second turn.
              turnId: row.message_id,
            });
            if (result.cancelled) outcome = 'cancelled';
            // A person handles the conversation: stored and shown in the inbox; neither the bot nor the integrator answers.
            else if (result.held) outcome = 'held';
            else {
              outcome = 'reply';
              reply = { kind: 'reply', body: cutChars(result.text, MAX_WHATSAPP_TEXT_CHARS) };
            }
          }
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
        if (!running || attempt >= MAX_INBOUND_ATTEMPTS) {
          if (!running) {
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

  // ── Stage 3: a reply is sent ────────────────────────────────────────────────────────────────────────────────

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
      const outcome = await graph.sendText({
        phoneNumberId: row.phone_number_id,
        accessToken: credentials.accessToken,
        to: row.wa_id,
        body: row.body,
        // Stopping, or the lease lost (another engine sends it now): this request is cancelled.
        signal: AbortSignal.any([stopSends.signal, lease.signal]),
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

  return {
    owner,

    /** Starts polling and processes what is waiting. */
    start(): void {
      if (running) return;
      running = true;
      poll = setInterval(wake, pollMs);
      poll.unref();
      wake();
    },

    /** Something was stored: process it now rather than at the next poll. */
    wake,

    /** Resolves when nothing is being processed right now (tests). */
    async idle(): Promise<void> {
      while (draining || inFlight.size > 0) {
        await draining;
        await Promise.all([...inFlight]);
      }
    },

    /**
     * No new claims; work in flight finishes (up to `graceMs`), then sends still running are aborted. Whatever is
     * left is claimed again by the next process when its lease runs out: nothing is lost.
     */
    async stop(graceMs = 10_000): Promise<void> {
      running = false;
      clearInterval(poll);
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const settled = (async () => {
        await draining;
        await Promise.allSettled([...inFlight]);
      })();
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
        timer.unref();
      });
      await Promise.race([settled, graceOver]);
      clearTimeout(timer);
      stopSends.abort(new Error('The WhatsApp worker is stopping.'));
      await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, 100).unref())]);
      inboundLeases.stop();
      sendLeases.stop();
    },
  };
}

export type WhatsappWorker = ReturnType<typeof createWhatsappWorker>;

function cutChars(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join('');
}
