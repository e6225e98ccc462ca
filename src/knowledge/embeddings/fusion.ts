/**
 * The lexical ranking and the embeddings' fused by reciprocal rank fusion (docs/knowledge.md, "Embeddings"): each
 * passage gets 1 / (RRF_K + rank) from each ranking it is in (rank from 1), and the sum orders them.
 *
 * Only the order changes, and what may be handed to a chat model: a passage's `score` stays its lexical relevance, so
 * an embedding never makes a passage strong, confident or answerable by the embedded answerer on its own.
 */
import type { KnowledgePassage } from '../types.ts';
import { EMBEDDING_HANDED, EMBEDDING_HANDED_MARGIN, RRF_K } from './limits.ts';
import type { Near } from './semantic-search.ts';

export interface Fused {
  /** Best first by the fused rank (ties: the higher lexical score, then the lexical order), at most `limit`. */
  passages: KnowledgePassage[];
  /**
   * The nearest EMBEDDING_HANDED by cosine within EMBEDDING_HANDED_MARGIN of the nearest: handed to a model even when
   * their lexical score is below the relevance rules (RELEVANT_FLOOR, RELEVANT_MARGIN); the share of the knowledge
   * base (RELEVANT_SHARE) still bounds them.
   */
  handed: ReadonlySet<string>;
}

/**
 * `lexical`: the lexical search's passages, best first; `near`: the nearest passages by cosine, best first;
 * `extra`: the passages of `near` the lexical search did not return, ranked by their lexical relevance.
 */
export function fuseRankings(lexical: readonly KnowledgePassage[], near: readonly Near[], extra: readonly KnowledgePassage[], limit: number): Fused {
  const passages = new Map<string, KnowledgePassage>();
  for (const p of [...lexical, ...extra]) if (!passages.has(p.id)) passages.set(p.id, p);
  const fused = new Map<string, number>();
  const add = (id: string, rank: number) => {
    if (passages.has(id)) fused.set(id, (fused.get(id) ?? 0) + 1 / (RRF_K + rank));
  };
  lexical.forEach((p, i) => add(p.id, i + 1));
  // A vector pointing away from the question (cosine 0 or less) says nothing of the passage.
  const nearby = near.filter((n) => n.similarity > 0 && passages.has(n.id));
  nearby.forEach((n, i) => add(n.id, i + 1));
  const lexicalRank = new Map(lexical.map((p, i) => [p.id, i]));
  const ordered = [...fused.entries()]
    .map(([id, rrf]) => ({ passage: passages.get(id)!, rrf, rank: lexicalRank.get(id) ?? Number.MAX_SAFE_INTEGER }))
    .sort((a, b) => b.rrf - a.rrf || b.passage.score - a.passage.score || a.rank - b.rank)
    .slice(0, limit)
    .map((r) => r.passage);
  const closest = nearby[0]?.similarity ?? 0;
  const handed = nearby.slice(0, EMBEDDING_HANDED).filter((n) => n.similarity >= closest - EMBEDDING_HANDED_MARGIN);
  return { passages: ordered, handed: new Set(handed.map((n) => n.id)) };
}
