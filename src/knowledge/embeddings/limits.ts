/**
 * Every limit and default of the optional embeddings (docs/knowledge.md, "Embeddings"), in one place; every use
 * imports from here.
 */

/** Texts sent in one request while passages are embedded (OpenAI takes up to 2,048; smaller keeps each request short). */
export const EMBEDDING_BATCH = 32;
/** Most characters of one text sent (a passage is at most about 250 words, so this is a guard). */
export const MAX_EMBEDDING_INPUT_CHARS = 8_000;
/** Most dimensions of a vector taken from the model (text-embedding-3-large has 3,072). */
export const MAX_EMBEDDING_DIMENSIONS = 4_096;
/** Most response bytes read: EMBEDDING_BATCH vectors of MAX_EMBEDDING_DIMENSIONS numbers as JSON text. */
export const MAX_EMBEDDING_RESPONSE_BYTES = 16 * 1024 * 1024;
/** Deadline of one request while passages are embedded: nobody waits for it. */
export const EMBEDDING_BATCH_TIMEOUT_MS = 60_000;
/**
 * Deadline of the question's embedding, inside a turn: it runs beside the lexical search and the channel request, and
 * a phone turn must not wait on it (docs/architecture.md, "The phone turn"). Slower: the lexical result alone.
 */
export const EMBEDDING_QUESTION_TIMEOUT_MS = 400;
/** Questions embedded at a time by one engine (connections to the model kept for them). */
export const EMBEDDING_QUESTION_CONNECTIONS = 16;
/** How often an engine looks for passages and phrasings without an up-to-date vector. */
export const EMBEDDINGS_POLL_MS = 30_000;
/** After the model failed (down, refusing, an answer that is not one vector per text), the workspace waits this long. */
export const EMBEDDINGS_RETRY_MS = 5 * 60_000;
/** Most batches one run of a workspace sends before it gives the claim back (a guard against a passage that never settles). */
export const MAX_EMBEDDING_BATCHES_PER_RUN = 1_000;
/**
 * The passages nearest the question by cosine that take part in the fusion with the lexical ranking (docs/knowledge.md,
 * "Embeddings").
 */
export const EMBEDDING_TOP_K = 10;
/**
 * Of those, the nearest this many are handed to the model even when the lexical search found them too weak (still
 * within the share of the knowledge base a question may be handed, RELEVANT_SHARE).
 */
export const EMBEDDING_HANDED = 3;
/**
 * And only those within this cosine of the nearest one: a passage clearly farther than the best is not what the
 * question is about, whatever its rank.
 */
export const EMBEDDING_HANDED_MARGIN = 0.1;
/** Reciprocal rank fusion: each ranking adds 1 / (RRF_K + rank) to a passage (rank from 1); 60 as Cormack et al. */
export const RRF_K = 60;
/** Workspaces whose vectors one process keeps in memory, the least recently asked dropped first. */
export const MAX_EMBEDDING_WORKSPACES = 50;
/** Numbers (4 bytes each) one process keeps in memory for all workspaces together: 256 MB. */
export const MAX_CACHED_VECTOR_FLOATS = 64 * 1024 * 1024;
/** How often a workspace's vectors are looked at again (its version: the knowledge's and its embeddings' writes). */
export const EMBEDDINGS_CHECK_MS = 30_000;
