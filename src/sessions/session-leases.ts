/**
 * A session's database lease (protocol-free, our own rule): across processes a turn runs only where the session's
 * lease is held, so two engines on one PostgreSQL never run one session's turn at once. A lease round waits for the
 * lease and tells whether another process advanced the session meanwhile; held leases (the phone's calls) are renewed
 * in the background.
 */
import type { SessionsRepository } from '../../db/repositories/sessions.repository.ts';
import type { Logger } from '../log.ts';

/** A turn's lease: longer than the longest turn (bot link 6 s + three tool rounds of 4 s + AI) with margin. */
export const SESSION_LEASE_MS = 60_000;
/** How long a message waits for another process to finish this session's turn. */
export const SESSION_LEASE_WAIT_MS = 30_000;
/**
 * A lease held for a whole conversation (`open({ hold: true })`, the phone): renewed every third of this, so a crashed
 * process lets go of its calls' sessions within this time.
 */
export const SESSION_HELD_LEASE_MS = 15_000;
/** How often a message waiting for the lease asks again. */
const LEASE_POLL_MS = 25;

/** The part of a live session the lease rounds read and write. */
export interface LeasedSession {
  id: string;
  key: string;
  workspaceId: string;
  /** Serialises the session's writes; a lease round waits for them. */
  writes: Promise<void>;
  held: boolean;
  /** The number of turns this process's copy of the session has seen. */
  turnCount(): number;
  /** The revision of the handler region (who handles it) this copy has seen. */
  handlerRevision(): number;
}

export interface SessionLeaseDeps<S extends LeasedSession> {
  sessions: Pick<SessionsRepository, 'acquireLease' | 'findById' | 'renewLeases'>;
  owner: string;
  logger: Logger;
  now: () => number;
  leaseMs?: number;
  leaseWaitMs?: number;
  heldLeaseMs?: number;
  /** Another process advanced the session: replace this process's stale copy with the stored state. */
  reload: (entry: S, row: NonNullable<Awaited<ReturnType<SessionsRepository['findById']>>>) => S;
  /** The sessions whose lease is held for the whole conversation. */
  held: () => S[];
}

export function createSessionLeases<S extends LeasedSession>(deps: SessionLeaseDeps<S>) {
  const { now, owner } = deps;
  const leaseMs = deps.leaseMs ?? SESSION_LEASE_MS;
  const leaseWaitMs = deps.leaseWaitMs ?? SESSION_LEASE_WAIT_MS;
  const heldLeaseMs = deps.heldLeaseMs ?? SESSION_HELD_LEASE_MS;
  /** Lease rounds in progress, by session key. */
  const leasing = new Map<string, Promise<S>>();
  let renewTimer: NodeJS.Timeout | null = null;
  let stopped = false;

  async function takeLease(entry: S, ms: number): Promise<S> {
    // A save of this process's last turn may still be on its way, and it gives the lease back when it commits: take
    // the lease after it, or that commit would release the lease of the turn about to run (two processes
    // then ran one session's turn at once and saved two turns with one ordinal).
    await entry.writes;
    const deadline = now() + leaseWaitMs;
    let acquired: { turnCount: number; handlerRevision: number } | null;
    while ((acquired = await deps.sessions.acquireLease(entry.id, owner, ms)) === null) {
      if (now() > deadline) break; // the conversation must not break: run the turn; the lease expires anyway
      await new Promise((r) => setTimeout(r, LEASE_POLL_MS));
    }
    if (acquired !== null && acquired.turnCount === entry.turnCount() && acquired.handlerRevision === entry.handlerRevision()) return entry;
    const row = await deps.sessions.findById(entry.workspaceId, entry.id);
    if (row && (row.turn_count !== entry.turnCount() || row.handler_revision !== entry.handlerRevision())) return deps.reload(entry, row);
    return entry;
  }

  function scheduleRenewal(): void {
    if (renewTimer || stopped) return;
    renewTimer = setTimeout(() => {
      renewTimer = null;
      const held = deps.held();
      if (held.length === 0) return;
      deps.sessions
        .renewLeases(
          held.map((e) => e.id),
          owner,
          heldLeaseMs,
        )
        .then((kept) => {
          for (const e of held) {
            if (kept.has(e.id) || !e.held) continue;
            e.held = false;
            deps.logger.warn({ sessionId: e.id }, 'a held session lease was lost; turns take the lease again');
          }
        })
        .catch((err: unknown) => deps.logger.error({ err }, 'renewing the held session leases failed'))
        .finally(scheduleRenewal);
    }, heldLeaseMs / 3);
    renewTimer.unref();
  }

  return {
    /**
     * Waits for this session's lease; reloads the session when another process advanced it meanwhile (whether this one
     * waited or not: the other may have run a whole turn while this copy sat idle).
     */
    lease(entry: S): Promise<S> {
      return round(entry, leaseMs);
    },

    /** Takes the lease for the whole conversation and keeps it renewed until the session lets go (`held = false`). */
    async hold(entry: S): Promise<S> {
      const leased = await round(entry, heldLeaseMs);
      leased.held = true;
      scheduleRenewal();
      return leased;
    },

    stop(): void {
      stopped = true;
      if (renewTimer) clearTimeout(renewTimer);
      renewTimer = null;
    },
  };

  function round(entry: S, ms: number): Promise<S> {
    // One lease round per session at a time in this process: messages that arrive together share it (and its reload),
    // so they reach one actor, where the newer one barges in, instead of two copies of the session each running a turn.
    const pending = leasing.get(entry.key);
    if (pending) return pending;
    const next = takeLease(entry, ms).finally(() => leasing.delete(entry.key));
    leasing.set(entry.key, next);
    return next;
  }
}
