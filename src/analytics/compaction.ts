/**
 * The roll-ups' compaction (docs/analytics.md, "How the figures are kept"): concurrent writers count into slots of
 * their own (db/analytics-rollup.ts), up to ANALYTICS_SLOTS rows per workspace, hour and channel; every engine folds
 * the slots of past hours into one row now and then, so a year's Overview reads one row per hour and channel. Engines
 * may fold at once: each skips the rows another holds. The figures are the same before and after.
 */
import type { AnalyticsRepository } from '../../db/repositories/analytics.repository.ts';
import type { Logger } from '../log.ts';

/** How often each engine folds past hours' slots. */
export const COMPACTION_INTERVAL_MS = 10 * 60_000;
/** Keys folded per statement: a few milliseconds of work, never a long lock. */
export const COMPACTION_BATCH = 2_000;

export interface Compaction {
  /** Folds until nothing of past hours is left in other slots; the rows moved. */
  run(): Promise<number>;
  /** Runs every `intervalMs` (0: never by itself); the answer stops it. */
  start(): () => void;
}

export function createCompaction(deps: { analytics: Pick<AnalyticsRepository, 'foldPastSlots'>; logger: Logger; intervalMs?: number }): Compaction {
  const intervalMs = deps.intervalMs ?? COMPACTION_INTERVAL_MS;
  let running: Promise<number> | null = null;

  async function fold(): Promise<number> {
    let total = 0;
    for (;;) {
      const moved = await deps.analytics.foldPastSlots(COMPACTION_BATCH);
      total += moved;
      if (moved < COMPACTION_BATCH) return total;
    }
  }

  return {
    run() {
      running ??= fold().finally(() => (running = null));
      return running;
    },
    start() {
      if (intervalMs === 0) return () => {};
      const timer = setInterval(() => {
        this.run().catch((err: unknown) => deps.logger.warn({ err }, "folding the Overview's roll-ups failed; the next run tries again"));
      }, intervalMs);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}
