/**
 * Runs due syncs (docs/knowledge.md, "Websites and files"): every interval, and at once when an owner asks, this
 * engine claims the source due first (one engine at a time per source, ../../../db/repositories/knowledge-sources.repository.ts)
 * and syncs it, then the next, until none is due. Stopping aborts the sync in flight; its claim runs out and another
 * engine (or this one, next start) runs it again.
 */
import type { KnowledgeSourcesRepository } from '../../../db/repositories/knowledge-sources.repository.ts';
import type { Logger } from '../../log.ts';
import { claimedRuns } from '../claimed-runs.ts';
import type { ExtractionPool } from './extraction-pool.ts';
import { SOURCE_POLL_MS } from './limits.ts';
import type { SyncOutcome, WebsiteSync } from './website-sync.ts';

export interface SourceSchedulerDeps {
  sources: KnowledgeSourcesRepository;
  sync: WebsiteSync;
  logger: Logger;
  /** This engine's name on its claims, and a claim's length (renewed while the sync runs). */
  engine: string;
  leaseMs: number;
  /** How often due syncs are looked for, in ms; default SOURCE_POLL_MS. 0: only when woken or asked (`runDue`). */
  intervalMs?: number;
  /** The extraction worker the syncs and uploads read with: stopped with the scheduler. */
  extraction?: Pick<ExtractionPool, 'close'>;
}

export type SourceScheduler = ReturnType<typeof createSourceScheduler>;

export function createSourceScheduler(deps: SourceSchedulerDeps) {
  const { sources, sync, logger, engine, leaseMs } = deps;
  const intervalMs = deps.intervalMs ?? SOURCE_POLL_MS;
  const runs = claimedRuns<SyncOutcome>({
    intervalMs,
    onError: (err) => logger.error({ err }, 'a knowledge source sync failed; the next look tries again'),
    /** Syncs every source due now that no other engine holds, one after another. */
    async pass(outcomes) {
      for (;;) {
        if (runs.stopped()) return;
        const at = new Date();
        const source = await sources.claimDue(engine, at, new Date(at.getTime() + leaseMs));
        if (!source) return;
        let outcome: SyncOutcome;
        try {
          outcome = await sync.run(source, runs.signal);
        } catch (err) {
          if (runs.stopped()) return;
          throw err;
        }
        logger.info({ workspaceId: source.workspace_id, sourceId: source.id, ...outcome, skipped: outcome.skipped.length }, 'knowledge source synced');
        outcomes.push(outcome);
      }
    },
  });

  return {
    /** Syncs every source due now that no other engine holds, one after another; what each sync did. */
    runDue: runs.runDue,
    /** Starts the periodic look (and one now, for what a previous run left due). */
    start: runs.start,
    /** A sync was asked for: look now instead of at the next interval. */
    wake: runs.wake,
    /** No new syncs; the one in flight is aborted and given back, and the extraction worker stopped, before this resolves. */
    async stop(): Promise<void> {
      await runs.stop();
      await deps.extraction?.close();
    },
  };
}
