/**
 * Storing raw webhook bodies before the 200 (docs/whatsapp.md, "Durable first"). Meta counts a webhook as delivered
 * on our 200, so the body must be committed before we answer; processing comes after.
 *
 * Writes are grouped the way a database groups commits: the first body is written at once, and bodies that arrive
 * while writes are in flight wait for the next free write and go in one INSERT together (up to INGEST_MAX_BATCH).
 * Under load that turns a thousand commits into a handful; when idle it adds nothing. Each caller's promise resolves
 * only after the INSERT holding its body has committed.
 */
import { randomUUID } from 'node:crypto';
import { INGEST_MAX_BATCH, INGEST_MAX_CONCURRENT_WRITES } from './limits.ts';

interface Pending {
  row: { id: string; body: string };
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface EventWriterOptions {
  insert: (rows: { id: string; body: string }[]) => Promise<void>;
  /** Called after every committed write (wakes the processing worker). */
  onStored?: () => void;
  maxBatch?: number;
  maxConcurrent?: number;
}

export function createEventWriter(options: EventWriterOptions) {
  const maxBatch = options.maxBatch ?? INGEST_MAX_BATCH;
  const maxConcurrent = options.maxConcurrent ?? INGEST_MAX_CONCURRENT_WRITES;
  let queue: Pending[] = [];
  let writing = 0;

  function flush(): void {
    while (writing < maxConcurrent && queue.length > 0) {
      const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
      queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch);
      writing++;
      options.insert(batch.map((p) => p.row)).then(
        () => {
          for (const p of batch) p.resolve();
          options.onStored?.();
        },
        (err: unknown) => {
          for (const p of batch) p.reject(err);
        },
      ).finally(() => {
        writing--;
        flush();
      });
    }
  }

  return {
    /** Resolves with the event's id once the body is committed; rejects when the database refused the write. */
    store(body: string): Promise<string> {
      const id = randomUUID();
      return new Promise<string>((resolve, reject) => {
        queue.push({ row: { id, body }, resolve: () => resolve(id), reject });
        flush();
      });
    },
  };
}

export type EventWriter = ReturnType<typeof createEventWriter>;
