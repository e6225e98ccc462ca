/**
 * Group commit, the one batcher of the tree (session turn ends, WhatsApp webhook bodies, webhook attempt outcomes):
 * writes that arrive while one batch is being written wait and go together in the next one, so N concurrent writers
 * cost about one round trip per batch instead of one each. A write arriving when nothing is in flight is sent at once
 * (batching adds no latency to a quiet system), unless `lingerMs` asks it to wait that long for company first.
 *
 * Each `add()` resolves with its own item's result (what `write` answered for it, in order) and rejects with its own
 * error: when a batch fails, its items are written one by one so that one bad item (a row whose parent was deleted
 * meanwhile, say) fails alone.
 *
 * Ordering: items of one batch are written in one statement, so two items that must be ordered (two writes of one
 * session) must not be in flight together; callers chain such writes (the session runtime does, per session).
 */
export interface GroupCommitOptions<T, R = void> {
  /** Writes a batch in one statement (or transaction); answers one result per item, in order, or nothing. */
  write: (items: T[]) => Promise<R[] | void>;
  /** Largest batch; default 128. */
  maxBatch?: number;
  /** Batches written at the same time (database connections used); default 1: the next batch forms while one is written. */
  concurrency?: number;
  /**
   * How long a batch that is not full waits for company before it is written, in ms; default 0 (written at once when
   * a writer is free). A full batch never waits.
   */
  lingerMs?: number;
}

interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export interface GroupCommit<T, R = void> {
  add(item: T): Promise<R>;
  /** Resolves once everything added so far is written (or has failed). */
  flushed(): Promise<void>;
  readonly stats: { batches: number; items: number };
}

export function groupCommit<T, R = void>(options: GroupCommitOptions<T, R>): GroupCommit<T, R> {
  const maxBatch = options.maxBatch ?? 128;
  const concurrency = options.concurrency ?? 1;
  const lingerMs = options.lingerMs ?? 0;
  let queue: Pending<T, R>[] = [];
  let inFlight = 0;
  let lingering: NodeJS.Timeout | undefined;
  const idleWaiters: (() => void)[] = [];
  const stats = { batches: 0, items: 0 };

  /** `now`: write what is queued even if the batch is not full (the linger is over). */
  function pump(now = false): void {
    while (inFlight < concurrency && queue.length > 0) {
      // Someone waits in flushed(): everything goes now.
      if (!now && lingerMs > 0 && queue.length < maxBatch && idleWaiters.length === 0) {
        lingering ??= setTimeout(() => {
          lingering = undefined;
          pump(true);
        }, lingerMs);
        return;
      }
      clearTimeout(lingering);
      lingering = undefined;
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

  async function writeBatch(batch: Pending<T, R>[]): Promise<void> {
    stats.batches++;
    stats.items += batch.length;
    try {
      const results = await options.write(batch.map((p) => p.item));
      batch.forEach((p, i) => p.resolve((results ? results[i] : undefined) as R));
    } catch (err) {
      if (batch.length === 1) return batch[0]!.reject(err);
      // One bad item must not fail the others: write them one by one.
      for (const p of batch) {
        try {
          const results = await options.write([p.item]);
          p.resolve((results ? results[0] : undefined) as R);
        } catch (single) {
          p.reject(single);
        }
      }
    }
  }

  return {
    stats,
    add(item: T): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        pump();
      });
    },
    flushed(): Promise<void> {
      if (inFlight === 0 && queue.length === 0) return Promise.resolve();
      // Whatever lingers is written now: a caller waiting for everything should not wait for company too.
      const idle = new Promise<void>((resolve) => idleWaiters.push(resolve));
      pump(true);
      return idle;
    },
  };
}
