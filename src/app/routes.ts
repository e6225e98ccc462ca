/**
 * The composition root's route groups that need no channel (src/service.ts): operations, accounts, sign-in, the
 * integration, sync and the knowledge base, keys and conversations first; the phone's, the workspace's and the
 * Overview's settings after the team's side. The order of the table is the order the app mounts and /openapi.json lists.
 */
import type { OpenedDatabase } from '../../db/database.ts';
import { analyticsRepository } from '../../db/repositories/analytics.repository.ts';
import { visitorRepository } from '../../db/repositories/visitor.repository.ts';
import { firstDayRepository } from '../../db/repositories/first-day.repository.ts';
import { sessionNotesRepository } from '../../db/repositories/session-notes.repository.ts';
import { createRateLimiter } from '../rate-limiter.ts';
import { channelRenderers } from '../channels/renderers.ts';
import { buildOpenApi } from '../http/openapi.ts';
import type { RouteDefinition } from '../http/route.ts';
import { accountRoutes } from '../http/routes/accounts.ts';
import { analyticsRoutes } from '../http/routes/analytics.ts';
import { authRoutes } from '../http/routes/auth.ts';
import { integrationRoutes } from '../http/routes/integration.ts';
import { keyRoutes } from '../http/routes/keys.ts';
import { knowledgeRoutes } from '../http/routes/knowledge.ts';
import { knowledgePhrasingRoutes } from '../http/routes/knowledge-phrasings.ts';
import { knowledgeSourceRoutes } from '../http/routes/knowledge-sources.ts';
import { knowledgeAiQuestionRoutes } from '../http/routes/knowledge-ai-questions.ts';
import { operationRoutes } from '../http/routes/operations.ts';
import { phoneRoutes } from '../http/routes/phone.ts';
import { sessionRoutes } from '../http/routes/sessions.ts';
import { customerContextRoutes } from '../http/routes/customer-context.ts';
import { firstDayRoutes } from '../http/routes/first-day.ts';
import { syncRoutes } from '../http/routes/sync.ts';
import { workspaceRoutes } from '../http/routes/workspace.ts';
import { SUMMARY_RATE_LIMIT } from '../inbox/limits.ts';
import { createSummaries } from '../inbox/summary.ts';
import { notesOf } from '../inbox/notes.ts';
import type { PresenceService } from '../inbox/presence.ts';
import { createCustomerContext } from '../inbox/customer-context.ts';
import { createReplayService, type ReplayJudge } from '../integration/replay.ts';
import { TRY_QUESTION_RATE_LIMIT } from '../knowledge/limits.ts';
import { createKnowledgeTeaching } from '../knowledge/phrasings-service.ts';
import { createTryQuestion } from '../knowledge/try-question.ts';
import { NEEDS_MODEL } from '../scenarios/judge.ts';
import type { ServiceBase } from './knowledge.ts';
import type { Conversations } from './conversations.ts';
import { VERSION, type ServiceOptions } from './options.ts';
import { detectLanguage } from '../text/detect-language.ts';

/** Where the service is: readiness answers not ready until it listens, and again once it drains. */
export type ServiceState = 'starting' | 'ready' | 'draining';

export function coreRoutes(deps: {
  options: ServiceOptions;
  database: OpenedDatabase;
  base: ServiceBase;
  conversations: Conversations;
  /** The whole table, complete by the time /openapi.json is asked for. */
  routes: readonly RouteDefinition[];
  /** The team's presence (src/inbox/presence.ts), built with the team's side after these routes; asked for per request. */
  presence: () => Pick<PresenceService, 'set' | 'closeTeam'>;
  state: () => ServiceState;
  /** The judge of replay's changed answers (the scenarios' side, built after these routes); null without a model. */
  replayJudge: () => ReplayJudge | null;
}): RouteDefinition[] {
  const { options, database, routes } = deps;
  const { config, logger } = options;
  const { metrics, accounts, signIn, integration, http, sessions, knowledge, knowledgeEntries, knowledgeRepo, ai, apiKeys, streams } = deps.base;
  const { teamAvailable, presenceRepo } = deps.base;
  const { runtime } = deps.conversations;
  const customerContext = createCustomerContext({ db: database.db, sessions });
  const openApiDocument = () => buildOpenApi(routes, { version: VERSION, serverUrl: config.publicUrl });
  return [
    ...operationRoutes({
      metrics,
      openApi: openApiDocument,
      readiness: {
        async notReadyReason() {
          const state = deps.state();
          if (state !== 'ready') return state;
          try {
            await database.db.selectFrom('workspaces').select('id').limit(1).execute();
            return null;
          } catch {
            return 'database';
          }
        },
      },
    }),
    ...accountRoutes(accounts),
    ...authRoutes(signIn),
    ...integrationRoutes(
      integration,
      createReplayService({ turns: sessions, credentials: (id) => integration.credentials(id), http, judge: deps.replayJudge, needsModel: NEEDS_MODEL }),
    ),
    ...syncRoutes(knowledge),
    ...knowledgeRoutes(
      knowledgeEntries,
      // "Try a question": a web chat turn's search, AI and renderer, without a conversation (docs/knowledge.md).
      createTryQuestion({
        search: (workspaceId, query, language, options) => knowledge.search(workspaceId, query, language, options),
        chunkOrigins: (workspaceId, ids) => knowledgeRepo.chunkOrigins(workspaceId, ids),
        ai,
        render: (text, source, language) => channelRenderers.webchat({ text, source, language }),
        askIntegrator: async (workspaceId, input) => (await integration.ask(workspaceId, input))?.exchange,
        detectLanguage,
        limiter: createRateLimiter(TRY_QUESTION_RATE_LIMIT, options.rateLimits?.tryQuestion),
        tried: (workspaceId) => firstDayRepository(database.db).questionTried(workspaceId),
      }),
    ),
    // The team teaches the bot: answers from conversations, the customer's wording on a passage (docs/knowledge.md).
    ...knowledgePhrasingRoutes(
      createKnowledgeTeaching({ knowledge: knowledgeRepo, service: knowledge, entries: knowledgeEntries, conversations: sessions }),
    ),
    // Websites, sitemaps and files as knowledge (docs/knowledge.md, "Websites and files").
    ...knowledgeSourceRoutes(deps.base.knowledgeSources),
    // The questions the AI writes for each passage: how many, and their tokens (docs/knowledge.md).
    ...knowledgeAiQuestionRoutes({
      enabled: deps.base.knowledgeQuestions !== null,
      summary: (workspaceId) => deps.base.knowledgeQuestionsJobs.summary(workspaceId),
      embeddings: deps.base.knowledgeEmbeddings?.summary ?? null,
    }),
    ...keyRoutes(apiKeys),
    ...sessionRoutes({
      sessions,
      satisfaction: visitorRepository(database.db),
      runtime,
      streams,
      team: async (workspaceId) => ({
        available: await presenceRepo.anyAvailable(workspaceId, config.team.presenceIdleMinutes),
        availableNow: await teamAvailable(workspaceId),
      }),
      // PUT /v1/team, kept for API clients: the stored switch follows it (GET /v1/phone), and it sets presence (told to
      // the workspace's open dashboards like any change of it).
      async switchTeam(principal, available) {
        await sessions.setTeamAvailable(principal.workspaceId, available);
        if (available) await deps.presence().set(principal, 'available');
        else await deps.presence().closeTeam(principal.workspaceId);
      },
      // The take-over summaries, kept per last message (src/inbox/summary.ts).
      summaries: createSummaries({ complete: ai.complete, logger, limiter: createRateLimiter(SUMMARY_RATE_LIMIT, options.rateLimits?.summaries) }),
      // The team's private notes among the session's messages (src/inbox/notes.ts).
      notes: notesOf(sessionNotesRepository(database.db)),
      customerContext,
    }),
    // The customer panel's earlier conversations (src/inbox/customer-context.ts).
    ...customerContextRoutes(customerContext),
  ];
}

/** The phone's, the workspace's and the Overview's settings and figures, after the team's side. */
export function settingsRoutes(options: ServiceOptions, database: OpenedDatabase, base: ServiceBase, conversations: Conversations): RouteDefinition[] {
  const { config, logger } = options;
  const { phoneRepo, sessions, teamAvailable } = base;
  const { workspaceSettings } = conversations;
  return [
    // Phone (docs/interfaces.md: Channels → Phone): settings, Twilio's TwiML webhooks; the WebSocket is attached in
    // src/service-channels.ts (createPhone).
    ...phoneRoutes({
      phone: phoneRepo,
      sessions,
      teamAvailable,
      teamOpensAt: base.teamStatus.opensAt,
      publicUrl: config.publicUrl,
      twilioAuthToken: config.twilioAuthToken,
      bridgeToken: config.bridgeToken,
      logger,
      ...(options.phone?.now ? { now: options.phone.now } : {}),
    }),
    // The workspace's own settings, the user's email, and what to paste into Twilio and Meta (src/http/routes/workspace.ts).
    ...workspaceRoutes({
      settings: workspaceSettings,
      accounts: base.accounts,
      publicUrl: config.publicUrl,
      twilioAuthToken: config.twilioAuthToken,
      bridgeToken: config.bridgeToken,
      whatsapp: config.whatsapp,
    }),
    // The Overview's first-day list, ticked from the workspace's state (docs/analytics.md, "The first day").
    ...firstDayRoutes({ firstDay: firstDayRepository(database.db) }),
    // The Overview: figures from the hourly roll-ups, unanswered questions, the export (docs/analytics.md).
    ...analyticsRoutes({
      analytics: analyticsRepository(database.db),
      settings: workspaceSettings,
      labels: sessions,
      satisfaction: visitorRepository(database.db),
    }),
  ];
}
