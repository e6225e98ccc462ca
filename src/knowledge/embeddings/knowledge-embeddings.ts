/**
 * The optional embeddings put together (docs/knowledge.md, "Embeddings"): two clients of the embedding model (the
 * background's batches, a turn's question with its short deadline), the question's side for the knowledge search
 * (./semantic-search.ts) and the background worker (./embeddings-worker.ts), sharing one set of counters.
 */
import type { Registry } from 'prom-client';
import type { KnowledgeEmbeddingsRepository } from '../../../db/repositories/knowledge-embeddings.repository.ts';
import type { Logger } from '../../log.ts';
import { embeddingCounters } from './embeddings-metrics.ts';
import { createEmbeddingsModel } from './embeddings-model.ts';
import { createEmbeddingsWorker } from './embeddings-worker.ts';
import { EMBEDDING_BATCH_TIMEOUT_MS, EMBEDDING_QUESTION_CONNECTIONS, EMBEDDING_QUESTION_TIMEOUT_MS } from './limits.ts';
import { createSemanticSearch } from './semantic-search.ts';

export interface KnowledgeEmbeddingsDeps {
  /** LLM_BASE_URL, LLM_API_KEY and LLM_EMBEDDING_MODEL. */
  llm: { baseUrl: string; apiKey: string | null; embeddingModel: string };
  embeddings: KnowledgeEmbeddingsRepository;
  registry: Registry;
  logger: Logger;
  engine: string;
  leaseMs: number;
  /** How often due workspaces are looked for; default EMBEDDINGS_POLL_MS; 0: only when asked. */
  intervalMs?: number;
  /** The wait after the model failed; default EMBEDDINGS_RETRY_MS. */
  retryMs?: number;
  /** The question's deadline; default EMBEDDING_QUESTION_TIMEOUT_MS. */
  questionTimeoutMs?: number;
  now?: () => Date;
}

export type KnowledgeEmbeddings = ReturnType<typeof createKnowledgeEmbeddings>;

export function createKnowledgeEmbeddings(deps: KnowledgeEmbeddingsDeps) {
  const { llm } = deps;
  const counters = embeddingCounters(deps.registry);
  const client = (timeoutMs: number, connections: number) =>
    createEmbeddingsModel({ baseUrl: llm.baseUrl, apiKey: llm.apiKey, model: llm.embeddingModel, timeoutMs, connections });
  const now = deps.now ?? (() => new Date());
  const semantic = createSemanticSearch({
    embeddings: deps.embeddings,
    model: client(deps.questionTimeoutMs ?? EMBEDDING_QUESTION_TIMEOUT_MS, EMBEDDING_QUESTION_CONNECTIONS),
    counters,
    now: () => now().getTime(),
  });
  const worker = createEmbeddingsWorker({
    embeddings: deps.embeddings,
    model: client(EMBEDDING_BATCH_TIMEOUT_MS, 1),
    counters,
    stored: (workspaceId) => semantic.forget(workspaceId),
    logger: deps.logger,
    engine: deps.engine,
    leaseMs: deps.leaseMs,
    now,
    ...(deps.intervalMs === undefined ? {} : { intervalMs: deps.intervalMs }),
    ...(deps.retryMs === undefined ? {} : { retryMs: deps.retryMs }),
  });
  return {
    semantic,
    worker,
    /** What the Knowledge screen shows: the vectors of the current model, the passages with one, their tokens. */
    summary: (workspaceId: string) => deps.embeddings.summary(workspaceId, llm.embeddingModel),
    /** The worker stopped (its batch aborted, its claim given back) and both clients closed. */
    async stop(): Promise<void> {
      await worker.stop();
      await semantic.close().catch(() => {});
    },
  };
}
