/**
 * One loop for the knowledge work that engines claim from the database: the website syncs
 * (./sources/source-scheduler.ts) and the AI's questions (./doc2query/questions-worker.ts). A pass runs every
 * `intervalMs` and at once on start or when woken. A pass asked for while one runs makes that one go round again
 * instead of starting a second beside it. Stopping aborts the pass in flight (through `signal`) and waits for it.
 */
export interface ClaimedRunsOptions<T> {
  /** How often a pass runs, in ms; 0: only on start, when woken, or when asked (`runDue`). */
  intervalMs: number;
  /** One pass: it claims what is due, pushes what it did into `done`, and returns early once `stopped()`. */
  pass: (done: T[]) => Promise<void>;
  /** A pass the timer or a wake started failed; the next one tries again. */
  onError: (err: unknown) => void;
}

export interface ClaimedRuns<T> {
  /** Runs a pass now (or joins the one running, which then goes round again); what it did. */
  runDue(): Promise<T[]>;
  /** Starts the periodic passes, and one now. */
  start(): void;
  /** Something is due: a pass now instead of at the next interval. */
  wake(): void;
  /** No new passes; the one in flight is aborted, and this resolves once it has ended. */
  stop(): Promise<void>;
  /** Aborted by `stop`: give it to the I/O a pass does. */
  readonly signal: AbortSignal;
  stopped(): boolean;
}

export function claimedRuns<T>(options: ClaimedRunsOptions<T>): ClaimedRuns<T> {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<T[]> | undefined;
  let again = false;
  let stopped = false;
  const aborter = new AbortController();

  function runDue(): Promise<T[]> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      const done: T[] = [];
      try {
        do {
          again = false;
          await options.pass(done);
        } while (again && !stopped);
        return done;
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  function tick(): void {
    runDue().catch(options.onError);
  }

  return {
    runDue,
    start(): void {
      if (options.intervalMs > 0) {
        timer = setInterval(tick, options.intervalMs);
        timer.unref();
      }
      tick();
    },
    wake(): void {
      if (!stopped) tick();
    },
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      aborter.abort(new Error('the engine is stopping'));
      await running?.catch(() => {});
    },
    signal: aborter.signal,
    stopped: () => stopped,
  };
}
