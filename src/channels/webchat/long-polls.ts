/**
 * The web chat's open long polls on this engine (GET /v1/webchat/conversations/{id}/messages?wait=; docs/webchat.md,
 * "Long polls"): how many one conversation and one client address may hold, and what wakes them.
 *
 * - Caps: MAX_POLLS_PER_CONVERSATION per conversation and MAX_POLLS_PER_ADDRESS per client address (whatever the
 *   conversation and workspace); beyond either, 429 `rate_limited` with Retry-After. They count this engine's polls
 *   only: behind N engines on one database, a conversation or an address may hold N times as many.
 * - Waking: an open poll does no database work while it waits. The team's inbox changes (src/sessions/inbox-events.ts;
 *   every message added to a conversation, by the visitor, the bot or an agent, on whichever engine, through the live
 *   bus, src/events/live-bus.ts) wake the polls of that conversation's session, which then read once. One subscription
 *   per workspace serves all of its polls and outlives the last by POLL_WATCH_LINGER_MS, so a widget's next poll does
 *   not write the bus's watch again.
 * - Safety reads: a poll reads at the end of its wait whatever happened (an event another engine failed to write is
 *   seen then), and a poll that began while its workspace's watch was new reads once more when the watch has reached
 *   the other engines (POLL_WATCH_SETTLE_MS).
 */
import { AppError } from '../../errors.ts';
import type { InboxEvents } from '../../sessions/inbox-events.ts';
import {
  MAX_POLLS_PER_ADDRESS,
  MAX_POLLS_PER_CONVERSATION,
  POLL_REFUSED_RETRY_AFTER_SECONDS,
  POLL_WATCH_LINGER_MS,
  POLL_WATCH_SETTLE_MS,
} from './limits.ts';

export interface LongPollsOptions {
  /** The inbox changes that wake a poll; absent: a poll reads at the end of its wait only. */
  inbox?: Pick<InboxEvents, 'subscribe'> | undefined;
  /** Other wake-ups by session id (the agent typing, a question put; src/channels/webchat/visitor-side.ts). */
  signals?: { subscribe(workspaceId: string, listener: (sessionId: string) => void): () => void } | undefined;
  /** Default {@link MAX_POLLS_PER_CONVERSATION}. */
  maxPerConversation?: number;
  /** Default {@link MAX_POLLS_PER_ADDRESS}. */
  maxPerAddress?: number;
  /** Milliseconds a workspace's subscription outlives its last poll; default {@link POLL_WATCH_LINGER_MS}. */
  lingerMs?: number;
  /** Milliseconds after which a new subscription's watch has reached the other engines; default {@link POLL_WATCH_SETTLE_MS}. */
  settleMs?: number;
  now?: () => number;
}

export interface PollOwner {
  workspaceId: string;
  conversationId: string;
  /** The conversation's session, whose inbox changes wake the poll; null: none (nothing will wake it). */
  sessionId: string | null;
  /** The client address (req.ip). */
  address: string;
}

/** Why a wait ended: the conversation changed, its watch settled, the deadline passed, or the client left. */
export type PollWake = 'changed' | 'settled' | 'deadline' | 'aborted';

export interface OpenPoll {
  /** Waits for the next reason to read; a change that came while the poll was reading is answered at once. */
  wait(deadline: number, signal?: AbortSignal): Promise<PollWake>;
  /** Frees the poll's place (call it however the poll ends). */
  close(): void;
}

interface WorkspaceWatch {
  unsubscribe: () => void;
  /** When the subscription was made (its watch was written then). */
  since: number;
  /** The polls' wake-ups, by session id. */
  sessions: Map<string, Set<() => void>>;
  polls: number;
  linger: NodeJS.Timeout | null;
}

export function createLongPolls(options: LongPollsOptions = {}) {
  const maxPerConversation = options.maxPerConversation ?? MAX_POLLS_PER_CONVERSATION;
  const maxPerAddress = options.maxPerAddress ?? MAX_POLLS_PER_ADDRESS;
  const lingerMs = options.lingerMs ?? POLL_WATCH_LINGER_MS;
  const settleMs = options.settleMs ?? POLL_WATCH_SETTLE_MS;
  const now = options.now ?? Date.now;
  const byConversation = new Map<string, number>();
  const byAddress = new Map<string, number>();
  const watches = new Map<string, WorkspaceWatch>();

  const refuse = (message: string) =>
    new AppError('rate_limited', `${message}; try again in ${POLL_REFUSED_RETRY_AFTER_SECONDS} s.`, { retry_after_seconds: POLL_REFUSED_RETRY_AFTER_SECONDS });

  function watch(workspaceId: string): WorkspaceWatch {
    const existing = watches.get(workspaceId);
    if (existing) {
      if (existing.linger) clearTimeout(existing.linger);
      existing.linger = null;
      return existing;
    }
    const sessions = new Map<string, Set<() => void>>();
    const wakeSession = (sessionId: string) => {
      for (const wake of sessions.get(sessionId) ?? []) wake();
    };
    const unsubscribeInbox = options.inbox?.subscribe(workspaceId, (change) => wakeSession(change.sessionId)) ?? (() => {});
    const unsubscribeSignals = options.signals?.subscribe(workspaceId, wakeSession) ?? (() => {});
    const unsubscribe = () => {
      unsubscribeInbox();
      unsubscribeSignals();
    };
    const made: WorkspaceWatch = { unsubscribe, since: now(), sessions, polls: 0, linger: null };
    watches.set(workspaceId, made);
    return made;
  }

  function count(map: Map<string, number>, key: string, by: number): void {
    const n = (map.get(key) ?? 0) + by;
    if (n > 0) map.set(key, n);
    else map.delete(key);
  }

  return {
    /** Takes a place for a long poll, or throws 429 when its conversation or its client address holds its most. */
    open(owner: PollOwner): OpenPoll {
      const conversationKey = `${owner.workspaceId}\n${owner.conversationId}`;
      if ((byConversation.get(conversationKey) ?? 0) >= maxPerConversation) {
        throw refuse(`This conversation already has ${maxPerConversation} open long polls`);
      }
      if ((byAddress.get(owner.address) ?? 0) >= maxPerAddress) {
        throw refuse(`This address already holds ${maxPerAddress} open long polls`);
      }
      count(byConversation, conversationKey, 1);
      count(byAddress, owner.address, 1);
      const workspace = watch(owner.workspaceId);
      workspace.polls++;
      // Begun while the watch was new: one more read once every engine knows of it.
      let settleAt: number | null = now() - workspace.since < settleMs ? workspace.since + settleMs : null;
      let changed = false;
      let wake: (() => void) | null = null;
      const onChange = () => {
        changed = true;
        wake?.();
      };
      if (owner.sessionId !== null) {
        let set = workspace.sessions.get(owner.sessionId);
        if (!set) workspace.sessions.set(owner.sessionId, (set = new Set()));
        set.add(onChange);
      }
      let closed = false;

      return {
        wait(deadline, signal) {
          if (signal?.aborted) return Promise.resolve('aborted');
          if (changed) {
            changed = false;
            return Promise.resolve('changed');
          }
          const at = now();
          if (deadline <= at) return Promise.resolve('deadline');
          const settle = settleAt !== null && settleAt < deadline ? settleAt : null;
          return new Promise<PollWake>((resolve) => {
            const finish = (why: PollWake) => {
              clearTimeout(timer);
              signal?.removeEventListener('abort', onAbort);
              wake = null;
              resolve(why);
            };
            const onAbort = () => finish('aborted');
            const timer = setTimeout(() => {
              if (settle === null) return finish('deadline');
              settleAt = null;
              finish('settled');
            }, Math.max(0, (settle ?? deadline) - at));
            wake = () => {
              changed = false;
              finish('changed');
            };
            signal?.addEventListener('abort', onAbort, { once: true });
          });
        },

        close() {
          if (closed) return;
          closed = true;
          wake = null;
          count(byConversation, conversationKey, -1);
          count(byAddress, owner.address, -1);
          if (owner.sessionId !== null) {
            const set = workspace.sessions.get(owner.sessionId);
            set?.delete(onChange);
            if (set?.size === 0) workspace.sessions.delete(owner.sessionId);
          }
          if (--workspace.polls > 0) return;
          workspace.linger = setTimeout(() => {
            if (workspace.polls > 0 || watches.get(owner.workspaceId) !== workspace) return;
            watches.delete(owner.workspaceId);
            workspace.unsubscribe();
          }, lingerMs);
          workspace.linger.unref();
        },
      };
    },

    /** Open polls on this engine (tests, metrics). */
    get size(): number {
      let n = 0;
      for (const c of byAddress.values()) n += c;
      return n;
    },

    /** Drops every subscription (the service stops; open polls answer at their deadline). */
    stop(): void {
      for (const workspace of watches.values()) {
        if (workspace.linger) clearTimeout(workspace.linger);
        workspace.unsubscribe();
      }
      watches.clear();
    },
  };
}

export type LongPolls = ReturnType<typeof createLongPolls>;
