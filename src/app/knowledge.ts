/**
 * The composition root's second stage (src/service.ts): what the conversations stand on. The outbound clients (the
 * guarded HTTP client, the Bot Link, the tools, the AI), the endpoints' health, sign-in and accounts, the integration's
 * settings, the knowledge base, API keys, and the conversations' and phone's repositories.
 */
import { randomUUID } from 'node:crypto';
import type { OpenedDatabase } from '../../db/database.ts';
import { accountsRepository } from '../../db/repositories/accounts.repository.ts';
import { apiKeysRepository } from '../../db/repositories/api-keys.repository.ts';
import { integrationsRepository } from '../../db/repositories/integrations.repository.ts';
import { knowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import { knowledgeSourcesRepository } from '../../db/repositories/knowledge-sources.repository.ts';
import { knowledgePhrasingsJobsRepository } from '../../db/repositories/knowledge-phrasings-jobs.repository.ts';
import { knowledgeChecksRepository } from '../../db/repositories/knowledge-checks.repository.ts';
import { knowledgeEmbeddingsRepository } from '../../db/repositories/knowledge-embeddings.repository.ts';
import { phoneRepository } from '../../db/repositories/phone.repository.ts';
import { sessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { signInRepository } from '../../db/repositories/sign-in.repository.ts';
import { workspaceSettingsRepository } from '../../db/repositories/workspace-settings.repository.ts';
import { signInThrottleRepository } from '../../db/repositories/sign-in-throttle.repository.ts';
import { teamPresenceRepository } from '../../db/repositories/team-presence.repository.ts';
import { createAccountsService } from '../accounts/accounts-service.ts';
import { createSignInService } from '../accounts/sign-in-service.ts';
import { inviteEmail } from '../accounts/auth-emails.ts';
import { createMailer } from '../email/mailer.ts';
import { createAi } from '../ai/index.ts';
import { createApiKeysService } from '../auth/api-keys.ts';
import { createLoginThrottle } from '../auth/login-throttle.ts';
import { createStreamGuard } from '../auth/stream-guard.ts';
import { createBotLinkClient } from '../botlink/client.ts';
import { createEndpointHealthTracker } from '../botlink/endpoint-health-tracker.ts';
import { createToolsClient } from '../botlink/tools-client.ts';
import { createTeamAvailability } from '../channels/phone/team-availability.ts';
import { probeEndpoint, recordHealthTransition } from '../integration/endpoint-health-events.ts';
import { createIntegrationService } from '../integration/integration-service.ts';
import { createQuestionsModel } from '../knowledge/doc2query/questions-model.ts';
import { createQuestionsWorker } from '../knowledge/doc2query/questions-worker.ts';
import { createKnowledgeEmbeddings } from '../knowledge/embeddings/knowledge-embeddings.ts';
import { createKnowledgeEntries } from '../knowledge/knowledge-entries.ts';
import { createKnowledgeService } from '../knowledge/knowledge-service.ts';
import { ExtractionPool } from '../knowledge/sources/extraction-pool.ts';
import { createKnowledgeSources } from '../knowledge/sources/knowledge-sources.ts';
import { createSourceScheduler } from '../knowledge/sources/source-scheduler.ts';
import { createWebsiteSync } from '../knowledge/sources/website-sync.ts';
import { createMetrics } from '../metrics.ts';
import { GuardedClient } from '../net/guarded-client.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import { VERSION, type ServiceOptions } from './options.ts';

export type ServiceBase = ReturnType<typeof createBase>;

export function createBase(options: ServiceOptions, database: OpenedDatabase, secrets: SecretBox) {
  const { config, logger } = options;
  const metrics = createMetrics();
  // This engine's name on the knowledge sources' claims.
  const sourcesEngine = options.sessions?.instanceId ?? `engine-${randomUUID()}`;
  const http = new GuardedClient({ allow: config.outboundAllow, ...(options.lookup ? { lookup: options.lookup } : {}) });
  const botlink = createBotLinkClient({ http, metrics });
  const tools = createToolsClient({ http });
  // The endpoints' health, shared through the database (src/botlink/endpoint-health.ts): a down endpoint is not waited
  // for; going down and recovering notify the owner (a notification, an optional webhook).
  const health = createEndpointHealthTracker({
    db: database.db,
    logger,
    metrics,
    onTransition: (trx, workspaceId, transition, endpoint) =>
      recordHealthTransition(trx, { workspaceId, transition, health: endpoint, publicUrl: config.publicUrl }),
    probe: (workspaceId, endpointUrl) => probeEndpoint({ botlink, health, credentials: (id) => integration.credentials(id) }, workspaceId, endpointUrl),
    ...options.health,
  });
  // Sign-in for people: passwords, invite links, failed attempts slowed down per email and per address.
  const throttle = createLoginThrottle({
    repository: signInThrottleRepository(database.db),
    ...options.signIn,
    onSweepError: (err) => logger.warn({ err }, 'forgetting old sign-in failures failed; the next sweep tries again'),
  });
  // The one mailer (SMTP_URL): invites and password resets here, replies to web chat visitors who left (service-channels).
  const mailer = createMailer(config.smtp);
  const signIn = createSignInService({ repository: signInRepository(database.db), throttle, publicUrl: config.publicUrl, mailer, logger });
  const workspaceNames = workspaceSettingsRepository(database.db);
  const accounts = createAccountsService({
    accounts: accountsRepository(database.db),
    invites: signIn,
    emailInvite: ({ to, workspaceId, invite }) => {
      if (!mailer.configured) return false;
      void workspaceNames
        .find(workspaceId)
        .then((workspace) => mailer.send(inviteEmail({ to, workspace: workspace?.name ?? 'your workspace', link: invite.invite_url, expiresAt: invite.expires_at })))
        // Never the link in a log line: it sets the password.
        .catch((err: unknown) => logger.warn({ workspaceId, reason: err instanceof Error ? err.message : String(err) }, 'an invite email could not be sent; the link was shown to whoever made it'));
      return true;
    },
  });
  const streams = createStreamGuard({ liveTokenIds: (ids) => accounts.liveTokenIds(ids), logger, ...options.streams });
  const integration = createIntegrationService({
    integrations: integrationsRepository(database.db),
    secrets,
    http,
    botlink,
    tools,
    health,
    // protocol §4.3: the manifest cache belongs to the endpoint and key it was fetched with.
    onChange: (workspaceId) => tools.invalidate(workspaceId),
  });
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
  const apiKeys = createApiKeysService({ apiKeys: apiKeysRepository(database.db) });

  // Conversations: one actor per session (machines/session.machine.ts).
  const ai = createAi(config.llm, { logger });
  const sessions = sessionsRepository(database.db);
  // The team is available while someone of it is (presence per person) and now is inside the team hours when set, on
  // every channel (docs/architecture.md, "Presence and assignment").
  const phoneRepo = phoneRepository(database.db);
  const presenceRepo = teamPresenceRepository(database.db);
  const teamStatus = createTeamAvailability({
    phone: phoneRepo,
    presence: presenceRepo,
    idleMinutes: config.team.presenceIdleMinutes,
    ...(options.phone?.now ? { now: options.phone.now } : {}),
  });
  const teamAvailable = teamStatus.available;
  return {
    metrics,
    http,
    botlink,
    tools,
    health,
    signIn,
    mailer,
    accounts,
    streams,
    integration,
    knowledge,
    knowledgeRepo,
    knowledgeEntries,
    knowledgeSources,
    knowledgeScheduler,
    knowledgeQuestionsJobs,
    knowledgeQuestions,
    knowledgeEmbeddings,
    apiKeys,
    ai,
    sessions,
    phoneRepo,
    presenceRepo,
    teamStatus,
    teamAvailable,
  };
}
