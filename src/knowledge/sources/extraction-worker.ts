/**
 * The extraction worker thread (./extraction-pool.ts starts it): runs one job at a time (./extraction-jobs.ts) and
 * answers with its result, or with why it failed: an unreadable file's sentence for its owner, or the error's message.
 * It says `ready` once its libraries are loaded, so a job's time limit counts reading, not starting.
 */
import { parentPort } from 'node:worker_threads';
import { AppError } from '../../errors.ts';
import { runExtraction, type ExtractionJob } from './extraction-jobs.ts';

export type ToWorker = { id: number; job: ExtractionJob };
export type FromWorker =
  | { type: 'ready' }
  | { type: 'done'; id: number; result: Awaited<ReturnType<typeof runExtraction>> }
  | { type: 'failed'; id: number; unreadable: boolean; message: string };

const port = parentPort;
if (!port) throw new Error('extraction-worker.ts runs as a worker thread (./extraction-pool.ts)');

port.on('message', (message: ToWorker) => {
  runExtraction(message.job).then(
    (result) => port.postMessage({ type: 'done', id: message.id, result } satisfies FromWorker),
    (err: unknown) => {
      const unreadable = err instanceof AppError && err.code === 'unprocessable';
      port.postMessage({ type: 'failed', id: message.id, unreadable, message: err instanceof Error ? err.message : String(err) } satisfies FromWorker);
    },
  );
});
port.postMessage({ type: 'ready' } satisfies FromWorker);
