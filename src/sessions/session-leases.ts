/**
 * A session's database lease (protocol-free, our own rule): across processes a turn runs only where the session's
 * lease is held, so two engines on one PostgreSQL never run one session's turn at once. A lease round waits for the
 * lease and tells whether another process advanced the session meanwhile. A taken lease is renewed by the lease keeper
 * (src/leases/lease-keeper.ts) while its turn runs, and for as long as the conversation is held (the phone's calls),
 * so however long a turn takes it is never taken over, and a crashed engine's sessions are free within LEASE_MS.
 */
import type { SessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { LEASE_MS } from '../leases/durations.ts';
import { createLeaseKeeper, type Lease } from '../leases/lease-keeper.ts';
import type { Logger } from '../log.ts';

/**
 * How long a message waits for another process to finish this session's turn before it runs its own anyway (the
 * conversation must not break; that turn's end is not written while the other engine holds the lease).
 */
export const SESSION_LEASE_WAIT_MS = 30_000;
/** How often a message waiting for the lease asks again. */
const LEASE_POLL_MS = 25;

/** The part of a live session the lease rounds read and write. */
export interface LeasedSession {
  id: string;
  key: string;
  workspaceId: string;
  /** Serialises the session's writes; a lease round waits for them. */
  writes: Promise<void>;
  /** The conversation keeps the lease between turns (the phone: its socket is in this process). */
  held: boolean;
  /** The lease this process holds and renews now; null between turns of a conversation not held. */
  lease: Lease | null;
  /** The number of turns this process's copy of the session has seen. */
  turnCount(): number;
  /** The revision of the attendant region (who handles it) this copy has seen. */
  attendantRevision(): number;
}

export interface SessionLeaseDeps<S extends LeasedSession> {
  sessions: Pick<SessionsRepository, 'acquireLease' | 'findById' | 'renewLeases'>;
  owner: string;
  logger: Logger;
  now: () => number;
  /** Default LEASE_MS (src/leases/durations.ts). */
  leaseMs?: number;
  leaseWaitMs?: number;
  /** Another process advanced the session: replace this process's stale copy with the stored state. */
  reload: (entry: S, row: NonNullable<Awaited<ReturnType<SessionsRepository['findById']>>>) => S;
}

export function createSessionLeases<S extends LeasedSession>(deps: SessionLeaseDeps<S>) {
  const { now, owner } = deps;
  const leaseMs = deps.leaseMs ?? LEASE_MS;
  const leaseWaitMs = deps.leaseWaitMs ?? SESSION_LEASE_WAIT_MS;
  const keeper = createLeaseKeeper({ kind: 'session', owner, logger: deps.logger, leaseMs, store: { renew: (ids, o, ms) => deps.sessions.renewLeases(ids, o, ms) } });
  /** Lease rounds in progress, by session key. */
  const leasing = new Map<string, Promise<S>>();

  /** The renewals keep the lease from now on; a lost one lets go of the conversation (turns take the lease again). */
  function keep(entry: S): void {
    if (entry.lease && !entry.lease.lost) return;
    const lease = keeper.hold(entry.id);
    entry.lease = lease;
    lease.signal.addEventListener('abort', () => {
      if (entry.lease !== lease) return;
      entry.lease = null;
      if (entry.held) deps.logger.warn({ sessionId: entry.id }, 'a held session lease was lost; turns take the lease again');
      entry.held = false;
    });
  }

  async function takeLease(entry: S): Promise<S> {
    // A save of this process's last turn may still be on its way, and it gives the lease back when it commits: take
    // the lease after it, or that commit would release the lease of the turn about to run (two processes then ran one
    // session's turn at once and saved two turns with one ordinal).
    await entry.writes;
    const deadline = now() + leaseWaitMs;
    let acquired: { turnCount: number; attendantRevision: number } | null;
    while ((acquired = await deps.sessions.acquireLease(entry.id, owner, leaseMs)) === null) {
      if (now() > deadline) break; // the conversation must not break: run the turn (its end is fenced by the lease)
      await new Promise((r) => setTimeout(r, LEASE_POLL_MS));
    }
    let current = entry;
    if (acquired === null || acquired.turnCount !== entry.turnCount() || acquired.attendantRevision !== entry.attendantRevision()) {
      const row = await deps.sessions.findById(entry.workspaceId, entry.id);
      if (row && (row.turn_count !== entry.turnCount() || row.attendant_revision !== entry.attendantRevision())) current = deps.reload(entry, row);
    }
    if (acquired !== null) keep(current);
    return current;
  }

  function round(entry: S): Promise<S> {
    // One lease round per session at a time in this process: messages that arrive together share it (and its reload),
    // so they reach one actor, where the newer one barges in, instead of two copies of the session each running a turn.
    const pending = leasing.get(entry.key);
    if (pending) return pending;
    const next = takeLease(entry).finally(() => leasing.delete(entry.key));
    leasing.set(entry.key, next);
    return next;
  }

  return {
    leaseMs,

    /**
     * Waits for this session's lease; reloads the session when another process advanced it meanwhile (whether this one
     * waited or not: the other may have run a whole turn while this copy sat idle). Renewed until `released`.
     */
    lease(entry: S): Promise<S> {
      return round(entry);
    },

    /** Takes the lease for the whole conversation and keeps it renewed until the session lets go (`held = false`). */
    async hold(entry: S): Promise<S> {
      const leased = await round(entry);
      leased.held = leased.lease !== null;
      return leased;
    },

    /** The lease was given back in the database (a turn's end, the end of the call): no more renewals. */
    released(entry: S): void {
      entry.lease?.end();
      entry.lease = null;
    },

    stop(): void {
      keeper.stop();
    },
  };
}
