/**
 * Synced pages and products (knowledge_documents) and their searchable chunks (knowledge_chunks). The full-text search
 * lives here because it is SQL: the service decides the configuration, limits and scores.
 *
 * A document's `origin` says who wrote it (migration 0017): the sync API's statements read and write `sync` documents
 * only; the dashboard's entries (`dashboard`) are written by the entry statements (knowledge-entries.repository.ts). The search reads both.
 */
import type { Db } from '../database.ts';
import { knowledgeEntryQueries } from './knowledge-entries.repository.ts';
import { knowledgePhrasingQueries } from './knowledge-phrasings.repository.ts';
import { knowledgeSearchQueries } from './knowledge-search.repository.ts';
import { knowledgeSyncQueries } from './knowledge-sync.repository.ts';

export type { ChunkOrigin, EntryRow, EntryWrite } from './knowledge-entries.repository.ts';
export type { PhrasingFilter, PhrasingTarget, PhrasingWrite } from './knowledge-phrasings.repository.ts';
export type { ChunkHit, SearchQuery } from './knowledge-search.repository.ts';
export type { ChunkWrite, DocumentSummary, DocumentWrite, UpsertOutcome } from './knowledge-sync.repository.ts';

export function knowledgeRepository(db: Db) {
  return {
    ...knowledgeQueries(db),
    /** Runs `work` in one transaction with the queries bound to it (a batch is applied all or nothing). */
    async inTransaction<T>(work: (queries: KnowledgeQueries) => Promise<T>): Promise<T> {
      return db.transaction().execute((trx) => work(knowledgeQueries(trx)));
    },
  };
}

/** The sync API's, the dashboard's, the phrasings' and the search's statements (one transaction may hold any of them). */
function knowledgeQueries(db: Db) {
  return {
    ...knowledgeSyncQueries(db),
    ...knowledgeEntryQueries(db),
    ...knowledgePhrasingQueries(db),
    ...knowledgeSearchQueries(db),
  };
}

export type KnowledgeQueries = ReturnType<typeof knowledgeQueries>;
export type KnowledgeRepository = ReturnType<typeof knowledgeRepository>;
