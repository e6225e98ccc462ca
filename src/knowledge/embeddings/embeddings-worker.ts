/**
 * Embeds passages and phrasings in the background (docs/knowledge.md, "Embeddings"): every EMBEDDINGS_POLL_MS this
 * engine looks for workspaces whose knowledge changed since their last run (a document written, a phrasing added),
 * claims one (one engine at a time per workspace, in job_claims, renewed while it runs: two engines never embed the
 * same passage twice), and sends its texts without an up-to-date vector EMBEDDING_BATCH at a time. A sync or a turn
 * never waits for it: it reads what they committed, later.
 *
 * A text is embedded only when no vector of the current model carries its hash (new, or its text changed); synced
 * again unchanged, a passage costs nothing. When the model fails (down, refusing, not one vector per text) the run
 * stops and the workspace waits EMBEDDINGS_RETRY_MS. Stopping aborts the request in flight and gives the claim back.
 */
import type { KnowledgeEmbeddingsRepository } from '../../../db/repositories/knowledge-embeddings.repository.ts';
import { AiError } from '../../ai/ai-error.ts';
import type { Logger } from '../../log.ts';
import { claimedWorkspaceRuns } from '../claimed-runs.ts';
import type { EmbeddingCounters } from './embeddings-metrics.ts';
import type { EmbeddingsModel } from './embeddings-model.ts';
import { EMBEDDING_BATCH, EMBEDDINGS_POLL_MS, EMBEDDINGS_RETRY_MS, MAX_EMBEDDING_BATCHES_PER_RUN } from './limits.ts';

/** The hours between looks at every workspace, changed or not (a clock that lags on another engine is caught up). */
const FULL_SWEEP_MS = 60 * 60_000;

export interface EmbeddingsWorkerDeps {
  embeddings: KnowledgeEmbeddingsRepository;
  /** The background's client: EMBEDDING_BATCH_TIMEOUT_MS. */
  model: EmbeddingsModel;
  counters: EmbeddingCounters;
  /** Told when this engine stored a workspace's vectors, so its next question reads them (the semantic search's `forget`). */
  stored: (workspaceId: string) => void;
  logger: Logger;
  /** This engine's name on its claims, and a claim's length (renewed every third of it while a run goes on). */
  engine: string;
  leaseMs: number;
  /** How often due workspaces are looked for; default EMBEDDINGS_POLL_MS. 0: only when asked (`runDue`). */
  intervalMs?: number;
  /** How long a workspace waits after the model failed; default EMBEDDINGS_RETRY_MS. */
  retryMs?: number;
  now?: () => Date;
}

/** What one workspace's run did. */
export interface EmbeddingsRun {
  workspaceId: string;
  /** Texts given a vector (passages and phrasings), and requests sent. */
  embedded: number;
  requests: number;
  /** Vectors of passages that no longer exist, removed. */
  removed: number;
  /** The model failed: the run stopped there. */
  failed: boolean;
}

export type EmbeddingsWorker = ReturnType<typeof createEmbeddingsWorker>;

export function createEmbeddingsWorker(deps: EmbeddingsWorkerDeps) {
  const { embeddings, model, counters, logger, engine, leaseMs } = deps;
  const intervalMs = deps.intervalMs ?? EMBEDDINGS_POLL_MS;
  const retryMs = deps.retryMs ?? EMBEDDINGS_RETRY_MS;
  const now = deps.now ?? (() => new Date());

  /** A workspace's texts without an up-to-date vector, EMBEDDING_BATCH at a time; stops at the model's first failure. */
  async function embedWorkspace(workspaceId: string, lost: () => boolean): Promise<{ run: EmbeddingsRun; retry: boolean }> {
    const run: EmbeddingsRun = { workspaceId, embedded: 0, requests: 0, removed: 0, failed: false };
    for (let batches = 0; batches < MAX_EMBEDDING_BATCHES_PER_RUN && !runs.stopped() && !lost(); batches++) {
      const pending = await embeddings.pending(workspaceId, model.name, EMBEDDING_BATCH);
      if (pending.length === 0) break;
      counters.requests.inc({ purpose: 'passages' });
      run.requests += 1;
      let answer;
      try {
        answer = await model.embed(pending.map((p) => p.text), runs.signal);
      } catch (err) {
        if (runs.stopped()) break;
        if (!(err instanceof AiError)) throw err;
        counters.failures.inc({ purpose: 'passages', reason: err.reason });
        logger.warn({ workspaceId, reason: err.reason, httpStatus: err.httpStatus, err: err.message }, 'the embedding model failed; the workspace waits and tries again');
        run.failed = true;
        break;
      }
      const { vectors, tokens } = answer;
      if (tokens !== null) counters.tokens.inc({ purpose: 'passages' }, tokens);
      // A request's tokens are shared among its texts (the first takes the rest), so their sum is its cost.
      const share = (i: number) => (tokens === null ? null : Math.floor(tokens / pending.length) + (i === 0 ? tokens % pending.length : 0));
      await embeddings.store(workspaceId, model.name, pending.map((target, i) => ({ target, vector: vectors[i]!, tokens: share(i) })), now());
      counters.vectors.inc(pending.length);
      run.embedded += pending.length;
      deps.stored(workspaceId);
    }
    if (!runs.stopped() && !lost() && !run.failed) {
      run.removed = await embeddings.removeStale(workspaceId);
      if (run.removed > 0) deps.stored(workspaceId);
    }
    return { run, retry: run.failed };
  }

  const runs = claimedWorkspaceRuns<EmbeddingsRun>({
    jobs: embeddings,
    engine,
    leaseMs,
    intervalMs,
    retryMs,
    fullSweepMs: FULL_SWEEP_MS,
    now,
    logger,
    what: "embedding the knowledge's passages",
    work: embedWorkspace,
    onRun: (run) => {
      if (run.embedded + run.removed > 0 || run.failed) logger.info({ ...run }, "knowledge's passages embedded");
    },
  });

  return {
    /** Runs every workspace due now that no other engine holds, one after another; what each run did. */
    runDue: runs.runDue,
    /** Starts the periodic look (and one now). */
    start: runs.start,
    /** No new runs; the request in flight is aborted and the claim given back before this resolves. */
    async stop(): Promise<void> {
      await runs.stop();
      await model.close().catch(() => {});
    },
  };
}
