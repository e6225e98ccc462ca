/**
 * The question's side of the embeddings (docs/knowledge.md, "Embeddings"): each workspace's vectors kept in this
 * process, the question embedded (one request, EMBEDDING_QUESTION_TIMEOUT_MS) and the passages nearest it by cosine.
 *
 * The vectors are read per workspace in the background, as the vocabulary is (../knowledge-cache.ts): a question never
 * waits for them; until they are read (or when the workspace has none) no request is made and the lexical search
 * answers alone. They are looked at again after EMBEDDINGS_CHECK_MS (at once after this process stored some) and read
 * again only when their version changed. At most MAX_EMBEDDING_WORKSPACES workspaces and MAX_CACHED_VECTOR_FLOATS
 * numbers are kept, the least recently asked dropped first. A workspace's vectors are read by its id only: no search
 * ever ranks another workspace's.
 *
 * Cosine in the engine (vectors normalised when read, a dot product per vector): pgvector is a later step.
 */
import type { ChunkHit } from '../../../db/repositories/knowledge-search.repository.ts';
import type { KnowledgeEmbeddingsRepository } from '../../../db/repositories/knowledge-embeddings.repository.ts';
import { AiError } from '../../ai/ai-error.ts';
import type { EmbeddingCounters } from './embeddings-metrics.ts';
import type { EmbeddingsModel } from './embeddings-model.ts';
import { EMBEDDING_TOP_K, EMBEDDINGS_CHECK_MS, MAX_CACHED_VECTOR_FLOATS, MAX_EMBEDDING_WORKSPACES } from './limits.ts';

/** A passage near the question: its chunk id and the cosine of its nearest vector (its own or a phrasing's). */
export interface Near {
  id: string;
  similarity: number;
}

/** A workspace's vectors: row i of `matrix` (normalised, `dimensions` long) stands for chunk `ids[i]`. */
interface VectorIndex {
  ids: string[];
  matrix: Float32Array;
  dimensions: number;
}

interface Entry {
  index: VectorIndex | null;
  version: string | null;
  checkedAt: number;
  loading: Promise<void> | null;
}

export interface SemanticSearchDeps {
  embeddings: Pick<KnowledgeEmbeddingsRepository, 'vectors' | 'version' | 'hits'>;
  /** The question's client: EMBEDDING_QUESTION_TIMEOUT_MS. */
  model: EmbeddingsModel;
  counters: EmbeddingCounters;
  now?: () => number;
  /** Numbers kept for all workspaces together; default MAX_CACHED_VECTOR_FLOATS. */
  maxFloats?: number;
}

export interface SemanticSearch {
  /**
   * The passages nearest the question, best first (at most EMBEDDING_TOP_K); null at once, with no request, when this
   * process holds no vectors for the workspace. The promise never rejects: a slow or failed request is counted and
   * gives null (the lexical search answers alone).
   */
  nearest(workspaceId: string, question: string, signal?: AbortSignal): Promise<Near[] | null> | null;
  /** The passages of these chunk ids in the workspace, as the lexical search gives its hits. */
  hits(workspaceId: string, chunkIds: readonly string[], signal?: AbortSignal): Promise<ChunkHit[]>;
  /** Reads the workspace's vectors now if they changed (tests, and after this process stored some). */
  warm(workspaceId: string): Promise<void>;
  /** This process stored vectors of the workspace: the next question looks again. */
  forget(workspaceId: string): void;
  close(): Promise<void>;
}

/** Row-normalised vectors of the most common length (another model's, during a change of model, are left out). */
function buildIndex(rows: readonly { chunk_id: string; vector: readonly (number | string)[] }[]): VectorIndex | null {
  const lengths = new Map<number, number>();
  for (const r of rows) lengths.set(r.vector.length, (lengths.get(r.vector.length) ?? 0) + 1);
  let dimensions = 0;
  let most = 0;
  for (const [length, n] of lengths) if (length > 0 && n > most) [dimensions, most] = [length, n];
  if (dimensions === 0) return null;
  const kept = rows.filter((r) => r.vector.length === dimensions);
  const matrix = new Float32Array(kept.length * dimensions);
  const ids: string[] = [];
  kept.forEach((r, row) => {
    let norm = 0;
    for (let i = 0; i < dimensions; i++) norm += Number(r.vector[i]) ** 2;
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let i = 0; i < dimensions; i++) matrix[row * dimensions + i] = Number(r.vector[i]) * scale;
    ids.push(r.chunk_id);
  });
  return { ids, matrix, dimensions };
}

/** The EMBEDDING_TOP_K chunks nearest `question` (a chunk's best vector counts), best first. */
export function nearestIn(index: VectorIndex, question: readonly number[], k = EMBEDDING_TOP_K): Near[] {
  const { dimensions, matrix, ids } = index;
  if (question.length !== dimensions) return [];
  let norm = 0;
  for (const x of question) norm += x * x;
  if (norm === 0) return [];
  const q = Float32Array.from(question, (x) => x / Math.sqrt(norm));
  const best = new Map<string, number>();
  for (let row = 0; row < ids.length; row++) {
    let dot = 0;
    const at = row * dimensions;
    for (let i = 0; i < dimensions; i++) dot += matrix[at + i]! * q[i]!;
    const id = ids[row]!;
    const seen = best.get(id);
    if (seen === undefined || dot > seen) best.set(id, dot);
  }
  const top: Near[] = [];
  for (const [id, similarity] of best) {
    if (top.length === k && similarity <= top[k - 1]!.similarity) continue;
    let i = top.length;
    while (i > 0 && top[i - 1]!.similarity < similarity) i--;
    top.splice(i, 0, { id, similarity: Math.round(similarity * 10_000) / 10_000 });
    if (top.length > k) top.pop();
  }
  return top;
}

export function createSemanticSearch(deps: SemanticSearchDeps): SemanticSearch {
  const { embeddings, model, counters } = deps;
  const now = deps.now ?? (() => Date.now());
  const maxFloats = deps.maxFloats ?? MAX_CACHED_VECTOR_FLOATS;
  const entries = new Map<string, Entry>();

  function held(): number {
    let floats = 0;
    for (const e of entries.values()) floats += e.index?.matrix.length ?? 0;
    return floats;
  }

  /** Drops the least recently asked workspaces (not `keep`) until the limits hold. */
  function trim(keep: string): void {
    for (const id of entries.keys()) {
      if (entries.size <= MAX_EMBEDDING_WORKSPACES && held() <= maxFloats) return;
      if (id !== keep) entries.delete(id);
    }
  }

  function refresh(workspaceId: string): Promise<void> {
    let entry = entries.get(workspaceId);
    if (!entry) {
      entry = { index: null, version: null, checkedAt: 0, loading: null };
      entries.set(workspaceId, entry);
    }
    const target = entry;
    if (target.loading) return target.loading;
    target.loading = (async () => {
      try {
        const version = await embeddings.version(workspaceId);
        if (version !== target.version) {
          target.index = buildIndex(await embeddings.vectors(workspaceId, model.name));
          target.version = version;
          trim(workspaceId);
          // One workspace alone above the budget is not kept: its questions go lexical.
          if ((target.index?.matrix.length ?? 0) > maxFloats) target.index = null;
        }
      } catch {
        // Kept as it was: the next look tries again.
      } finally {
        target.checkedAt = now();
        target.loading = null;
      }
    })();
    return target.loading;
  }

  function indexOf(workspaceId: string): VectorIndex | null {
    const entry = entries.get(workspaceId);
    if (!entry || now() - entry.checkedAt >= EMBEDDINGS_CHECK_MS) void refresh(workspaceId);
    if (!entry) return null;
    // Most recently asked last, so the oldest unasked workspace goes first.
    entries.delete(workspaceId);
    entries.set(workspaceId, entry);
    return entry.index;
  }

  async function embedQuestion(index: VectorIndex, question: string, signal?: AbortSignal): Promise<Near[] | null> {
    counters.requests.inc({ purpose: 'question' });
    try {
      const { vectors, tokens } = await model.embed([question], signal);
      if (tokens !== null) counters.tokens.inc({ purpose: 'question' }, tokens);
      return nearestIn(index, vectors[0]!);
    } catch (err) {
      counters.failures.inc({ purpose: 'question', reason: err instanceof AiError ? err.reason : 'connection' });
      return null;
    }
  }

  return {
    nearest(workspaceId, question, signal) {
      const index = indexOf(workspaceId);
      if (!index || index.ids.length === 0) return null;
      return embedQuestion(index, question, signal);
    },
    hits: (workspaceId, chunkIds, signal) => embeddings.hits(workspaceId, chunkIds, signal),
    warm: refresh,
    forget(workspaceId) {
      const entry = entries.get(workspaceId);
      if (entry) entry.checkedAt = 0;
    },
    close: () => model.close(),
  };
}
