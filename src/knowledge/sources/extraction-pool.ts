/**
 * Reading text off the engine's event loop (docs/knowledge.md, "Websites and files" → "Reading, off the engine's
 * loop"). Readability over a page's DOM, pdf.js over a PDF and mammoth over a Word document take tens of milliseconds
 * to seconds of CPU and hundreds of MB of short-lived heap: on the engine's own thread they stalled its event loop for
 * up to 2 s (mark-compacts of a 300-400 MB heap), and a phone turn on the same engine waited.
 *
 * One worker thread, started when a document comes and stopped after EXTRACTION_IDLE_MS without one, reads one
 * document at a time; the rest wait their turn. Its heap is bounded (EXTRACTION_HEAP_MB): a document that needs more
 * kills the worker, not the engine. Each document has a time limit (PAGE_READ_MS, FILE_READ_MS): past it the worker
 * is terminated. Either way that document fails with an {@link ExtractionFailed} saying why in words, and the next one
 * gets a new worker (counted as a restart).
 */
import { Worker } from 'node:worker_threads';
import { unreadable } from '../extract/unreadable.ts';
import type { ExtractedText } from '../extract/index.ts';
import type { ExtractionJob, ExtractionResult, FileJob, PageJob, PageRead } from './extraction-jobs.ts';
import type { FromWorker, ToWorker } from './extraction-worker.ts';
import { EXTRACTION_HEAP_MB, EXTRACTION_IDLE_MS, FILE_READ_MS, PAGE_READ_MS } from './limits.ts';

/** Why a worker was replaced: a document ran out of time or memory, or the worker died otherwise. */
export type ExtractionFailure = 'time_limit' | 'out_of_memory' | 'crashed';

/** A document the worker could not read; `message` finishes a sentence about it ("… took too long to read"). */
export class ExtractionFailed extends Error {
  readonly reason: ExtractionFailure;
  constructor(reason: ExtractionFailure, message: string) {
    super(message);
    this.name = 'ExtractionFailed';
    this.reason = reason;
  }
}

export interface ExtractionPoolOptions {
  /** The worker's old-generation heap in MB; default EXTRACTION_HEAP_MB. */
  heapMb?: number;
  /** Time limits per page and per file in ms; default PAGE_READ_MS, FILE_READ_MS. */
  pageMs?: number;
  fileMs?: number;
  /** How long an idle worker lives, in ms; default EXTRACTION_IDLE_MS. */
  idleMs?: number;
  /** The worker's module; default ./extraction-worker.ts (the tests give one that can misbehave on demand). */
  workerUrl?: URL;
  /** A worker was replaced after a document failed it (the metric botlink_knowledge_extraction_restarts_total). */
  onRestart?: (reason: ExtractionFailure) => void;
}

interface Task {
  id: number;
  job: ExtractionJob;
  timeoutMs: number;
  resolve: (result: ExtractionResult) => void;
  reject: (err: Error) => void;
}

export class ExtractionPool {
  readonly #options: Required<Omit<ExtractionPoolOptions, 'onRestart'>> & Pick<ExtractionPoolOptions, 'onRestart'>;
  readonly #queue: Task[] = [];
  #worker: Worker | undefined;
  #ready = false;
  #current: Task | undefined;
  /** Why the current worker is going away (set before it exits), for its current task's error. */
  #ending: ExtractionFailed | undefined;
  #deadline: NodeJS.Timeout | undefined;
  #idle: NodeJS.Timeout | undefined;
  #nextId = 1;
  #closed = false;
  /** Workers started, and replaced after a failure: for the tests and the metric. */
  started = 0;
  restarts = 0;

  constructor(options: ExtractionPoolOptions = {}) {
    this.#options = {
      heapMb: options.heapMb ?? EXTRACTION_HEAP_MB,
      pageMs: options.pageMs ?? PAGE_READ_MS,
      fileMs: options.fileMs ?? FILE_READ_MS,
      idleMs: options.idleMs ?? EXTRACTION_IDLE_MS,
      workerUrl: options.workerUrl ?? new URL('./extraction-worker.ts', import.meta.url),
      onRestart: options.onRestart,
    };
  }

  /** A fetched page's text, links and robots directives; ExtractionFailed when it cannot be read in time or memory. */
  async readPage(job: Omit<PageJob, 'kind'>): Promise<PageRead> {
    const result = await this.#run({ kind: 'page', ...job }, this.#options.pageMs);
    if (result.kind !== 'page') throw new Error('the extraction worker answered a page with a file');
    return { extracted: result.extracted, links: result.links, directives: result.directives };
  }

  /**
   * An uploaded file's text; AppError('unprocessable') with a sentence naming the file when it cannot be read (as
   * extractFile), including when it takes too long or too much memory.
   */
  async readFile(job: Omit<FileJob, 'kind'>): Promise<ExtractedText> {
    try {
      const result = await this.#run({ kind: 'file', ...job }, this.#options.fileMs);
      if (result.kind !== 'file') throw new Error('the extraction worker answered a file with a page');
      return result.extracted;
    } catch (err) {
      if (err instanceof ExtractionFailed) throw unreadable(`"${job.name}" ${err.message}.`);
      throw err;
    }
  }

  /** Stops the worker (what it reads fails) and refuses further documents: the engine is stopping. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idle);
    const stopping = new ExtractionFailed('crashed', 'could not be read: the engine is stopping');
    for (const task of this.#queue.splice(0)) task.reject(stopping);
    if (this.#worker) {
      this.#ending = stopping;
      await this.#worker.terminate();
    }
  }

  #run(job: ExtractionJob, timeoutMs: number): Promise<ExtractionResult> {
    if (this.#closed) return Promise.reject(new ExtractionFailed('crashed', 'could not be read: the engine is stopping'));
    return new Promise((resolve, reject) => {
      this.#queue.push({ id: this.#nextId++, job, timeoutMs, resolve, reject });
      this.#next();
    });
  }

  /** Gives the worker its next document (starting one if there is none), or lets it go idle. */
  #next(): void {
    if (this.#current || this.#closed) return;
    const task = this.#queue.shift();
    if (!task) {
      this.#worker?.unref();
      clearTimeout(this.#idle);
      if (this.#worker) {
        this.#idle = setTimeout(() => void this.#retire(), this.#options.idleMs);
        this.#idle.unref();
      }
      return;
    }
    clearTimeout(this.#idle);
    this.#current = task;
    const worker = this.#worker ?? this.#start();
    worker.ref();
    if (this.#ready) this.#send(worker, task);
  }

  #send(worker: Worker, task: Task): void {
    this.#deadline = setTimeout(() => {
      const seconds = task.timeoutMs / 1000;
      this.#ending = new ExtractionFailed('time_limit', `took too long to read (more than ${seconds} ${seconds === 1 ? 'second' : 'seconds'})`);
      void worker.terminate();
    }, task.timeoutMs);
    // The document's bytes go over as a copy of their own, transferred: a cheap copy here instead of the structured
    // clone of a view (which copies the whole buffer under it) on the engine's loop.
    const bytes = new Uint8Array(task.job.bytes);
    worker.postMessage({ id: task.id, job: { ...task.job, bytes } } satisfies ToWorker, [bytes.buffer]);
  }

  #start(): Worker {
    this.started++;
    this.#ready = false;
    this.#ending = undefined;
    const worker = new Worker(this.#options.workerUrl, { resourceLimits: { maxOldGenerationSizeMb: this.#options.heapMb } });
    this.#worker = worker;
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'ready') {
        this.#ready = true;
        if (this.#current) this.#send(worker, this.#current);
        return;
      }
      const task = this.#current;
      if (!task || task.id !== message.id) return;
      clearTimeout(this.#deadline);
      this.#current = undefined;
      if (message.type === 'done') task.resolve(message.result);
      else task.reject(message.unreadable ? unreadable(message.message) : new ExtractionFailed('crashed', `could not be read: ${message.message}`));
      this.#next();
    });
    worker.on('error', (err: Error & { code?: string }) => {
      this.#ending ??=
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new ExtractionFailed('out_of_memory', `needed more memory to read than the ${this.#options.heapMb} MB it may take`)
          : new ExtractionFailed('crashed', `could not be read: the reader stopped (${err.message})`);
    });
    worker.on('exit', () => {
      if (this.#worker !== worker) return;
      clearTimeout(this.#deadline);
      this.#worker = undefined;
      const started = this.#ready;
      this.#ready = false;
      const failure = this.#ending ?? new ExtractionFailed('crashed', 'could not be read: the reader stopped');
      this.#ending = undefined;
      const task = this.#current;
      this.#current = undefined;
      if (task) {
        task.reject(failure);
        if (!this.#closed) {
          this.restarts++;
          this.#options.onRestart?.(failure.reason);
        }
      }
      // A worker that cannot even start would fail every document the same way: they fail now, not in a loop.
      if (!started) for (const waiting of this.#queue.splice(0)) waiting.reject(failure);
      this.#next();
    });
    return worker;
  }

  /** An idle worker goes; its heap with it. */
  async #retire(): Promise<void> {
    const worker = this.#worker;
    if (!worker || this.#current) return;
    this.#worker = undefined;
    this.#ready = false;
    await worker.terminate();
  }
}
