/**
 * The composition root: opens the database (migrated under a lock), builds every service with its dependencies,
 * and serves HTTP. `main.ts` and the tests both start the service through here, so tests run the real wiring.
 * The wiring runs in named stages, each in a file of its own beside this one: the database and secrets
 * (service-storage.ts), what the conversations stand on (service-base.ts), the conversations (service-conversations.ts),
 * the route groups without a channel (service-routes.ts), the channels (service-channels.ts), the team's side
 * (service-team.ts), outgoing webhooks, retention and the workers (service-workers.ts), the HTTP app (service-http.ts)
 * and the stop order (service-stop.ts).
 */
import type { Server } from 'node:http';
import type { OpenedDatabase } from '../../db/database.ts';
import type { AccountsService } from '../accounts/accounts-service.ts';
import type { WhatsappChannel } from '../channels/whatsapp/whatsapp-channel.ts';
import type { RouteDefinition } from '../http/route.ts';
import type { InboxService } from '../inbox/inbox-service.ts';
import type { KnowledgeService } from '../knowledge/knowledge-service.ts';
import type { Privacy } from './privacy.ts';
import { warnIfEngineCanChangeAuditLog } from '../privacy/audit-owner.ts';
import { createBase } from './knowledge.ts';
import { createChannels, createPhone } from './channels.ts';
import { startConversations } from './conversations.ts';
import { createHttpServer, listen } from './http.ts';
import { DEFAULT_DRAIN_MS, type ServiceOptions } from './options.ts';
import { coreRoutes, settingsRoutes, type ServiceState } from './routes.ts';
import { createScenarioSide } from './scenarios.ts';
import { drainService } from './stop.ts';
import { openSecrets, openStorage } from './storage.ts';
import { startTeamSide } from './team.ts';
import { createOutgoing, startWorkers } from './workers.ts';
import type { KnowledgeRechecks } from '../scenarios/knowledge-rechecks.ts';
import type { ScenarioWorker } from '../scenarios/scenario-worker.ts';
import type { SessionRuntime } from '../sessions/session-runtime.ts';
import type { DeliveryWorker } from '../webhooks/delivery-worker.ts';
import type { WebhookService } from '../webhooks/webhook-service.ts';

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
  const secrets = openSecrets(config, logger);
  const drainMs = options.drainMs ?? DEFAULT_DRAIN_MS;
  const base = createBase(options, database, secrets);
  const conversations = await startConversations(options, storage, base);
  const { runtime, endIdleWebchats } = conversations;

  const routes: RouteDefinition[] = [];
  routes.push(
    ...coreRoutes({
      options, database, base, conversations, routes, state: () => state, presence: () => team.presence, replayJudge: () => scenarios.replayJudge,
    }),
  );
  // WhatsApp's delivery changes go to the inbox, built just below; its worker starts after listen.
  const channels = createChannels({ options, database, secrets, base, conversations, inbox: () => team.inbox });
  routes.push(...channels.routes);
  const { whatsapp } = channels;
  const team = startTeamSide(options, database, base, conversations, whatsapp, channels.visitorSide);
  routes.push(...team.routes);
  routes.push(...settingsRoutes(options, database, base, conversations));
  // Test scenarios through the real engine (docs/scenarios.md); their worker starts after listen.
  const scenarios = createScenarioSide(options, database, base, conversations, channels);
  routes.push(...scenarios.routes);
  const outgoing = createOutgoing(options, database, secrets, base, conversations);
  routes.push(...outgoing.routes);
  const { privacy, webhooks, webhookWorker } = outgoing;

  const server = createHttpServer({ options, routes, base, widget: channels.widget, audit: privacy.audit });
  const phone = createPhone(options, base, conversations, server);
  const { address, url } = await listen(server, config);
  state = 'ready';
  const webhookListener = await startWorkers(options, database, { whatsapp, health: base.health, webhookWorker });
  // Emails waiting in the outbox (src/email/outbox.ts), when SMTP_URL is set.
  channels.email.start();
  base.knowledgeScheduler.start();
  base.knowledgeQuestions?.start();
  base.knowledgeEmbeddings?.worker.start();
  scenarios.worker.start();
  scenarios.rechecks.start();
  logger.info({ port: address.port, database: database.kind }, 'botlink is ready');

  let stopping: Promise<void> | undefined;
  return {
    url,
    server,
    database,
    accounts: base.accounts,
    knowledge: base.knowledge,
    runtime,
    whatsapp,
    inbox: team.inbox,
    webhooks: { service: webhooks, worker: webhookWorker },
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
        const { handbackSweep } = team;
        team.stopSweeps();
        // Runs being played stop between turns and wait for the next claim, before the conversations stop.
        await scenarios.stop();
        await drainService({ options, drainMs, storage, base, conversations, server, handbackSweep, whatsapp, phone, outgoing, webhookListener });
      })();
      return stopping;
    },
  };
}
