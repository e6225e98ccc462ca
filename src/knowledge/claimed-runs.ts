/**
 * One loop for the knowledge work that engines claim from the database: the website syncs
 * (./sources/source-scheduler.ts) and the AI's questions (./doc2query/questions-worker.ts). A pass runs every
 * `intervalMs` and at once on start or when woken. A pass asked for while one runs makes that one go round again
 * instead of starting a second beside it. Stopping aborts the pass in flight (through `signal`) and waits for it.
 * `claimedWorkspaceRuns` below adds the claim of one workspace's run in job_claims around such a pass.
 */
import type { WorkspaceJobClaims } from '../../db/repositories/workspace-job-claims.ts';
import { renewEveryMs } from '../leases/durations.ts';
import type { Logger } from '../log.ts';

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

/** What a workspace's background work needs of its repository: what is due, its watermark, and its claim. */
export interface WorkspaceJobs extends WorkspaceJobClaims {
  /** Workspaces changed since their last complete run (every one with work when `everything`) whose claim ran out at `at`. */
  dueWorkspaces(at: Date, everything: boolean): Promise<string[]>;
  /** The newest change a run starts from: its watermark once it got through. */
  latestChange(workspaceId: string): Promise<Date | null>;
}

export interface WorkspaceRunsOptions<R> {
  jobs: WorkspaceJobs;
  /** This engine's name on its claims, and a claim's length (renewed every third of it while a run goes on). */
  engine: string;
  leaseMs: number;
  /** How often due workspaces are looked for (0: only when asked), and how long a workspace waits after a failed run. */
  intervalMs: number;
  retryMs: number;
  /** How often every workspace is looked at, changed or not (a clock that lags on another engine is caught up). */
  fullSweepMs: number;
  now: () => Date;
  logger: Logger;
  /** The work in log lines: "the AI's questions". */
  what: string;
  /**
   * One claimed workspace's work. `lost()` turns true once another engine holds the claim: stop then. `retry` true:
   * the run did not get through (the model failed), and the workspace waits `retryMs` with its watermark unchanged.
   */
  work(workspaceId: string, lost: () => boolean): Promise<{ run: R; retry: boolean }>;
  /** A run ended (logged by the caller as it sees fit). */
  onRun(run: R): void;
}

/**
 * Background work per workspace, one engine at a time (the AI's questions, the embeddings): each pass claims every
 * due workspace no other engine holds, one after another, renews the claim while its work runs, and then finishes it
 * (the watermark kept) or postpones it (at once when stopping or lost, after `retryMs` when the run failed or threw).
 */
export function claimedWorkspaceRuns<R>(o: WorkspaceRunsOptions<R>): ClaimedRuns<R> {
  const { jobs, engine, leaseMs, now, logger } = o;
  let lastFullSweep = 0;
  const retryAt = () => new Date(now().getTime() + o.retryMs);

  async function runClaimed(workspaceId: string): Promise<R> {
    let lost = false;
    const heartbeat = setInterval(() => {
      jobs.renew(workspaceId, engine, new Date(now().getTime() + leaseMs)).then(
        (held) => (lost ||= !held),
        (err: unknown) => logger.warn({ err, workspaceId }, `renewing the claim of ${o.what} failed; the next renewal tries again`),
      );
    }, renewEveryMs(leaseMs));
    try {
      const watermark = await jobs.latestChange(workspaceId);
      const { run, retry } = await o.work(workspaceId, () => lost);
      if (runs.stopped() || lost) await jobs.postpone(workspaceId, engine, null);
      else if (retry) await jobs.postpone(workspaceId, engine, retryAt());
      else await jobs.finish(workspaceId, engine, watermark);
      return run;
    } catch (err) {
      await jobs.postpone(workspaceId, engine, retryAt()).catch(() => {});
      throw err;
    } finally {
      clearInterval(heartbeat);
    }
  }

  const runs = claimedRuns<R>({
    intervalMs: o.intervalMs,
    onError: (err) => logger.error({ err }, `${o.what} failed; the next look tries again`),
    async pass(done) {
      const at = now();
      const everything = at.getTime() - lastFullSweep >= o.fullSweepMs;
      if (everything) lastFullSweep = at.getTime();
      for (const workspaceId of await jobs.dueWorkspaces(at, everything)) {
        if (runs.stopped()) return;
        const claimedAt = now();
        if (!(await jobs.claim(workspaceId, engine, claimedAt, new Date(claimedAt.getTime() + leaseMs)))) continue;
        const run = await runClaimed(workspaceId);
        o.onRun(run);
        done.push(run);
      }
    },
  });
  return runs;
}
