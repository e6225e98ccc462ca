/**
 * The composition root: opens the database (migrated under a lock), builds every part of the service with what it
 * needs, and serves HTTP. `main.ts` and the tests both start the service through here, so tests run the real wiring.
 * The wiring runs in named stages, one file each beside this one (docs/architecture.md, "Where the service is put
 * together"), in an order where every value exists before it is passed: the database and secrets (storage.ts), the
 * outbound clients (clients.ts), people and sign-in (accounts.ts), the knowledge base (knowledge.ts), the conversations
 * (conversations.ts), the team's presence (team.ts), the scenarios' models (scenarios.ts), the routes without a
 * channel (routes.ts), the channels (channels.ts), the team's inbox (team.ts), the test scenarios (scenarios.ts),
 * outgoing webhooks and housekeeping (workers.ts, privacy.ts), the HTTP app (http.ts), the workers started after
 * listen (workers.ts) and the stop order (stop.ts). Each stage takes one object of exactly what it uses.
 */
import type { Server } from 'node:http';
import type { OpenedDatabase } from '../../db/database.ts';
import type { AccountsService } from '../accounts/accounts-service.ts';
import type { WhatsappChannel } from '../channels/whatsapp/whatsapp-channel.ts';
import type { RouteDefinition } from '../http/route.ts';
import type { InboxService } from '../inbox/inbox-service.ts';
import type { KnowledgeService } from '../knowledge/knowledge-service.ts';
import { createMetrics } from '../metrics.ts';
import { warnIfEngineCanChangeAuditLog } from '../privacy/audit-owner.ts';
import type { KnowledgeRechecks } from '../scenarios/knowledge-rechecks.ts';
import type { ScenarioWorker } from '../scenarios/scenario-worker.ts';
import type { SessionRuntime } from '../sessions/session-runtime.ts';
import type { DeliveryWorker } from '../webhooks/delivery-worker.ts';
import type { WebhookService } from '../webhooks/webhook-service.ts';
import { createAccounts } from './accounts.ts';
import { attachPhone, createChannels } from './channels.ts';
import { createOutboundClients } from './clients.ts';
import { startConversations } from './conversations.ts';
import { createHttpServer, listen } from './http.ts';
import { createKnowledgeBase } from './knowledge.ts';
import { DEFAULT_DRAIN_MS, type ServiceOptions } from './options.ts';
import { createPrivacy, type Privacy } from './privacy.ts';
import { coreRoutes, settingsRoutes, type ServiceState } from './routes.ts';
import { createScenarioModels, createTestScenarios } from './scenarios.ts';
import { drainService } from './stop.ts';
import { openSecrets, openStorage } from './storage.ts';
import { startInbox, startPresenceAndAssignment } from './team.ts';
import { createWebhookDelivery, startHousekeeping, startWorkers } from './workers.ts';

export { DEFAULT_DRAIN_MS, VERSION, type ServiceOptions } from './options.ts';

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
  /** Test scenarios: the worker that plays their runs on this engine (tests wait for it). */
  scenarios: Pick<ScenarioWorker, 'idle' | 'wake'>;
  /** Saved checks run again after knowledge changes (tests run the due ones with `runDue`). */
  knowledgeRechecks: Pick<KnowledgeRechecks, 'runDue'>;
  /** The route table the app mounts and /openapi.json describes (test/http/authorization-matrix.test.ts walks it). */
  routes: readonly RouteDefinition[];
  stop(): Promise<void>;
}

export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { config, logger } = options;
  let state: ServiceState = 'starting';

  const storage = await openStorage(options);
  const { database } = storage;
  // Once at start: an engine whose role could rewrite the audit log says so (docs/operations.md, "The audit log's owner").
  await warnIfEngineCanChangeAuditLog(database, logger).catch((err: unknown) => logger.error({ err }, 'could not read who may change the audit log'));
  const secrets = openSecrets({ config, logger });
  const drainMs = options.drainMs ?? DEFAULT_DRAIN_MS;
  const metrics = createMetrics();
  const clients = createOutboundClients({ options, database, secrets, metrics });
  const accounts = createAccounts({ options, database });
  const knowledgeBase = createKnowledgeBase({ options, database, metrics, clients });
  const conversations = await startConversations({ options, storage, metrics, clients, knowledge: knowledgeBase.knowledge });
  const { runtime, endIdleWebchats } = conversations;
  const teamPresence = startPresenceAndAssignment({ options, conversations });
  // The models of the test scenarios (docs/scenarios.md) before the routes: replay's judge is one of them.
  const scenarioModels = createScenarioModels({ options, database });

  // The route table, in the order the app mounts it and /openapi.json lists it; complete before the service listens.
  const routes: RouteDefinition[] = [];
  routes.push(
    ...coreRoutes({
      options, database, metrics, clients, accounts, knowledge: knowledgeBase, conversations,
      presence: teamPresence.presence, replayJudge: scenarioModels.replayJudge, routes, state: () => state,
    }),
  );
  const channels = createChannels({ options, database, secrets, metrics, accounts, conversations });
  routes.push(...channels.routes);
  const { whatsapp } = channels;
  const teamInbox = startInbox({
    options, database, accounts, knowledge: knowledgeBase.knowledge, conversations, team: teamPresence,
    sendQueuedWhatsapp: channels.sendQueuedWhatsapp, visitor: channels.visitorSide,
  });
  routes.push(...teamInbox.routes);
  routes.push(...settingsRoutes({ options, database, accounts, conversations }));
  // Test scenarios through the real engine (docs/scenarios.md); their worker starts after listen.
  const scenarios = createTestScenarios({
    options, database, clients, knowledge: knowledgeBase, conversations, webchat: channels.webchat, models: scenarioModels,
  });
  routes.push(...scenarios.routes);
  const webhooks = createWebhookDelivery({ options, database, secrets, metrics, clients });
  routes.push(...webhooks.routes);
  const { webhookWorker } = webhooks;
  // Customers' data under control (docs/privacy.md): one engine at a time purges past the retention periods.
  const privacy = createPrivacy({
    db: database.db,
    logger,
    registry: metrics.registry,
    engine: conversations.engine,
    endConversation: (s) => runtime.end(s.workspaceId, s.channel, s.externalId),
    ...options.retention,
  });
  routes.push(...privacy.routes);
  const stopHousekeeping = startHousekeeping({ logger, database, privacy });

  const server = createHttpServer({ options, routes, metrics, accounts, widget: channels.widget, audit: privacy.audit });
  const phone = attachPhone({ options, metrics, clients, conversations, server });
  const { address, url } = await listen({ server, config });
  state = 'ready';
  const webhookListener = await startWorkers({ options, database, whatsapp, health: clients.health, webhookWorker });
  // Emails waiting in the outbox (src/email/outbox.ts), when SMTP_URL is set.
  channels.email.start();
  knowledgeBase.knowledgeScheduler.start();
  knowledgeBase.knowledgeQuestions?.start();
  knowledgeBase.knowledgeEmbeddings?.worker.start();
  scenarios.worker.start();
  scenarios.rechecks.start();
  logger.info({ port: address.port, database: database.kind }, 'botlink is ready');

  let stopping: Promise<void> | undefined;
  return {
    url,
    server,
    database,
    accounts: accounts.accounts,
    knowledge: knowledgeBase.knowledge,
    runtime,
    whatsapp,
    inbox: teamInbox.inbox,
    webhooks: { service: webhooks.webhooks, worker: webhookWorker },
    endIdleWebchats,
    privacy,
    scenarios: scenarios.worker,
    knowledgeRechecks: scenarios.rechecks,
    routes,
    stop() {
      stopping ??= (async () => {
        state = 'draining';
        // Emails not sent yet stay in the outbox for the next start (or another engine).
        await channels.email.stop();
        teamPresence.stopSweeps();
        // Runs being played stop between turns and wait for the next claim, before the conversations stop.
        await scenarios.stop();
        await drainService({
          options, drainMs, storage, accounts, clients, knowledge: knowledgeBase, conversations, server, handbackSweep: teamInbox.handbackSweep,
          whatsapp, phone, stopHousekeeping, webhookWorker, webhookListener,
        });
      })();
      return stopping;
    },
  };
}
