/**
 * The knowledge base: what the sync API writes (pages and products of the customer's own site and shop, protocol §1.6)
 * and what the AI reads (`KnowledgeSearch`).
 *
 * Indexing and search (docs/architecture.md, "Knowledge answers"):
 * - A chunk is indexed with its own language's configuration (nl → dutch, en → english, de → german, fr → french,
 *   otherwise simple); a query is parsed with the configuration of the language it was asked in. The search runs over
 *   all chunks of the workspace whatever their language; when no passage answers confidently, at most half the
 *   question's groups are held by the knowledge base and the workspace has pages in other languages, the question is
 *   searched again in each whose translation holds more of them, in the lexicon's translations
 *   (`translateGroups`), its passages scoring TRANSLATED_SHARE of their relevance and marked with their language.
 * - The question is understood first (src/knowledge/query.ts): its meaningful words as groups, each with the words
 *   that mean the same in shop talk (src/knowledge/thesaurus.ts) and the lexicon's related words, the known word a
 *   typo stands for and the known head of an unknown compound (the workspace's vocabulary, src/knowledge/vocabulary.ts,
 *   kept per process and read again when the knowledge changed); greetings, names and order numbers make no group.
 * - First the precise search: chunks holding every group the knowledge base may hold (each by any of its words),
 *   ranked by ts_rank_cd over any of the words. Only when that finds nothing, the recall search: any of the words, prefixes of the words of 4+
 *   letters (so a Dutch word finds its compounds: verzend → verzendkosten); of at most RECALL_CANDIDATE_LIMIT chunks
 *   sharing a word, the RECALL_RANKED_LIMIT with the most of the words are ranked. Either way the database's best
 *   SEARCH_CANDIDATES are ranked again here by relevance: the weighted share of the question's groups a passage holds,
 *   rare words weighing more, words compared by Snowball stem too, the title and the passage's phrasings a fifth more
 *   (`relevance`); that is the passage's score.
 * - Without a limit asked for, only the relevant passages are returned (RELEVANT_FLOOR, RELEVANT_MARGIN,
 *   RELEVANT_SHARE): what a model is handed is never a fixed five of a small knowledge base.
 * - `confident` is the best score against KNOWLEDGE_CONFIDENCE_THRESHOLD (calibrated on the knowledge evaluation,
 *   docs/performance.md).
 * - An AbortSignal is passed to Kysely, which stops waiting for the query (the database finishes it; our queries are
 *   milliseconds).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { DocumentSummary, DocumentWrite, KnowledgeQueries, KnowledgeRepository, UpsertOutcome } from '../../db/repositories/knowledge.repository.ts';
import type { ChunkHit } from '../../db/repositories/knowledge-search.repository.ts';
import type { Availability, KnowledgeKind } from '../../db/schema.ts';
import { AppError } from '../errors.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, MAX_MESSAGE_CHARS } from '../limits.ts';
import { chunkText, productText, searchConfigFor } from './chunking.ts';
import {
  DEFAULT_SEARCH_LIMIT,
  EXTERNAL_ID_PATTERN,
  KNOWLEDGE_CONFIDENCE_THRESHOLD,
  MAX_BATCH_ITEMS,
  MAX_DOCUMENT_BODY_BYTES,
  MAX_SEARCH_LIMIT,
  MAX_QUERY_TERMS,
  RANK_WEIGHTS,
  RECALL_PREFIX_MIN_CHARS,
  RECALL_CANDIDATE_LIMIT,
  RECALL_RANKED_LIMIT,
  RELEVANT_FLOOR,
  RELEVANT_MARGIN,
  RELEVANT_SHARE,
  SEARCH_CANDIDATES,
  TRANSLATED_SHARE,
} from './limits.ts';
import { primaryLanguage } from '../text/language.ts';
import * as openLexicon from './lexicon/index.ts';
import { anyWords, NO_LEXICON, ownWords, rankPassage, toTsquery, translateGroups, understandQuery, type Lexicon, type QueryGroup } from './query.ts';
import { cleanLine, htmlToText, normaliseParagraphs } from './text.ts';
import type { KnowledgePassage, KnowledgeSearch, KnowledgeSearchResult } from './types.ts';
import { createKnowledgeCache } from './knowledge-cache.ts';
import { fuseRankings } from './embeddings/fusion.ts';
import type { SemanticSearch } from './embeddings/semantic-search.ts';

/**
 * Part of every content hash: raise it when chunking or indexing changes, and the next sync of each page re-chunks it
 * instead of answering `unchanged`. 2: German and French pages are indexed with the german and french configurations
 * (they were `simple`), and their questions are parsed so.
 */
const INDEX_VERSION = 2;

/** Fields shared by pages and products, as the sync API takes them (already schema-checked). */
interface DocumentFields {
  title: string;
  url?: string | null;
  /** Language tag (nl, en, nl-BE…); absent: indexed without stemming. */
  language?: string | null;
  /** `html`: converted to plain text before it is stored and indexed; default `text`. */
  format?: 'text' | 'html';
}

export interface PageInput extends DocumentFields {
  body: string;
}

export interface ProductInput extends DocumentFields {
  description?: string;
  price?: number | null;
  /** ISO 4217, e.g. EUR. */
  currency?: string | null;
  sku?: string | null;
  availability?: Availability | null;
}

export type SyncUpsert = ({ kind: 'page' } & PageInput) | ({ kind: 'product' } & ProductInput);
export type SyncUpsertItem = SyncUpsert & { external_id: string };
export interface SyncDeleteItem {
  kind: KnowledgeKind;
  external_id: string;
}

export interface SyncResult {
  kind: KnowledgeKind;
  external_id: string;
  result: UpsertOutcome | 'deleted' | 'not_found';
  content_hash?: string;
  /** Chunks written; absent when nothing was written. */
  chunks?: number;
  updated_at?: string;
}

export interface DocumentListing {
  items: Array<{
    external_id: string;
    title: string;
    url: string | null;
    language: string | null;
    content_hash: string;
    chunks: number;
    created_at: string;
    updated_at: string;
    price?: number | null;
    currency?: string | null;
    sku?: string | null;
    availability?: Availability | null;
  }>;
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

export interface Problem {
  field: string;
  message: string;
}

/** A document cleaned and hashed by `prepare`: what the repository writes, but for the workspace; its price is a number. */
type Prepared = Omit<DocumentWrite, 'workspaceId' | 'price'> & { price: number | null };

export interface KnowledgeServiceDeps {
  knowledge: KnowledgeRepository;
  now?: () => Date;
  /** General related words and translations; default the open-data lexicon (src/knowledge/lexicon/, docs/lexicon.md). */
  lexicon?: Lexicon;
  /**
   * The optional embeddings (LLM_EMBEDDING_MODEL, ./embeddings/): their nearest passages fused with the lexical
   * ranking. Absent: the lexical search alone, with nothing extra asked.
   */
  semantic?: SemanticSearch;
  /**
   * Told after each write to a workspace's knowledge got through (a page written or deleted, a batch, a source's
   * pages): the saved checks run again from it (docs/scenarios.md, "Answers a knowledge change moved").
   */
  changed?: (workspaceId: string) => Promise<void>;
}

export function createKnowledgeService(deps: KnowledgeServiceDeps) {
  const { knowledge } = deps;
  const now = deps.now ?? (() => new Date());
  const lexicon: Lexicon = deps.lexicon ?? openLexicon;
  // Per process: whether a workspace has knowledge, and its vocabulary (./knowledge-cache.ts).
  const { refreshVocabulary, vocabularyOf, hasKnowledge, writing } = createKnowledgeCache(knowledge, now, deps.changed);

  async function write(queries: KnowledgeQueries, workspaceId: string, doc: Prepared): Promise<SyncResult> {
    const written = await queries.upsertDocument({ workspaceId, ...doc }, randomUUID(), now());
    const result: SyncResult = {
      kind: doc.kind,
      external_id: doc.externalId,
      result: written.outcome,
      content_hash: doc.contentHash,
      updated_at: written.updatedAt.toISOString(),
    };
    if (written.outcome === 'unchanged') return result;
    const texts = chunksOf(doc);
    await queries.replaceChunks({
      documentId: written.id,
      workspaceId,
      language: doc.language,
      config: searchConfigFor(doc.language),
      title: doc.title,
      chunks: texts.map((text, ordinal) => ({ id: randomUUID(), ordinal, text })),
    });
    return { ...result, chunks: texts.length };
  }

  const search: KnowledgeSearch['search'] = async (workspaceId, query, language, options = {}) => {
    const started = performance.now();
    const limit = clampInt(options.limit, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT);
    const text = cleanLine(query).slice(0, MAX_MESSAGE_CHARS);
    // The embeddings' nearest passages, handed over whatever their lexical score (./embeddings/fusion.ts).
    let handed: ReadonlySet<string> = new Set();
    const done = (all: KnowledgePassage[], strategy: KnowledgeSearchResult['strategy']): KnowledgeSearchResult => {
      const passages = relevantOnly(all);
      return {
      passages,
      // The lexical score alone decides: an embedding never makes a search confident.
      confident: bestScore(passages) >= KNOWLEDGE_CONFIDENCE_THRESHOLD,
      strategy: passages.length ? strategy : 'none',
      tookMs: Math.round((performance.now() - started) * 100) / 100,
    };
    };
    if (!text) return done([], 'none');
    options.signal?.throwIfAborted();
    if (!(await hasKnowledge(workspaceId))) return done([], 'none');

    const lang = primaryLanguage(language);
    const vocabulary = vocabularyOf(workspaceId);
    // Related words only with the vocabulary, which keeps those the knowledge base holds: unfiltered, they would crowd
    // the customer's own words out of the recall search's MAX_QUERY_TERMS.
    const groups = understandQuery(text, lang, vocabulary, vocabulary ? lexicon : NO_LEXICON);
    if (groups.length === 0) return done([], 'none');
    const q = {
      workspaceId,
      config: searchConfigFor(lang),
      precise: toTsquery(groups),
      query: anyWords(groups),
      rankQuery: ownWords(groups),
      limit: Math.max(limit, SEARCH_CANDIDATES),
      weights: `{${RANK_WEIGHTS.join(',')}}`,
      maxTerms: MAX_QUERY_TERMS,
      prefixMinChars: RECALL_PREFIX_MIN_CHARS,
      candidateLimit: RECALL_CANDIDATE_LIMIT,
      preciseCandidateLimit: groups.some((g) => g.unknown) ? RECALL_CANDIDATE_LIMIT : null,
      rankedLimit: RECALL_RANKED_LIMIT,
      signal: options.signal,
    };
    // The question's embedding, asked beside the lexical search (null at once: no vectors, no request).
    const nearest = deps.semantic?.nearest(workspaceId, text, options.signal) ?? null;
    // One round trip: the recall search runs only when the precise one found nothing, so all hits share a strategy.
    const hits = await knowledge.search(q);
    let found: { passages: KnowledgePassage[]; strategy: KnowledgeSearchResult['strategy'] } = { passages: ranked(hits, groups, lang, 1), strategy: hits[0]?.strategy ?? 'none' };
    // Across languages: a question no page of its language answers is searched again in each other language of the
    // workspace, in the lexicon's translations, its passages scoring TRANSLATED_SHARE of what they would.
    // Only a question most of whose words the knowledge base does not hold (its subject is on no page of its
    // language), and only into a translation that holds more of them: a question the pages of its own language
    // mostly know (a chatty one, a name or two they lack) costs no second round trip.
    const findable = (of: readonly QueryGroup[]) => of.filter((g) => !g.unknown).length;
    const mostlyUnknown = findable(groups) * 2 <= groups.length;
    if ((found.passages[0]?.score ?? 0) < KNOWLEDGE_CONFIDENCE_THRESHOLD && vocabulary && mostlyUnknown) {
      for (const to of vocabulary.languages) {
        if (to === lang) continue;
        const translated = translateGroups(groups, lang, to, lexicon, vocabulary);
        if (!translated.translated || findable(translated.groups) <= findable(groups)) continue;
        options.signal?.throwIfAborted();
        const other = await knowledge.search({
          ...q,
          config: searchConfigFor(to),
          precise: toTsquery(translated.groups),
          query: anyWords(translated.groups),
          rankQuery: ownWords(translated.groups),
        });
        const passages = ranked(other, translated.groups, to, TRANSLATED_SHARE);
        if ((passages[0]?.score ?? 0) > (found.passages[0]?.score ?? 0)) found = { passages, strategy: other[0]?.strategy ?? 'none' };
      }
    }
    const near = nearest ? await nearest : null;
    if (near?.length && deps.semantic) {
      options.signal?.throwIfAborted();
      // Of the passages the lexical search did not return, only the nearest `limit` can rank among the best `limit`
      // (each nearer one ranks above it); read in that order, so ranking them by their lexical score keeps them all.
      const known = new Set(found.passages.map((p) => p.id));
      const missing = near.filter((n) => n.similarity > 0 && !known.has(n.id)).slice(0, limit).map((n) => n.id);
      const order = new Map(missing.map((id, i) => [id, i]));
      const read = missing.length ? await deps.semantic.hits(workspaceId, missing, options.signal) : [];
      const extra = ranked(read.sort((a, b) => order.get(a.id)! - order.get(b.id)!), groups, lang, 1);
      const fused = fuseRankings(found.passages, near, extra, limit);
      handed = fused.handed;
      found = { passages: fused.passages, strategy: found.passages.length ? found.strategy : 'similar' };
    }
    return done(found.passages, found.strategy);

    /** With no limit asked for, the passages that are relevant (RELEVANT_FLOOR, RELEVANT_MARGIN, RELEVANT_SHARE). */
    function relevantOnly(passages: KnowledgePassage[]): KnowledgePassage[] {
      if (options.limit !== undefined || passages.length <= 1) return passages;
      const best = bestScore(passages);
      const most = vocabulary ? Math.max(1, Math.floor(vocabulary.totalChunks * RELEVANT_SHARE)) : passages.length;
      return passages.filter((p, i) => i === 0 || handed.has(p.id) || (p.score >= RELEVANT_FLOOR && p.score >= best - RELEVANT_MARGIN)).slice(0, most);
    }

    /** 1 for a passage in another language than the question's. */
    function foreign(p: KnowledgePassage): number {
      return p.language === undefined ? 0 : 1;
    }

    /** The hits ranked again by relevance (src/knowledge/query.ts), best first, the best `limit`. */
    function ranked(found: readonly ChunkHit[], by: readonly QueryGroup[], language: string, share: number): KnowledgePassage[] {
      const scored = found.map((hit, rank) => {
        const r = rankPassage(by, hit.title, hit.text, vocabulary, language, hit.phrasings, share === 1 && (!hit.language || hit.language === language));
        return { passage: toPassage(hit, share * r.relevance, lang), own: r.own, rank };
      });
      // The customer's language first: when one of its passages answers, a passage in another language (the same fact
      // on the English page of a German question) scores below it, TRANSLATED_SHARE of it at most.
      const ownBest = Math.max(0, ...scored.filter((r) => foreign(r.passage) === 0).map((r) => r.passage.score));
      if (ownBest >= KNOWLEDGE_CONFIDENCE_THRESHOLD) {
        const cap = Math.round(ownBest * TRANSLATED_SHARE * 10_000) / 10_000;
        for (const r of scored) if (foreign(r.passage) === 1 && r.passage.score > cap) r.passage = { ...r.passage, score: cap };
      }
      return (
        scored
          // Ties go to the passage in the customer's language, then to the one in the customer's own words ("delivers"
          // over a page that says "ship"), then to the database's order: it weighs how often and how close together
          // the words stand.
          .sort((a, b) => b.passage.score - a.passage.score || foreign(a.passage) - foreign(b.passage) || b.own - a.own || a.rank - b.rank)
          .slice(0, limit)
          .map((r) => r.passage)
      );
    }
  };

  /** Reads the workspace's vocabulary now (tests, the evaluation, and after a sync, so the next question has it). */
  async function warm(workspaceId: string): Promise<void> {
    await Promise.all([refreshVocabulary(workspaceId), deps.semantic?.warm(workspaceId)]);
  }

  return {
    search,
    warm,

    /** PUT /v1/sync/{pages|products}/{external_id}: created, updated or unchanged (same content: nothing rewritten). */
    async upsert(workspaceId: string, externalId: string, input: SyncUpsert): Promise<SyncResult> {
      const problems = sizeProblems(input, '');
      if (problems.length) throw tooLarge(problems);
      const doc = prepare(externalId, input);
      return writing(workspaceId, () => knowledge.inTransaction((queries) => write(queries, workspaceId, doc)));
    },

    /** DELETE /v1/sync/{pages|products}/{external_id}: false when there was nothing to delete. */
    async remove(workspaceId: string, kind: KnowledgeKind, externalId: string): Promise<boolean> {
      return writing(workspaceId, () => knowledge.deleteDocument(workspaceId, kind, externalId));
    },

    /**
     * POST /v1/sync/batch: all or nothing. Problems with any item (size, the same page twice) refuse the whole batch
     * before anything is written, each problem naming its item (`upserts[3].body`); a valid batch is applied in one
     * transaction and answered item by item, in the order given.
     */
    async applyBatch(
      workspaceId: string,
      batch: { upserts: SyncUpsertItem[]; deletes: SyncDeleteItem[] },
    ): Promise<{ upserts: SyncResult[]; deletes: SyncResult[] }> {
      const total = batch.upserts.length + batch.deletes.length;
      if (total > MAX_BATCH_ITEMS) {
        throw new AppError('validation_failed', `A batch carries at most ${MAX_BATCH_ITEMS} items (upserts and deletes together); this one has ${total}.`, [
          { field: '', message: `has ${total} items, more than ${MAX_BATCH_ITEMS}` },
        ]);
      }
      const seen = new Map<string, string>();
      const duplicates: Problem[] = [];
      const items = [...batch.upserts.map((item, i) => ({ item, at: `upserts[${i}]` })), ...batch.deletes.map((item, i) => ({ item, at: `deletes[${i}]` }))];
      for (const { item, at } of items) {
        const key = `${item.kind}\u0000${item.external_id}`;
        const first = seen.get(key);
        if (first) duplicates.push({ field: `${at}.external_id`, message: `repeats ${first} (${item.kind} ${item.external_id}); each page or product once per batch` });
        else seen.set(key, at);
      }
      if (duplicates.length) throw new AppError('validation_failed', `${duplicates[0]!.field} ${duplicates[0]!.message}.`, duplicates);
      const tooBig = batch.upserts.flatMap((item, i) => sizeProblems(item, `upserts[${i}].`));
      if (tooBig.length) throw tooLarge(tooBig);

      const docs = batch.upserts.map((item, i) => prepare(item.external_id, item, `upserts[${i}].`));
      return writing(workspaceId, () => knowledge.inTransaction(async (queries) => {
        const upserts: SyncResult[] = [];
        for (const doc of docs) upserts.push(await write(queries, workspaceId, doc));
        const deletes: SyncResult[] = [];
        for (const item of batch.deletes) {
          const deleted = await queries.deleteDocument(workspaceId, item.kind, item.external_id);
          deletes.push({ kind: item.kind, external_id: item.external_id, result: deleted ? 'deleted' : 'not_found' });
        }
        return { upserts, deletes };
      }));
    },

    /** GET /v1/sync/pages and /products: in external_id order; `cursor` is the previous answer's `next_cursor`. */
    async list(workspaceId: string, kind: KnowledgeKind, options: { cursor?: string | undefined; limit?: number | undefined } = {}): Promise<DocumentListing> {
      const limit = clampInt(options.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT);
      const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
      const rows = await knowledge.listDocuments(workspaceId, kind, { after, limit: limit + 1 });
      const page = rows.slice(0, limit);
      return {
        items: page.map((row) => toListItem(kind, row)),
        next_cursor: rows.length > limit ? encodeCursor(page.at(-1)!.external_id) : null,
      };
    },

    /**
     * Runs another writer's change to a workspace's knowledge (the dashboard's entries, ./knowledge-entries.ts): once
     * it is done, the next search looks again whether the workspace has any.
     */
    writing,
  };
}

export type KnowledgeService = ReturnType<typeof createKnowledgeService>;

/** Cleans and hashes what will be stored; the hash covers exactly the stored content (and the index version). */
function prepare(externalId: string, input: SyncUpsert, prefix = ''): Prepared {
  const raw = input.kind === 'page' ? input.body : (input.description ?? '');
  const body = input.format === 'html' ? htmlToText(raw) : normaliseParagraphs(raw);
  const product = input.kind === 'product' ? input : undefined;
  const doc = {
    kind: input.kind,
    externalId,
    title: cleanLine(input.title),
    url: input.url ? cleanLine(input.url) : null,
    language: primaryLanguage(input.language) || null,
    body,
    price: product?.price ?? null,
    currency: product?.currency ? product.currency.toUpperCase() : null,
    sku: product?.sku ? cleanLine(product.sku) || null : null,
    availability: product?.availability ?? null,
  };
  if (!doc.title) throw new AppError('validation_failed', `${prefix}title has no visible characters.`, [{ field: `${prefix}title`, message: 'has no visible characters' }]);
  const contentHash = createHash('sha256')
    .update(JSON.stringify([INDEX_VERSION, doc.kind, doc.title, doc.url, doc.language, doc.body, doc.price, doc.currency, doc.sku, doc.availability]))
    .digest('hex');
  return { ...doc, contentHash };
}

function chunksOf(doc: Prepared): string[] {
  if (doc.kind === 'product') {
    return chunkText(productText({
      title: doc.title,
      description: doc.body,
      price: doc.price,
      currency: doc.currency,
      sku: doc.sku,
      availability: doc.availability,
      language: doc.language,
    }));
  }
  const chunks = chunkText(doc.body);
  // A page with only a title is still findable by it.
  return chunks.length ? chunks : [doc.title];
}

/** The body limit is on what the plugin sent (UTF-8 bytes), before any HTML is stripped. */
function sizeProblems(input: SyncUpsert, prefix: string): Problem[] {
  const [field, value] = input.kind === 'page' ? ['body', input.body] : ['description', input.description ?? ''];
  const bytes = Buffer.byteLength(value, 'utf8');
  return bytes > MAX_DOCUMENT_BODY_BYTES ? [{ field: `${prefix}${field}`, message: `is ${bytes} bytes, more than ${MAX_DOCUMENT_BODY_BYTES}` }] : [];
}

function tooLarge(problems: Problem[]): AppError {
  return new AppError('payload_too_large', `${problems[0]!.field} ${problems[0]!.message}.`, problems);
}

/** The best lexical score of passages (sorted by it, unless the embeddings' fusion ordered them). */
function bestScore(passages: readonly KnowledgePassage[]): number {
  let best = 0;
  for (const p of passages) if (p.score > best) best = p.score;
  return best;
}

function toPassage(
  hit: { id: string; kind: KnowledgeKind; external_id: string; title: string; url: string | null; text: string; language?: string | null },
  score: number,
  questionLanguage: string,
): KnowledgePassage {
  return {
    id: hit.id,
    source: hit.kind,
    externalId: hit.external_id,
    title: hit.title,
    url: hit.url,
    text: hit.text,
    score: Math.round(score * 10_000) / 10_000,
    ...(hit.language && questionLanguage && hit.language !== questionLanguage ? { language: hit.language } : {}),
  };
}

function toListItem(kind: KnowledgeKind, row: DocumentSummary): DocumentListing['items'][number] {
  const item = {
    external_id: row.external_id,
    title: row.title,
    url: row.url,
    language: row.language,
    content_hash: row.content_hash,
    chunks: row.chunks,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
  if (kind === 'page') return item;
  return { ...item, price: row.price === null ? null : Number(row.price), currency: row.currency, sku: row.sku, availability: row.availability };
}

/** 1..max, the default when absent or not a number. */
function clampInt(value: number | undefined, fallback: number, max: number): number {
  return value !== undefined && Number.isFinite(value) ? Math.min(Math.max(Math.trunc(value), 1), max) : fallback;
}

/** The cursor is the last external_id seen, base64url-encoded so it is opaque and safe in a query string. */
function encodeCursor(externalId: string): string {
  return Buffer.from(externalId, 'utf8').toString('base64url');
}

/** A cursor names the external_id listed last; anything that decodes to something else was not made by us. */
const CURSOR_ID = new RegExp(EXTERNAL_ID_PATTERN);

function decodeCursor(cursor: string): string {
  const decoded = /^[A-Za-z0-9_-]{1,400}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!CURSOR_ID.test(decoded)) throw new AppError('validation_failed', 'cursor is not one this API gave out.', [{ field: 'cursor', message: 'is not one this API gave out' }]);
  return decoded;
}
