/** What the knowledge base gives the AI: passages of synced pages and products, each with a normalised score. */

export interface KnowledgePassage {
  /** Stable id of the chunk. */
  id: string;
  source: 'page' | 'product';
  /** The page's or product's external_id from the sync API. */
  externalId: string;
  title: string;
  url: string | null;
  /** The chunk's text (plain text, at most a few hundred words). */
  text: string;
  /** 0..1: the weighted share of the question's words the passage holds (src/knowledge/query.ts, `relevance`). */
  score: number;
  /** The passage's language (primary subtag), given only when it is not the question's (found across languages). */
  language?: string;
}

export interface KnowledgeSearchResult {
  passages: KnowledgePassage[];
  /** True when the best passage is above the confidence threshold. */
  confident: boolean;
  /**
   * How the hits were found: the precise query (every group of the question), or the recall fallback (any word); or,
   * when neither found any, the embeddings alone (`similar`, docs/knowledge.md "Embeddings").
   */
  strategy: 'precise' | 'recall' | 'similar' | 'none';
  tookMs: number;
}

/** The port the session runtime uses; the knowledge service implements it. */
export interface KnowledgeSearch {
  search(workspaceId: string, query: string, language: string, options?: { limit?: number; signal?: AbortSignal }): Promise<KnowledgeSearchResult>;
}
