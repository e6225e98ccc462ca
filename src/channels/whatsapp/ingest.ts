/**
 * Storing raw webhook bodies before the 200 (docs/whatsapp.md, "Durable first"). Meta counts a webhook as delivered
 * on our 200, so the body must be committed before we answer; processing comes after.
 *
 * Writes are grouped the way a database groups commits (db/group-commit.ts, the one batcher): the first body is
 * written at once, and bodies that arrive while writes are in flight wait for the next free write and go in one INSERT
 * together (up to INGEST_MAX_BATCH). Under load that turns a thousand commits into a handful; when idle it adds
 * nothing. Each caller's promise resolves only after the INSERT holding its body has committed, and a batch that fails
 * is written body by body, so one body the database refuses fails alone.
 */
import { randomUUID } from 'node:crypto';
import { groupCommit } from '../../../db/group-commit.ts';
import { INGEST_MAX_BATCH, INGEST_MAX_CONCURRENT_WRITES } from './limits.ts';

export interface EventWriterOptions {
  insert: (rows: { id: string; body: string }[]) => Promise<void>;
  /** Called after every committed write (wakes the processing worker). */
  onStored?: () => void;
  maxBatch?: number;
  maxConcurrent?: number;
}

export function createEventWriter(options: EventWriterOptions) {
  const commit = groupCommit<{ id: string; body: string }>({
    write: async (rows) => {
      await options.insert(rows);
      options.onStored?.();
    },
    maxBatch: options.maxBatch ?? INGEST_MAX_BATCH,
    concurrency: options.maxConcurrent ?? INGEST_MAX_CONCURRENT_WRITES,
  });

  return {
    /** Resolves with the event's id once the body is committed; rejects when the database refused the write. */
    async store(body: string): Promise<string> {
      const id = randomUUID();
      await commit.add({ id, body });
      return id;
    },
  };
}

export type EventWriter = ReturnType<typeof createEventWriter>;
