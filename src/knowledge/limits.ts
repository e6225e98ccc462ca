/**
 * Limits and tuning of the knowledge base and the content-sync API, in one place (src/limits.ts holds the spec's own
 * numbers). The spec gives none of these (§2.7, §4.5): they are ours, chosen as documented here.
 */
import type { RateLimit } from '../rate-limiter.ts';

/**
 * The plugin's own id of a page or product, in the sync API path. Letters, digits and `._:/-` cover WordPress and
 * WooCommerce numbers, slugs and Shopify GIDs (`gid://shopify/Product/1`); a `/` is sent percent-encoded (%2F).
 * `.` and `..` alone are refused: every URL library drops them from a path, so PUT and DELETE could never name them.
 */
export const EXTERNAL_ID_PATTERN = '^(?!\\.\\.?$)[A-Za-z0-9._:/-]{1,200}$';
export const MAX_EXTERNAL_ID_CHARS = 200;
/** Title of a page or product, in characters. */
export const MAX_TITLE_CHARS = 300;
/** Body of a page or description of a product, in UTF-8 bytes as sent (before HTML is converted): 200 KB. */
export const MAX_DOCUMENT_BODY_BYTES = 200 * 1024;
/** A page's or product's URL, in characters. */
export const MAX_DOCUMENT_URL_CHARS = 2_048;
/** A product's SKU, in characters. */
export const MAX_SKU_CHARS = 100;
/**
 * Items (upserts plus deletes) in one POST /v1/sync/batch. The whole request is also bounded by MAX_API_BODY_BYTES
 * (1 MB): a batch of large pages is split by the plugin, a single page of up to 200 KB always fits.
 */
export const MAX_BATCH_ITEMS = 100;

/**
 * A file uploaded as knowledge, in bytes: 20 MB (docs/knowledge.md, "Websites and files"). Larger files are refused
 * before they are read.
 */
export const MAX_FILE_BYTES = 20 * 1024 * 1024;
/**
 * A web page fetched from a website source, in bytes: 2 MB (docs/knowledge.md, "Websites and files"). A larger page
 * is cut there; its text extraction also reads at most this many characters.
 */
export const MAX_PAGE_BYTES = 2 * 1024 * 1024;

/** Chunking: a chunk holds about this many words (paragraphs are kept whole where they fit). */
export const CHUNK_MIN_WORDS = 120;
export const CHUNK_MAX_WORDS = 250;
/** Words of the previous chunk repeated at the start of the next, so a sentence cut at a border is found whole. */
export const CHUNK_OVERLAP_WORDS = 30;

/** Passages a search returns by default, and at most. */
export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 20;
/**
 * Without a limit asked for (a turn, "Try a question"), a search hands over only the passages that are relevant, not
 * a fixed DEFAULT_SEARCH_LIMIT: after the best one, those scoring at least RELEVANT_FLOOR and within RELEVANT_MARGIN
 * of the best, and never more than RELEVANT_SHARE of the workspace's passages (at least one), so a model reads at most
 * a quarter of a small knowledge base per question. Chosen on the development sets (docs/performance.md, "Knowledge
 * answers"): the passages handed over hold the fact as often as the best five did (pet shop 91.3 %, hotel 93.5 %)
 * with a smaller share (mean 7.5 → 6.5 % and 11.1 → 9.0 %; the hotel's most 31 → 25 %).
 */
export const RELEVANT_FLOOR = 0.15;
export const RELEVANT_MARGIN = 0.4;
export const RELEVANT_SHARE = 0.25;
/**
 * ts_rank_cd weights for {D, C, B, A}: chunk text is indexed with weight D, the title with A. PostgreSQL's default
 * {0.1, 0.2, 0.4, 1.0} lets one title word outweigh ten text words, so a generic word in a title ("de winkel")
 * decided too much on the fixtures; a text word at a third of a title word ranked every expected top hit first.
 */
export const RANK_WEIGHTS: readonly [d: number, c: number, b: number, a: number] = [0.2, 0.2, 0.4, 0.6];
/**
 * A search is confident when its best passage scores at least this. The score is the passage's relevance
 * (src/knowledge/query.ts): the weighted share of the question's word groups it holds, 0..1. Calibrated on the
 * knowledge evaluation (harness/knowledge-eval, docs/performance.md, "Knowledge answers"), checked on the search's own
 * fixtures (test/knowledge/fixtures.ts).
 */
export const KNOWLEDGE_CONFIDENCE_THRESHOLD = 0.45;
/**
 * A passage found through the lexicon's translations of the question (a Dutch question, an English page) scores this
 * share of its relevance: a translation may miss what the customer meant, so it needs a fuller match to be confident.
 */
export const TRANSLATED_SHARE = 0.9;
/** The database's best this many passages are ranked again by relevance (a search asks for at least this many). */
export const SEARCH_CANDIDATES = 10;
/** A workspace's vocabulary (src/knowledge/vocabulary.ts) keeps its most used this many words. */
export const MAX_VOCABULARY_WORDS = 50_000;
/** Vocabularies kept per process, the least recently searched going first. */
export const MAX_VOCABULARY_WORKSPACES = 200;
/** How often a process looks whether a workspace's knowledge changed (then it reads its vocabulary again), ms. */
export const VOCABULARY_CHECK_MS = 30_000;
/** At most this many words of the query are used (the longest ones: they say the most). */
export const MAX_QUERY_TERMS = 24;
/** Recall matches a word's prefixes (Dutch compounds: verzend → verzendkosten) from this many letters on. */
export const RECALL_PREFIX_MIN_CHARS = 4;

/**
 * The recall search ranks at most this many chunks that share a word with the question. A word found in thousands of
 * chunks says little about any of them, and ranking them all made recall grow with the knowledge base (p99 163 ms at
 * 10 000 pages sharing one word; docs/performance.md).
 */
export const RECALL_CANDIDATE_LIMIT = 500;
/**
 * Of those candidates, only the RECALL_RANKED_LIMIT that contain the most of the query's words (ties: the cheaper
 * ts_rank) are ranked with ts_rank_cd. ts_rank_cd over a long question's any-word query costs about 11 µs a chunk
 * against 2 µs for counting the words and 1.4 µs for ts_rank: ranking all 500 was most of a recall search's time
 * (docs/performance.md, knowledge-search). A chunk with fewer of the words is scaled down by its share of them anyway.
 */
export const RECALL_RANKED_LIMIT = 50;

/**
 * How long a process trusts what it last saw of whether a workspace has any knowledge at all. A workspace without
 * pages skips the search (one planned statement, about 1 ms of database time, on every phone turn); its own syncs
 * clear the entry at once, syncs through another process are seen within this time.
 */
export const KNOWLEDGE_PRESENCE_TTL_MS = 10_000;
/** Most workspaces whose presence is remembered; beyond it the oldest entries go. */
export const MAX_KNOWLEDGE_PRESENCE_ENTRIES = 10_000;

/**
 * "Try a question" (docs/knowledge.md) says a passage's score in words: strong from this score, fair from
 * KNOWLEDGE_CONFIDENCE_THRESHOLD (the embedded answerer answers from it), weak below. A passage's score is the share of
 * the question it holds (src/knowledge/query.ts): 0.8 when its text holds every part of the question, up to 1 when its
 * title or a taught phrasing holds them too. Strong wants more than the text: a sentence that merely shares the
 * question's words ("refunded to the payment method you paid with" for "what payment methods do you accept") is a
 * passage about something else, and is fair at best. Recalibrate both when the score changes.
 */
export const STRONG_MATCH_SCORE = 0.85;
/** Characters of a passage that "Try a question" shows. */
export const TRY_EXCERPT_CHARS = 300;
/** Characters of a document's text in a list of GET /v1/knowledge/entries; one document is answered whole. */
export const ENTRY_EXCERPT_CHARS = 280;
/**
 * "Try a question" per workspace (docs/knowledge.md, "Try a question"): 10 at once, then one every 3 s. Each try is up
 * to two model calls and a channel request to the integrator's endpoint; a person types and reads between tries, a
 * loop does not.
 */
export const TRY_QUESTION_RATE_LIMIT: RateLimit = { burst: 10, windowMs: 30_000, maxBuckets: 10_000 };
