/**
 * The embeddings' counters on /metrics (docs/knowledge.md, "Embeddings"), shared by the background worker and the
 * question's embedding: those already in the registry are taken, so both register them once.
 */
import { Counter, type Registry } from 'prom-client';

/** Why embeddings were asked for: a batch of passages and phrasings, or a customer's question. */
export type EmbeddingPurpose = 'passages' | 'question';

export function embeddingCounters(registry: Registry) {
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> =>
    (registry.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter({ name, help, labelNames, registers: [registry] });
  return {
    requests: counter('botlink_knowledge_embedding_requests_total', 'Requests to the embedding model, by purpose (passages, question).', ['purpose']),
    tokens: counter('botlink_knowledge_embedding_tokens_total', 'Tokens the embedding model counted, by purpose (passages, question).', ['purpose']),
    failures: counter(
      'botlink_knowledge_embedding_failures_total',
      "Requests to the embedding model that failed, by purpose and reason (a question's: the lexical search answered alone).",
      ['purpose', 'reason'],
    ),
    vectors: counter('botlink_knowledge_embedding_vectors_total', 'Vectors of passages and phrasings this engine stored.'),
  };
}

export type EmbeddingCounters = ReturnType<typeof embeddingCounters>;
