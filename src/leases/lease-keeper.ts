/**
 * One lease helper for every kind of claimed work (docs/reliability.md, "Leases"): the work is claimed with a short
 * lease, renewed on a heartbeat while it runs (one statement per kind of work per beat, however many are held), and
 * given back or left to run out when it ends. A renewal that finds a lease gone (the engine stalled past it and
 * another took the work over) aborts that work's signal; the work's final write is fenced by the lease as well
 * (`lease_owner`/`lease_owner` and an attempt count or the session's lease), so a lost lease never commits a second
 * answer.
 */
import type { Logger } from '../log.ts';
import { LEASE_MS, renewEveryMs } from './durations.ts';

/** The statements of one kind of work's lease columns. */
export interface LeaseStore {
  /** Extends the leases `owner` holds on these rows to `leaseMs` from now; returns the ids it still held. */
  renew(ids: readonly string[], owner: string, leaseMs: number): Promise<ReadonlySet<string>>;
}

/** A held lease: the work checks `signal` (aborted when the lease was lost) and calls `end()` when done. */
export interface Lease {
  readonly id: string;
  /** Aborted when a renewal found the lease taken over (or the keeper stopped). */
  readonly signal: AbortSignal;
  readonly lost: boolean;
  /** Stops renewing: the work wrote its outcome (which gave the lease back), or leaves it to run out. */
  end(): void;
}

export interface LeaseKeeperOptions {
  /** What is leased, for the logs (`whatsapp_inbound`, `webhook_delivery`, `session`). */
  kind: string;
  owner: string;
  store: LeaseStore;
  logger: Logger;
  /** Default {@link LEASE_MS}. */
  leaseMs?: number;
}

export interface LeaseKeeper {
  readonly leaseMs: number;
  /** Claims with `claim(owner, leaseMs)` and holds a lease on every row it returned. */
  claim<R extends { id: string }>(claim: (owner: string, leaseMs: number) => Promise<R[]>): Promise<{ row: R; lease: Lease }[]>;
  /** Holds a lease taken elsewhere (a row claimed with `leaseMs` by a statement of its own). */
  hold(id: string): Lease;
  /** The leases held now. */
  size(): number;
  /** One heartbeat now (tests; the timer calls it every third of the lease). */
  renewNow(): Promise<void>;
  /** No more renewals; held leases run out by themselves unless the caller gives them back. */
  stop(): void;
}

interface Held {
  lease: Lease;
  controller: AbortController;
  ended: boolean;
}

export function createLeaseKeeper(options: LeaseKeeperOptions): LeaseKeeper {
  const { owner, store, kind } = options;
  const leaseMs = options.leaseMs ?? LEASE_MS;
  const log = options.logger.child({ lease: kind });
  const held = new Map<string, Held>();
  let timer: NodeJS.Timeout | null = null;
  let beating: Promise<void> | null = null;
  let stopped = false;

  function hold(id: string): Lease {
    // The same row claimed again by this engine (its lease ran out while it stalled): the old holder is fenced.
    held.get(id)?.controller.abort(new Error('claimed again'));
    const controller = new AbortController();
    const entry: Held = {
      controller,
      ended: false,
      lease: {
        id,
        signal: controller.signal,
        get lost() {
          return controller.signal.aborted;
        },
        end() {
          entry.ended = true;
          if (held.get(id) === entry) held.delete(id);
        },
      },
    };
    held.set(id, entry);
    schedule();
    return entry.lease;
  }

  function schedule(): void {
    if (timer || stopped || held.size === 0) return;
    timer = setTimeout(() => {
      timer = null;
      void renewNow().finally(schedule);
    }, renewEveryMs(leaseMs));
    timer.unref();
  }

  function renewNow(): Promise<void> {
    beating ??= beat().finally(() => (beating = null));
    return beating;
  }

  async function beat(): Promise<void> {
    const entries = [...held.values()];
    if (entries.length === 0) return;
    let kept: ReadonlySet<string>;
    try {
      kept = await store.renew(
        entries.map((e) => e.lease.id),
        owner,
        leaseMs,
      );
    } catch (err) {
      // The next beat tries again; two more fit in the lease before it runs out.
      log.warn({ err, held: entries.length }, 'renewing leases failed');
      return;
    }
    for (const e of entries) {
      if (kept.has(e.lease.id) || e.ended) continue;
      // Gone: taken over by another engine (or finished by a write this beat raced with, then `ended` follows).
      e.controller.abort(new Error('lease lost'));
      if (held.get(e.lease.id) === e) held.delete(e.lease.id);
      log.warn({ id: e.lease.id }, 'a lease was lost; the work is fenced and its outcome not written');
    }
  }

  return {
    leaseMs,
    async claim(claim) {
      const rows = await claim(owner, leaseMs);
      return rows.map((row) => ({ row, lease: hold(row.id) }));
    },
    hold,
    size: () => held.size,
    renewNow,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      held.clear();
    },
  };
}
