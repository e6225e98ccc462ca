/**
 * The WhatsApp processing worker (docs/whatsapp.md): everything that happens after the 200.
 *
 *   raw event ──read──▶ customer messages (deduplicated) + delivery statuses           (read-stage.ts)
 *   customer message ──turn (session runtime) or text-only notice──▶ reply (queued)   (answer-stage.ts)
 *   reply ──Graph API──▶ accepted | retried later | failed                            (send-stage.ts)
 *
 * Each stage claims its rows from the database (FOR UPDATE SKIP LOCKED with a lease), so several processes share the
 * work and each row is handled by one of them. The worker is woken after every stored webhook and polls every
 * WORKER_POLL_MS as a backstop (rows another process stored, retries that came due, leases that ran out). This file
 * is the claim loop; the state the loop and the stages share is one object (worker-context.ts).
 *
 * One customer's messages are answered one after the other, in the order they were sent: on WhatsApp every message
 * gets its answer, while the session machine would cancel a running turn for a newer message (a phone barge-in).
 */
import { randomUUID } from 'node:crypto';
import { EVENT_LEASE_MS } from '../../leases/durations.ts';
import { createLeaseKeeper } from '../../leases/lease-keeper.ts';
import { createAnswerStage } from './answer-stage.ts';
import { EVENT_CLAIM_BATCH, EVENT_RETENTION_MS, MAX_CONCURRENT_SENDS, MAX_CONCURRENT_TURNS, PRUNE_BATCH, PRUNE_INTERVAL_MS, WORKER_POLL_MS } from './limits.ts';
import { createReadStage } from './read-stage.ts';
import { createSendStage } from './send-stage.ts';
import type { WhatsappWorkerOptions, WorkerContext, WorkerState } from './worker-context.ts';

export type { WhatsappWorkerOptions } from './worker-context.ts';

export function createWhatsappWorker(options: WhatsappWorkerOptions) {
  const { repository } = options;
  const log = options.logger.child({ component: 'whatsapp' });
  const owner = options.owner ?? `whatsapp-${randomUUID()}`;
  const pollMs = options.pollMs ?? WORKER_POLL_MS;
  const now = options.now ?? Date.now;
  const leaseMs = options.leaseMs ? { leaseMs: options.leaseMs } : {};
  // Renewed while the message is answered (or waits in its customer's chain) and while its reply is sent.
  const inboundLeases = createLeaseKeeper({ kind: 'whatsapp_inbound', owner, logger: log, store: { renew: (ids, o, ms) => repository.renewInbound(ids, o, ms) }, ...leaseMs });
  const sendLeases = createLeaseKeeper({ kind: 'whatsapp_outbound', owner, logger: log, store: { renew: (ids, o, ms) => repository.renewOutbound(ids, o, ms) }, ...leaseMs });

  const state: WorkerState = {
    running: false,
    turns: 0,
    sends: 0,
    lastPrune: 0,
    chains: new Map(),
    inFlight: new Set(),
    timers: new Set(),
    stopSends: new AbortController(),
  };
  let draining: Promise<void> | null = null;
  let again = false;
  let poll: NodeJS.Timeout | undefined;

  /** The next pass claims webhook events and customers' messages too, not only replies to send. */
  let claimAll = false;

  /**
   * Runs a pass now (or right after the one running). `sends`: only replies to send are new (an agent's message, a
   * send slot freed), so the pass skips claiming events and messages: two statements fewer per reply.
   */
  function wake(what: 'all' | 'sends' = 'all'): void {
    if (!state.running) return;
    if (what === 'all') claimAll = true;
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
    if (!state.running) return;
    const timer = setTimeout(() => {
      state.timers.delete(timer);
      wake();
    }, ms);
    timer.unref();
    state.timers.add(timer);
  }

  function track(work: Promise<void>): void {
    state.inFlight.add(work);
    void work.finally(() => state.inFlight.delete(work));
  }

  async function drain(): Promise<void> {
    for (;;) {
      again = false;
      const all = claimAll;
      claimAll = false;
      const events = all ? await repository.claimEvents(owner, EVENT_LEASE_MS, EVENT_CLAIM_BATCH) : [];
      for (const event of events) await readEvent(event);

      if (all && state.turns < MAX_CONCURRENT_TURNS) {
        const claimed = await inboundLeases.claim((o, ms) => repository.claimInbound(o, ms, MAX_CONCURRENT_TURNS - state.turns));
        for (const { row, lease } of claimed) answerInOrder(row, lease);
      }
      if (state.sends < MAX_CONCURRENT_SENDS) {
        for (const { row, lease } of await sendLeases.claim((o, ms) => repository.claimOutbound(o, ms, MAX_CONCURRENT_SENDS - state.sends))) {
          state.sends++;
          track(deliver(row, lease).finally(() => {
            state.sends--;
            wake('sends');
          }));
        }
      }
      if (now() - state.lastPrune > PRUNE_INTERVAL_MS) {
        state.lastPrune = now();
        const pruned = await repository.pruneEvents(EVENT_RETENTION_MS, PRUNE_BATCH);
        if (pruned > 0) log.info({ pruned }, 'deleted processed WhatsApp webhook bodies past their retention');
      }
      // A full batch of events means more may be waiting; a wake during this pass means new rows arrived.
      if (events.length === EVENT_CLAIM_BATCH) claimAll = true;
      if (!claimAll && !again) return;
    }
  }

  const context: WorkerContext = { options, log, owner, now, state, sendLeases, wake, wakeAfter, track };
  const readEvent = createReadStage(context);
  const deliver = createSendStage(context);
  const answerInOrder = createAnswerStage(context, deliver);

  return {
    owner,

    /** Starts polling and processes what is waiting. */
    start(): void {
      if (state.running) return;
      state.running = true;
      poll = setInterval(wake, pollMs);
      poll.unref();
      wake();
    },

    /** Something was stored: process it now rather than at the next poll. */
    wake,

    /** Resolves when nothing is being processed right now (tests). */
    async idle(): Promise<void> {
      while (draining || state.inFlight.size > 0) {
        await draining;
        await Promise.all([...state.inFlight]);
      }
    },

    /**
     * No new claims; work in flight finishes (up to `graceMs`), then sends still running are aborted. Whatever is
     * left is claimed again by the next process when its lease runs out: nothing is lost.
     */
    async stop(graceMs = 10_000): Promise<void> {
      state.running = false;
      clearInterval(poll);
      for (const timer of state.timers) clearTimeout(timer);
      state.timers.clear();
      const settled = (async () => {
        await draining;
        await Promise.allSettled([...state.inFlight]);
      })();
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
        timer.unref();
      });
      await Promise.race([settled, graceOver]);
      clearTimeout(timer);
      state.stopSends.abort(new Error('The WhatsApp worker is stopping.'));
      await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, 100).unref())]);
      inboundLeases.stop();
      sendLeases.stop();
    },
  };
}

export type WhatsappWorker = ReturnType<typeof createWhatsappWorker>;
