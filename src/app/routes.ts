/**
 * The composition root's route groups that need no channel (src/app/service.ts): operations, accounts, sign-in, the
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
import type { Metrics } from '../metrics.ts';
import type { Accounts } from './accounts.ts';
import type { OutboundClients } from './clients.ts';
import type { Conversations } from './conversations.ts';
import type { KnowledgeBase } from './knowledge.ts';
import { VERSION, type ServiceOptions } from './options.ts';
import { detectLanguage } from '../text/detect-language.ts';

/** Where the service is: readiness answers not ready until it listens, and again once it drains. */
export type ServiceState = 'starting' | 'ready' | 'draining';

export interface CoreRoutesInput {
  options: Pick<ServiceOptions, 'config' | 'logger' | 'rateLimits'>;
  database: OpenedDatabase;
  metrics: Metrics;
  clients: Pick<OutboundClients, 'integration' | 'http' | 'ai'>;
  accounts: Pick<Accounts, 'accounts' | 'signIn' | 'apiKeys' | 'streams'>;
  knowledge: Pick<
    KnowledgeBase,
    'knowledge' | 'knowledgeEntries' | 'knowledgeRepo' | 'knowledgeSources' | 'knowledgeQuestions' | 'knowledgeQuestionsJobs' | 'knowledgeEmbeddings'
  >;
  conversations: Pick<Conversations, 'runtime' | 'sessions' | 'teamStatus' | 'presenceRepo'>;
  /** The team's presence (src/inbox/presence.ts): PUT /v1/team sets it. */
  presence: Pick<PresenceService, 'set' | 'closeTeam'>;
  /** The judge of replay's changed answers (src/app/scenarios.ts, the scenarios' models); null without a model. */
  replayJudge: ReplayJudge | null;
  /** The whole table, filled before the service listens: /openapi.json describes it (these routes among it). */
  routes: readonly RouteDefinition[];
  /** Where the service is, asked by readiness per request. */
  state: () => ServiceState;
}

export function coreRoutes(input: CoreRoutesInput): RouteDefinition[] {
  const { options, database, metrics, presence, replayJudge, routes } = input;
  const { config, logger } = options;
  const { integration, http, ai } = input.clients;
  const { accounts, signIn, apiKeys, streams } = input.accounts;
  const { knowledge, knowledgeEntries, knowledgeRepo } = input.knowledge;
  const { runtime, sessions, teamStatus, presenceRepo } = input.conversations;
  const customerContext = createCustomerContext({ db: database.db, sessions });
  const openApiDocument = () => buildOpenApi(routes, { version: VERSION, serverUrl: config.publicUrl });
  return [
    ...operationRoutes({
      metrics,
      openApi: openApiDocument,
      readiness: {
        async notReadyReason() {
          const state = input.state();
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
      createReplayService({ turns: sessions, credentials: (id) => integration.credentials(id), http, judge: replayJudge, needsModel: NEEDS_MODEL }),
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
    ...knowledgeSourceRoutes(input.knowledge.knowledgeSources),
    // The questions the AI writes for each passage: how many, and their tokens (docs/knowledge.md).
    ...knowledgeAiQuestionRoutes({
      enabled: input.knowledge.knowledgeQuestions !== null,
      summary: (workspaceId) => input.knowledge.knowledgeQuestionsJobs.summary(workspaceId),
      embeddings: input.knowledge.knowledgeEmbeddings?.summary ?? null,
    }),
    ...keyRoutes(apiKeys),
    ...sessionRoutes({
      sessions,
      satisfaction: visitorRepository(database.db),
      runtime,
      streams,
      team: async (workspaceId) => ({
        available: await presenceRepo.anyAvailable(workspaceId, config.team.presenceIdleMinutes),
        availableNow: await teamStatus.available(workspaceId),
      }),
      // PUT /v1/team, kept for API clients: the stored switch follows it (GET /v1/phone), and it sets presence (told to
      // the workspace's open dashboards like any change of it).
      async switchTeam(principal, available) {
        await sessions.setTeamAvailable(principal.workspaceId, available);
        if (available) await presence.set(principal, 'available');
        else await presence.closeTeam(principal.workspaceId);
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
export interface SettingsRoutesInput {
  options: Pick<ServiceOptions, 'config' | 'logger' | 'phone'>;
  database: OpenedDatabase;
  accounts: Pick<Accounts, 'accounts'>;
  conversations: Pick<Conversations, 'phoneRepo' | 'sessions' | 'teamStatus' | 'workspaceSettings'>;
}

export function settingsRoutes(input: SettingsRoutesInput): RouteDefinition[] {
  const { options, database } = input;
  const { config, logger } = options;
  const { phoneRepo, sessions, teamStatus, workspaceSettings } = input.conversations;
  return [
    // Phone (docs/interfaces.md: Channels → Phone): settings, Twilio's TwiML webhooks; the WebSocket is attached in
    // src/app/channels.ts (attachPhone).
    ...phoneRoutes({
      phone: phoneRepo,
      sessions,
      teamAvailable: teamStatus.available,
      teamOpensAt: teamStatus.opensAt,
      publicUrl: config.publicUrl,
      twilioAuthToken: config.twilioAuthToken,
      bridgeToken: config.bridgeToken,
      logger,
      ...(options.phone?.now ? { now: options.phone.now } : {}),
    }),
    // The workspace's own settings, the user's email, and what to paste into Twilio and Meta (src/http/routes/workspace.ts).
    ...workspaceRoutes({
      settings: workspaceSettings,
      accounts: input.accounts.accounts,
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
