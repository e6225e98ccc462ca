/**
 * The composition root's knowledge base (src/app/service.ts; docs/knowledge.md): its search and writes, the pages and
 * Q&A pairs written in the dashboard, the websites and files synced on a schedule, and the optional background work
 * (the questions the AI writes for passages, the embeddings). Their workers start after listen and stop on drain
 * before the outbound client closes.
 */
import { randomUUID } from 'node:crypto';
import type { OpenedDatabase } from '../../db/database.ts';
import { knowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import { knowledgeSourcesRepository } from '../../db/repositories/knowledge-sources.repository.ts';
import { knowledgePhrasingsJobsRepository } from '../../db/repositories/knowledge-phrasings-jobs.repository.ts';
import { knowledgeChecksRepository } from '../../db/repositories/knowledge-checks.repository.ts';
import { knowledgeEmbeddingsRepository } from '../../db/repositories/knowledge-embeddings.repository.ts';
import { createQuestionsModel } from '../knowledge/doc2query/questions-model.ts';
import { createQuestionsWorker } from '../knowledge/doc2query/questions-worker.ts';
import { createKnowledgeEmbeddings } from '../knowledge/embeddings/knowledge-embeddings.ts';
import { createKnowledgeEntries } from '../knowledge/knowledge-entries.ts';
import { createKnowledgeService } from '../knowledge/knowledge-service.ts';
import { ExtractionPool } from '../knowledge/sources/extraction-pool.ts';
import { createKnowledgeSources } from '../knowledge/sources/knowledge-sources.ts';
import { createSourceScheduler } from '../knowledge/sources/source-scheduler.ts';
import { createWebsiteSync } from '../knowledge/sources/website-sync.ts';
import type { Metrics } from '../metrics.ts';
import type { OutboundClients } from './clients.ts';
import { VERSION, type ServiceOptions } from './options.ts';

export interface KnowledgeBaseInput {
  options: Pick<ServiceOptions, 'config' | 'logger' | 'sessions' | 'knowledgeEmbeddings' | 'knowledgeSources' | 'knowledgeQuestions'>;
  database: OpenedDatabase;
  metrics: Metrics;
  /** Websites and files are fetched through the guarded client. */
  clients: Pick<OutboundClients, 'http'>;
}

export type KnowledgeBase = ReturnType<typeof createKnowledgeBase>;

export function createKnowledgeBase(input: KnowledgeBaseInput) {
  const { options, database, metrics } = input;
  const { http } = input.clients;
  const { config, logger } = options;
  // This engine's name on the knowledge sources' claims.
  const sourcesEngine = options.sessions?.instanceId ?? `engine-${randomUUID()}`;
  // Optional embeddings ranked with the knowledge search (docs/knowledge.md, "Embeddings"): only with
  // LLM_EMBEDDING_MODEL; without it nothing of them is made, asked or run. Their worker starts after listen.
  const knowledgeEmbeddings = config.llm?.embeddingModel
    ? createKnowledgeEmbeddings({
      llm: { ...config.llm, embeddingModel: config.llm.embeddingModel },
      embeddings: knowledgeEmbeddingsRepository(database.db),
      registry: metrics.registry,
      logger,
      engine: sourcesEngine,
      leaseMs: config.leaseMs,
      ...options.knowledgeEmbeddings,
    })
    : null;
  // Knowledge base and content sync (protocol §1.6).
  // Each write leaves its workspace's mark, from which the saved checks run again (docs/scenarios.md, "Answers a
  // knowledge change moved"); a mark that cannot be written is logged and never fails the write that got through.
  const knowledgeChecks = knowledgeChecksRepository(database.db);
  const knowledge = createKnowledgeService({
    knowledge: knowledgeRepository(database.db),
    changed: (workspaceId) =>
      knowledgeChecks.markChanged(workspaceId, new Date()).catch((err: unknown) => logger.warn({ err, workspaceId }, 'the mark of a knowledge change could not be written; its saved checks are not run again')),
    ...(knowledgeEmbeddings ? { semantic: knowledgeEmbeddings.semantic } : {}),
  });
  // Pages and Q&A pairs written in the dashboard, in the same tables (docs/knowledge.md).
  const knowledgeRepo = knowledgeRepository(database.db);
  const knowledgeEntries = createKnowledgeEntries({ knowledge: knowledgeRepo, service: knowledge });
  // Websites, sitemaps and files (docs/knowledge.md, "Websites and files"): synced by one engine at a time, on a
  // schedule and on demand; the scheduler starts after listen and stops on drain before the outbound client closes.
  const sourcesRepo = knowledgeSourcesRepository(database.db);
  const writing = <T>(workspaceId: string, work: () => Promise<T>) => knowledge.writing(workspaceId, work);
  // Pages and files are read in a worker thread, off this loop; stopped with the scheduler.
  const extraction = new ExtractionPool({ onRestart: (reason) => metrics.knowledgeExtractionRestarts.inc({ reason }) });
  const knowledgeScheduler = createSourceScheduler({
    sources: sourcesRepo,
    sync: createWebsiteSync({
      http,
      sources: sourcesRepo,
      writing,
      userAgent: `Botlink/${VERSION} (+${config.publicUrl})`,
      maxPages: config.knowledgeMaxPages,
      engine: sourcesEngine,
      leaseMs: config.leaseMs,
      extraction,
      metrics,
    }),
    extraction,
    logger,
    engine: sourcesEngine,
    leaseMs: config.leaseMs,
    ...options.knowledgeSources,
  });
  // The questions customers would ask each passage, written by the model in the background (docs/knowledge.md,
  // "Questions written by the AI"): only with a model and KNOWLEDGE_AI_QUESTIONS on; started after listen like the
  // scheduler, stopped on drain.
  const knowledgeQuestionsJobs = knowledgePhrasingsJobsRepository(database.db);
  const { timeoutMs: questionsTimeoutMs, ...questionsTiming } = options.knowledgeQuestions ?? {};
  const knowledgeQuestions = config.llm && config.knowledgeAiQuestions
    ? createQuestionsWorker({
      jobs: knowledgeQuestionsJobs,
      knowledge: knowledgeRepo,
      writing,
      model: createQuestionsModel({ ...config.llm, ...(questionsTimeoutMs === undefined ? {} : { timeoutMs: questionsTimeoutMs }) }),
      logger,
      registry: metrics.registry,
      engine: sourcesEngine,
      leaseMs: config.leaseMs,
      ...questionsTiming,
    })
    : null;
  const knowledgeSources = createKnowledgeSources({ sources: sourcesRepo, http, writing, extraction, wake: () => knowledgeScheduler.wake() });
  return {
    knowledge,
    knowledgeRepo,
    knowledgeEntries,
    knowledgeSources,
    knowledgeScheduler,
    knowledgeQuestionsJobs,
    knowledgeQuestions,
    knowledgeEmbeddings,
  };
}
