/**
 * Group commit: writes that arrive while one batch is being written wait and go together in the next one, so N
 * concurrent writers cost about one round trip per batch instead of one each. A write arriving when nothing is in
 * flight is sent at once: batching adds no latency to a quiet system, only saves round trips under load.
 *
 * Each `add()` resolves when its own item is stored and rejects with its own error: when a batch fails, its items are
 * written one by one so that one bad item (a row whose parent was deleted meanwhile, say) fails alone.
 *
 * Ordering: items of one batch are written in one statement, so two items that must be ordered (two writes of one
 * session) must not be in flight together; callers chain such writes (the session runtime does, per session).
 */
export interface GroupCommitOptions<T> {
  /** Writes a batch in one statement (or transaction). */
  write: (items: T[]) => Promise<void>;
  /** Largest batch; default 128. */
  maxBatch?: number;
  /** Batches written at the same time (database connections used); default 1: the next batch forms while one is written. */
  concurrency?: number;
}

interface Pending<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface GroupCommit<T> {
  add(item: T): Promise<void>;
  /** Resolves once everything added so far is written (or has failed). */
  flushed(): Promise<void>;
  readonly stats: { batches: number; items: number };
}

export function groupCommit<T>(options: GroupCommitOptions<T>): GroupCommit<T> {
  const maxBatch = options.maxBatch ?? 128;
  const concurrency = options.concurrency ?? 1;
  let queue: Pending<T>[] = [];
  let inFlight = 0;
  const idleWaiters: (() => void)[] = [];
  const stats = { batches: 0, items: 0 };

  function pump(): void {
    while (inFlight < concurrency && queue.length > 0) {
      const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
      queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch);
      inFlight++;
      void writeBatch(batch).finally(() => {
        inFlight--;
        pump();
        if (inFlight === 0 && queue.length === 0) for (const wake of idleWaiters.splice(0)) wake();
      });
    }
  }

  async function writeBatch(batch: Pending<T>[]): Promise<void> {
    stats.batches++;
    stats.items += batch.length;
    try {
      await options.write(batch.map((p) => p.item));
      for (const p of batch) p.resolve();
    } catch (err) {
      if (batch.length === 1) return batch[0]!.reject(err);
      // One bad item must not fail the others: write them one by one.
      for (const p of batch) {
        try {
          await options.write([p.item]);
          p.resolve();
        } catch (single) {
          p.reject(single);
        }
      }
    }
  }

  return {
    stats,
    add(item: T): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        pump();
      });
    },
    flushed(): Promise<void> {
      if (inFlight === 0 && queue.length === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
  };
}
