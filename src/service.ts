/**
 * The composition root: opens the database (migrated under a lock), builds every service with its dependencies,
 * and serves HTTP. `main.ts` and the tests both start the service through here, so tests run the real wiring.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { migrate, openDatabase, type OpenedDatabase } from '../db/database.ts';
import { accountsRepository } from '../db/repositories/accounts.repository.ts';
import { signInRepository } from '../db/repositories/sign-in.repository.ts';
import { signInThrottleRepository } from '../db/repositories/sign-in-throttle.repository.ts';
import { createLoginThrottle, type LoginThrottleOptions } from './auth/login-throttle.ts';
import { createSignInService } from './accounts/sign-in-service.ts';
import { authRoutes } from './http/routes/auth.ts';
import { integrationsRepository } from '../db/repositories/integrations.repository.ts';
// Knowledge base and content sync.
import { apiKeysRepository } from '../db/repositories/api-keys.repository.ts';
import { knowledgeRepository } from '../db/repositories/knowledge.repository.ts';
import { createApiKeysService } from './auth/api-keys.ts';
import { keyRoutes } from './http/routes/keys.ts';
import { syncRoutes } from './http/routes/sync.ts';
import { knowledgeRoutes } from './http/routes/knowledge.ts';
import { createKnowledgeEntries } from './knowledge/knowledge-entries.ts';
import { createTryQuestion } from './knowledge/try-question.ts';
import { detectLanguage } from './text/detect-language.ts';
import { createKnowledgeService, type KnowledgeService } from './knowledge/knowledge-service.ts';
import { createAccountsService, type AccountsService } from './accounts/accounts-service.ts';
import { createBotLinkClient } from './botlink/client.ts';
import { createEndpointHealthTracker, type EndpointHealthTrackerDeps } from './botlink/endpoint-health-tracker.ts';
import { probeEndpoint, recordHealthTransition } from './integration/endpoint-health-events.ts';
import { createToolsClient } from './botlink/tools-client.ts';
import { createAi } from './ai/index.ts';
import { sessionsRepository } from '../db/repositories/sessions.repository.ts';
import { sessionRoutes } from './http/routes/sessions.ts';
import { createStreamGuard, type StreamGuardOptions } from './auth/stream-guard.ts';
import { channelRenderers } from './channels/renderers.ts';
import { createSessionRuntime, type SessionRuntime } from './sessions/session-runtime.ts';
import { createLiveBus, type LiveBusDeps } from './events/live-bus.ts';
import { liveEventsRepository } from '../db/repositories/live-events.repository.ts';
// The team's side: who handles a conversation, the inbox, agents' messages (src/inbox).
import { createInboxEvents } from './sessions/inbox-events.ts';
import { createInboxService, type InboxService } from './inbox/inbox-service.ts';
import { HANDBACK_SWEEP_MS } from './inbox/limits.ts';
import { inboxRoutes } from './http/routes/inbox.ts';
// Admission control: the embedded engine's bounds under overload (src/admission, docs/operations.md "Overload").
import { startAdmissionMonitor } from './admission/admission-monitor.ts';
import type { AdmissionLimits } from './admission/admission.ts';
import { countTurns } from './admission/count-turns.ts';
import { EMBEDDED_TURN_WRITE_LINGER_MS } from './admission/limits.ts';
import type { Config } from './config.ts';
import { acquireDataDirLock } from './data-dir-lock.ts';
import { createApp } from './http/app.ts';
import { widgetPages } from './http/pages/widget.ts';
import { buildOpenApi } from './http/openapi.ts';
import { accountRoutes } from './http/routes/accounts.ts';
import { integrationRoutes } from './http/routes/integration.ts';
import { operationRoutes } from './http/routes/operations.ts';
import type { RouteDefinition } from './http/route.ts';
import { createIntegrationService } from './integration/integration-service.ts';
import { createReplayService } from './integration/replay.ts';
import type { Logger } from './log.ts';
import { createMetrics } from './metrics.ts';
import { GuardedClient, type GuardedClientOptions } from './net/guarded-client.ts';
import { loadOrCreateMasterKey } from './secrets/master-key.ts';
import { createSecretBox } from './secrets/secret-box.ts';
// Website chat (src/channels/webchat).
import { createRateLimiter, type RateLimitOptions } from './channels/webchat/rate-limiter.ts';
import { createWebchatService } from './channels/webchat/webchat-service.ts';
import { createWidgetGate, WEBCHAT_PATH } from './channels/webchat/widget-gate.ts';
import { webchatRoutes } from './http/routes/webchat.ts';
// The dashboard web app (src/dashboard).
import { dashboardPages } from './http/pages/dashboard.ts';

// WhatsApp (src/channels/whatsapp).
import { whatsappRepository } from '../db/repositories/whatsapp.repository.ts';
import { createWhatsappChannel, type WhatsappChannel, type WhatsappChannelOptions } from './channels/whatsapp/whatsapp-channel.ts';
import { whatsappRoutes } from './http/routes/whatsapp.ts';

// Phone and team hours (src/channels/phone).
import { phoneRepository } from '../db/repositories/phone.repository.ts';
import { createPhoneChannel, type PhoneChannelOptions } from './channels/phone/phone-channel.ts';
import { createPhoneMetrics } from './channels/phone/phone-metrics.ts';
import { createTeamAvailability } from './channels/phone/team-availability.ts';
import { phoneRoutes } from './http/routes/phone.ts';
import { workspaceRoutes } from './http/routes/workspace.ts';
import { analyticsRoutes } from './http/routes/analytics.ts';
import { analyticsRepository } from '../db/repositories/analytics.repository.ts';
import { workspaceSettingsRepository } from '../db/repositories/workspace-settings.repository.ts';

// Outgoing webhooks (src/webhooks): settings, the outbox's delivery worker, LISTEN on real PostgreSQL.
import { webhooksRepository } from '../db/repositories/webhooks.repository.ts';
import { webhookRoutes } from './http/routes/webhooks.ts';
// Customers' data under control (src/privacy, docs/privacy.md): the audit log, retention, export and erasure.
import { createPrivacy, type Privacy } from './privacy-setup.ts';
import { createDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions } from './webhooks/delivery-worker.ts';
import { listenForDeliveries, type OutboxListener } from './webhooks/outbox-listener.ts';
import { createWebhookService, type WebhookService } from './webhooks/webhook-service.ts';

export const VERSION = '0.1.0';
/** How long SIGTERM waits for calls, turns, messages and deliveries in flight (each stage), in ms. */
export const DEFAULT_DRAIN_MS = 10_000;

export interface ServiceOptions {
  config: Config;
  logger: Logger;
  /** Tests: an already opened database (skips opening and the data-dir lock). */
  database?: OpenedDatabase;
  /** Tests: DNS for the guarded client. */
  lookup?: GuardedClientOptions['lookup'];
  /** How long SIGTERM waits for requests in flight; default {@link DEFAULT_DRAIN_MS}. */
  drainMs?: number;
  /** Session runtime settings (tests use short ones). */
  sessions?: { idleMs?: number; instanceId?: string };
  /** Live events across engines: how often they are read without a NOTIFY (tests use short ones). */
  live?: Pick<LiveBusDeps, 'pollMs' | 'watchesRefreshMs'>;
  /** WhatsApp: `processing: false` stores webhooks without processing them (ingest benchmark); worker timings for tests. */
  whatsapp?: Pick<WhatsappChannelOptions, 'processing' | 'worker'>;
  /** Website chat: the per-widget-key rate limit (tests use a short window); defaults in src/channels/webchat/limits.ts. */
  webchat?: { rateLimit?: Pick<RateLimitOptions, 'burst' | 'windowMs'> };
  /** Phone: filler, heartbeat and key-entry timings (tests use short ones), and the clock of team hours. */
  phone?: PhoneChannelOptions;
  /** Outgoing webhooks: delivery worker settings (tests use short ones); defaults in src/webhooks/limits.ts. */
  webhooks?: Pick<DeliveryWorkerOptions, 'instanceId' | 'endpointConcurrency' | 'maxInFlight' | 'pollIntervalMs' | 'timeoutMs' | 'leaseMs'>;
  /**
   * Admission control's bounds (tests use small ones); default: src/admission/limits.ts for the embedded default (PGlite
   * opened from DATA_DIR), none on PostgreSQL or on a database handed in (tests, benches).
   */
  admission?: AdmissionLimits;
  /** Endpoint health: refresh, flush and probe intervals (tests use short ones); defaults in src/botlink/endpoint-health-tracker.ts. */
  health?: Pick<EndpointHealthTrackerDeps, 'refreshMs' | 'flushMs' | 'probeIntervalMs'>;
  /** The inbox: how often waiting conversations past their hand-back deadline are looked for (ms); default HANDBACK_SWEEP_MS. */
  inbox?: { handbackSweepMs?: number };
  /** Live streams: how often their tokens are checked again, and their limits; defaults in src/limits.ts. */
  streams?: Pick<StreamGuardOptions, 'recheckMs' | 'maxPerUser' | 'maxPerWorkspace'>;
  /** Sign-in: the first wait after the failure threshold (tests of what happens during a wait use a long one). */
  signIn?: Pick<LoginThrottleOptions, 'firstWaitMs'>;
  /** Retention: how often the purge is tried (ms; default PURGE_INTERVAL_MS); 0 leaves it to `retention.purge()`. */
  retention?: { intervalMs?: number };
}

export interface RunningService {
  /** http://host:port actually bound. */
  url: string;
  server: Server;
  database: OpenedDatabase;
  accounts: AccountsService;
  /** The knowledge base: sync writes and `search` (KnowledgeSearch) for the AI. */
  knowledge: KnowledgeService;
  /** The live conversations: channels hand messages to it. */
  runtime: SessionRuntime;
  /** WhatsApp: settings, webhook ingest and the processing worker. */
  whatsapp: WhatsappChannel;
  /** The team's inbox: take-over, hand-back, close, agents' messages, the hand-back sweep. */
  inbox: InboxService;
  /** Outgoing webhooks: the settings and log (`service`) and the delivery worker. */
  webhooks: { service: WebhookService; worker: DeliveryWorker };
  /** Ends the web chats quiet for longer than their workspace's idle period now (the sweep does it every 30 s). */
  endIdleWebchats(): Promise<number>;
  /** The audit log and retention (src/privacy): tests read the one and run the other's purge. */
  privacy: Pick<Privacy, 'audit' | 'retention'>;
  /** The route table the app mounts and /openapi.json describes (test/http/authorization-matrix.test.ts walks it). */
  routes: readonly RouteDefinition[];
  stop(): Promise<void>;
}

/**
 * Migrations over the direct connection when there is one (a pooler in front), else over the service's own; through
 * a transaction pooler without a direct connection, in one transaction (db/database.ts, `migrate`).
 */
async function migrateDatabase(config: Config, database: OpenedDatabase): Promise<void> {
  if (config.databaseDirectUrl && database.kind === 'postgres') {
    const direct = await openDatabase({ url: config.databaseDirectUrl, poolSize: 1 });
    try {
      await migrate(direct.db);
    } finally {
      await direct.close();
    }
    return;
  }
  await migrate(database.db, undefined, { inOneTransaction: database.pooler === 'transaction' });
}

export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { config, logger } = options;
  let state: 'starting' | 'ready' | 'draining' = 'starting';

  const releaseLock = options.database || config.databaseUrl ? () => {} : acquireDataDirLock(config.dataDir);
  /** The embedded default as `npm start` runs it: PGlite in DATA_DIR, on this process's event loop (src/admission). */
  const embedded = !options.database && !config.databaseUrl;
  const opening = { url: config.databaseUrl, directUrl: config.databaseDirectUrl, pooler: config.databasePooler, dataDir: config.dataDir };
  const database = options.database ?? (await openDatabase(opening));
  try {
    if (!options.database) await migrateDatabase(config, database);
  } catch (err) {
    await database.close();
    releaseLock();
    throw err;
  }

  const { key: masterKey, created } = loadOrCreateMasterKey(config.masterKey, config.dataDir);
  if (created) logger.warn({ dataDir: config.dataDir }, 'generated a master key in DATA_DIR; back it up, stored secrets cannot be read without it');
  // One box seals every stored secret (integration keys, webhook secrets, WhatsApp tokens).
  const secrets = createSecretBox(masterKey, config.masterKeyPrevious ? [config.masterKeyPrevious] : []);
  const drainMs = options.drainMs ?? DEFAULT_DRAIN_MS;

  const metrics = createMetrics();
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
  const signIn = createSignInService({ repository: signInRepository(database.db), throttle, publicUrl: config.publicUrl });
  const accounts = createAccountsService({ accounts: accountsRepository(database.db), invites: signIn });
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
  // Knowledge base and content sync (protocol §1.6).
  const knowledge = createKnowledgeService({ knowledge: knowledgeRepository(database.db) });
  // Pages and Q&A pairs written in the dashboard, in the same tables (docs/knowledge.md).
  const knowledgeRepo = knowledgeRepository(database.db);
  const knowledgeEntries = createKnowledgeEntries({ knowledge: knowledgeRepo, service: knowledge });
  const apiKeys = createApiKeysService({ apiKeys: apiKeysRepository(database.db) });

  // Conversations: one actor per session (machines/session.machine.ts).
  const ai = createAi(config.llm, { logger });
  const sessions = sessionsRepository(database.db);
  // Phone and team hours: a human handoff connects while the team switch is on and now is inside the team hours.
  const phoneRepo = phoneRepository(database.db);
  const teamAvailable = createTeamAvailability({ phone: phoneRepo, ...(options.phone?.now ? { now: options.phone.now } : {}) });
  // This engine's name: its session leases and its live events carry it.
  const engine = options.sessions?.instanceId ?? `engine-${randomUUID()}`;
  // Live events reach the streams of every engine (src/events/live-bus.ts).
  const live = createLiveBus({
    events: liveEventsRepository(database.db),
    logger,
    engine,
    ...(database.listen ? { listen: database.listen } : {}),
    ...(options.live ?? {}),
  });
  await live.start();
  // Changes of the team's inbox pass this one emitter (src/sessions/inbox-events.ts), to every engine's streams.
  const inboxEvents = createInboxEvents(logger, live);
  const runtime = createSessionRuntime({
    live,
    teamAvailable,
    inbox: inboxEvents,
    sessions,
    renderers: channelRenderers,
    credentials: (workspaceId) => integration.credentials(workspaceId),
    botlink,
    health,
    knowledge,
    ai,
    tools,
    logger,
    // PGlite runs on this process's event loop: its turn ends go in batches (src/admission/limits.ts says why).
    ...(embedded ? { turnWriteLingerMs: EMBEDDED_TURN_WRITE_LINGER_MS } : {}),
    ...(options.sessions?.idleMs ? { idleMs: options.sessions.idleMs } : {}),
    instanceId: engine,
    leaseMs: config.leaseMs,
  });
  const admission = startAdmissionMonitor({ embedded, metrics, logger, ...(options.admission ? { limits: options.admission } : {}) });
  // The channels' turns are counted in flight (the service's `runtime` itself stays the one the tests and benches see).
  const channelRuntime = countTurns(runtime, admission);
  const workspaceSettings = workspaceSettingsRepository(database.db);
  /** docs/webchat.md, "When a chat ends": one UPDATE that every engine may run; open dashboards hear of each end. */
  async function endIdleWebchats(): Promise<number> {
    const ended = await workspaceSettings.endIdleWebchats();
    for (const s of ended) live.publish('session', s.id, { type: 'state', sessionId: s.id, state: 'ended', status: 'ended' });
    if (ended.length > 0) logger.info({ ended: ended.length }, 'quiet web chats were ended');
    return ended.length;
  }
  const sweep = setInterval(() => {
    void endIdleWebchats().catch((err: unknown) => logger.error({ err }, 'ending quiet web chats failed'));
    void runtime.passivateIdle().catch((err: unknown) => logger.error({ err }, 'passivation failed'));
    void runtime.endAbandonedCalls().catch((err: unknown) => logger.error({ err }, 'ending abandoned phone sessions failed'));
  }, 30_000);
  sweep.unref();

  const routes: RouteDefinition[] = [];
  const openApiDocument = () => buildOpenApi(routes, { version: VERSION, serverUrl: config.publicUrl });
  routes.push(
    ...operationRoutes({
      metrics,
      openApi: openApiDocument,
      readiness: {
        async notReadyReason() {
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
    ...integrationRoutes(integration, createReplayService({ turns: sessions, credentials: (id) => integration.credentials(id), http })),
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
      }),
    ),
    ...keyRoutes(apiKeys),
    ...sessionRoutes({
      sessions,
      runtime,
      streams,
      team: async (workspaceId) => ({ available: (await phoneRepo.teamState(workspaceId))?.switchOn ?? false, availableNow: await teamAvailable(workspaceId) }),
      complete: ai.complete,
      logger,
    }),
  );

  // Website chat (protocol §1.3, §6): knowledge base only, events into the outbox, the widget gate below /v1/webchat/.
  const webchat = createWebchatService({
    db: database.db,
    runtime: channelRuntime,
    teamAvailable,
    sessions,
    inbox: inboxEvents,
    publicUrl: config.publicUrl,
    logger,
    metrics,
  });
  const widgetGate = createWidgetGate({
    apiKeys,
    access: (workspaceId) => webchat.access(workspaceId),
    limiter: createRateLimiter(options.webchat?.rateLimit),
    admission,
    metrics,
  });
  routes.push(...webchatRoutes(webchat));
  const widget = { path: WEBCHAT_PATH, middleware: widgetGate.middleware, workspaceOf: widgetGate.workspaceOf };

  // WhatsApp (docs/interfaces.md: Channels → WhatsApp): webhook stored first, processed by the worker started below.
  const whatsapp = createWhatsappChannel({
    config: config.whatsapp,
    publicUrl: config.publicUrl,
    repository: whatsappRepository(database.db),
    secrets,
    runtime: channelRuntime,
    serving: (workspaceId) => accounts.isServing(workspaceId),
    // The inbox is built below; the worker starts after listen, so it is there by the first send.
    onDelivery: (change) => {
      void inbox.deliveryChanged(change).catch((err: unknown) => logger.warn({ err }, 'a delivery status could not be shown live'));
    },
    logger,
    registry: metrics.registry,
    ...options.whatsapp,
    worker: { leaseMs: config.leaseMs, ...options.whatsapp?.worker },
  });
  routes.push(...whatsappRoutes(whatsapp));

  // The team's side (docs/interfaces.md, "The team's side"): agents' WhatsApp messages go out through the worker above.
  const inbox = createInboxService({ db: database.db, sessions, runtime, inbox: inboxEvents, wakeWhatsapp: () => whatsapp.worker.wake(), logger });
  routes.push(...inboxRoutes({ inbox, events: inboxEvents, streams }));
  // Waiting conversations nobody took go back to the bot after the workspace's handback_after_minutes.
  const handbackSweep = setInterval(() => {
    void inbox.handBackOverdue().catch((err: unknown) => logger.error({ err }, 'the hand-back sweep failed'));
  }, options.inbox?.handbackSweepMs ?? HANDBACK_SWEEP_MS);
  handbackSweep.unref();

  // Phone (docs/interfaces.md: Channels → Phone): settings, Twilio's TwiML webhooks; the WebSocket is attached below.
  routes.push(
    ...phoneRoutes({
      phone: phoneRepo,
      sessions,
      teamAvailable,
      publicUrl: config.publicUrl,
      twilioAuthToken: config.twilioAuthToken,
      bridgeToken: config.bridgeToken,
      logger,
      ...(options.phone?.now ? { now: options.phone.now } : {}),
    }),
  );
  // The workspace's own settings, the user's email, and what to paste into Twilio and Meta (src/http/routes/workspace.ts).
  routes.push(
    ...workspaceRoutes({
      settings: workspaceSettings,
      publicUrl: config.publicUrl,
      twilioAuthToken: config.twilioAuthToken,
      bridgeToken: config.bridgeToken,
      whatsapp: config.whatsapp,
    }),
  );

  // The Overview: figures from the hourly roll-ups, unanswered questions, the export (docs/analytics.md).
  routes.push(...analyticsRoutes({ analytics: analyticsRepository(database.db), settings: workspaceSettings }));

  // Outgoing webhooks (protocol §6): events → outbox → one delivery actor per endpoint. The worker starts after
  // listen and stops on drain before the outbound client closes.
  const webhookRepository = webhooksRepository(database.db);
  const webhookWorker = createDeliveryWorker({ repository: webhookRepository, secrets, http, logger, metrics, leaseMs: config.leaseMs, ...options.webhooks });
  const webhooks = createWebhookService({ db: database.db, repository: webhookRepository, secrets, http, worker: webhookWorker });
  routes.push(...webhookRoutes(webhooks));
  // Customers' data under control (docs/privacy.md): one engine at a time purges past the retention periods.
  const endConversation = (s: { workspaceId: string; channel: 'phone' | 'whatsapp' | 'webchat'; externalId: string }) => runtime.end(s.workspaceId, s.channel, s.externalId);
  const privacy = createPrivacy({ db: database.db, logger, registry: metrics.registry, engine, endConversation, ...options.retention });
  routes.push(...privacy.routes);
  const stopPurge = privacy.start();
  let webhookListener: OutboxListener | undefined;

  const pages = [dashboardPages(), widgetPages({ publicUrl: config.publicUrl })];
  const app = createApp({ routes, accounts, metrics, logger, adminToken: config.adminToken, apiKeys, widget, pages, audit: privacy.audit });
  const server = createServer({ requestTimeout: 30_000, headersTimeout: 15_000 }, app);
  // Phone: GET /v1/phone/ws upgrades on this server (ws in noServer mode).
  const phone = createPhoneChannel({
    runtime: channelRuntime,
    admission,
    workspaceForNumber: (number) => phoneRepo.workspaceForNumber(number),
    prepareCall: (workspaceId) => {
      integration
        .credentials(workspaceId)
        .then((credentials) => credentials && tools.prefetch(workspaceId, credentials))
        .catch((err: unknown) => logger.warn({ err, workspaceId }, 'the tools manifest could not be prefetched for a call'));
    },
    metrics: createPhoneMetrics(metrics.registry),
    logger,
    auth: { twilioAuthToken: config.twilioAuthToken, bridgeToken: config.bridgeToken, publicUrl: config.publicUrl },
    ...(options.phone ? { options: options.phone } : {}),
  });
  phone.attach(server);
  server.listen(config.port, config.host);
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  state = 'ready';
  whatsapp.start();
  health.start();
  // Outgoing webhooks: deliver what is due (also what a previous run left), and on real PostgreSQL listen for wake-ups.
  webhookWorker.start();
  // LISTEN needs a connection of its own: not through a transaction pooler (then the poll wakes the worker).
  const listenUrl = config.databaseDirectUrl ?? (config.databasePooler === 'transaction' ? null : config.databaseUrl);
  if (listenUrl && database.kind === 'postgres') {
    const url = listenUrl;
    webhookListener = await listenForDeliveries({ url, db: database.db, logger, onWake: webhookWorker.wake }).catch((err: unknown) => {
      logger.warn({ err }, 'LISTEN for webhook wake-ups failed; deliveries go out on the poll');
      return undefined;
    });
  }
  logger.info({ port: address.port, database: database.kind }, 'botlink is ready');

  let stopping: Promise<void> | undefined;
  return {
    url: `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`,
    server,
    database,
    accounts,
    knowledge,
    runtime,
    whatsapp,
    inbox,
    webhooks: { service: webhooks, worker: webhookWorker },
    endIdleWebchats,
    privacy,
    routes,
    stop() {
      stopping ??= (async () => {
        state = 'draining';
        logger.info('draining: no new work, waiting for requests in flight');
        server.close();
        server.closeIdleConnections();
        // Live streams never finish by themselves; they end now (a dashboard reconnects to another process).
        streams.stop();
        const drained = once(server, 'close').then(() => true);
        const timedOut = new Promise<false>((resolve) => setTimeout(resolve, drainMs, false).unref());
        // Conversations finish their turn and are written before the connections they use go away.
        clearInterval(sweep);
        clearInterval(handbackSweep);
        stopPurge();
        // WhatsApp: no new claims; messages in turn finish before the runtime stops (the rest waits in the database).
        await whatsapp.stop(drainMs);
        // Phone: no new calls; turns in flight are spoken, then each call is handed back (end 'reconnect', 1001).
        await phone.stop(drainMs);
        await runtime.stop(drainMs);
        admission.stop();
        await health.stop();
        await live.stop();
        if (!(await Promise.race([drained, timedOut]))) server.closeAllConnections();
        await ai.close();
        // Outgoing webhooks: attempts in flight finish (or are handed back) before the outbound client closes.
        await webhookListener?.close();
        await webhookWorker.stop(drainMs);
        await http.close();
        if (!options.database) await database.close();
        releaseLock();
        logger.info('stopped');
      })();
      return stopping;
    },
  };
}
