/**
 * The composition root's channels (src/service.ts): the website chat with its widget gate, WhatsApp (webhooks stored
 * first, processed by a worker that starts after listen), and the phone's WebSocket on the HTTP server.
 */
import type { Server } from 'node:http';
import type { OpenedDatabase } from '../../db/database.ts';
import { whatsappRepository } from '../../db/repositories/whatsapp.repository.ts';
import { createRateLimiter } from '../rate-limiter.ts';
import { createPhoneChannel, type PhoneChannel } from '../channels/phone/phone-channel.ts';
import { createPhoneMetrics } from '../channels/phone/phone-metrics.ts';
import { MAX_RATE_BUCKETS, WEBCHAT_RATE_BURST, WEBCHAT_RATE_WINDOW_MS } from '../channels/webchat/limits.ts';
import { createWebchatService } from '../channels/webchat/webchat-service.ts';
import { createVisitorSide } from '../channels/webchat/visitor-side.ts';
import { emailOutboxRepository } from '../../db/repositories/email-outbox.repository.ts';
import { createEmailOutbox } from '../email/outbox.ts';
import { visitorSideRoutes } from '../http/routes/visitor-side.ts';
import { createWidgetGate, WEBCHAT_PATH } from '../channels/webchat/widget-gate.ts';
import { createWhatsappChannel } from '../channels/whatsapp/whatsapp-channel.ts';
import { createWhatsappSatisfaction } from '../channels/whatsapp/satisfaction.ts';
import { visitorRepository } from '../../db/repositories/visitor.repository.ts';
import type { RouteDefinition } from '../http/route.ts';
import { webchatRoutes } from '../http/routes/webchat.ts';
import { whatsappRoutes } from '../http/routes/whatsapp.ts';
import type { InboxService } from '../inbox/inbox-service.ts';
import { createCustomerContext } from '../inbox/customer-context.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { ServiceBase } from './knowledge.ts';
import type { Conversations } from './conversations.ts';
import type { ServiceOptions } from './options.ts';

export type Channels = ReturnType<typeof createChannels>;

export function createChannels(deps: {
  options: ServiceOptions;
  database: OpenedDatabase;
  secrets: SecretBox;
  base: ServiceBase;
  conversations: Conversations;
  /** The team's inbox, built after the channels (src/service-team.ts): WhatsApp's delivery changes go to it. */
  inbox: () => InboxService;
}) {
  const { options, database, secrets } = deps;
  const { config, logger } = options;
  const { sessions, metrics, apiKeys, accounts, teamAvailable } = deps.base;
  const { channelRuntime, inboxEvents, admission } = deps.conversations;
  const routes: RouteDefinition[] = [];
  // Email through SMTP_URL (src/email): stored first, sent with retries; replies to web chat visitors who left.
  const email = createEmailOutbox({ repository: emailOutboxRepository(database.db), mailer: deps.base.mailer, logger, ...options.email });
  // WhatsApp's satisfaction question after a close, as reply buttons, and the customer's tap (src/channels/whatsapp/satisfaction.ts).
  const whatsappSatisfaction = createWhatsappSatisfaction({
    sessions,
    repository: whatsappRepository(database.db),
    answers: visitorRepository(database.db),
    runtime: deps.conversations.runtime,
    // The channel is made below; a question is only asked on a close, long after.
    wake: () => whatsapp.worker.wake('sends'),
    logger,
  });
  // Typing both ways, the visitor's presence, the satisfaction question (src/channels/webchat/visitor-side.ts).
  const visitorSide = createVisitorSide({
    db: database.db,
    live: deps.conversations.live,
    runtime: deps.conversations.runtime,
    email,
    whatsapp: whatsappSatisfaction,
    goneMinutes: config.visitorGoneMinutes,
    logger,
  });
  // Website chat (protocol §1.3, §6): knowledge base only, events into the outbox, the widget gate below /v1/webchat/.
  const webchat = createWebchatService({
    visitorSide,
    db: database.db,
    runtime: channelRuntime,
    teamAvailable,
    teamOpensAt: deps.base.teamStatus.opensAt,
    sessions,
    inbox: inboxEvents,
    publicUrl: config.publicUrl,
    logger,
    metrics,
  });
  const widgetGate = createWidgetGate({
    apiKeys,
    access: (workspaceId) => webchat.access(workspaceId),
    limiter: createRateLimiter({ burst: WEBCHAT_RATE_BURST, windowMs: WEBCHAT_RATE_WINDOW_MS, maxBuckets: MAX_RATE_BUCKETS }, options.webchat?.rateLimit),
    admission,
    metrics,
  });
  // The visitor's browser time zone, for the customer panel beside the conversation (src/inbox/customer-context.ts).
  routes.push(...webchatRoutes(webchat, createCustomerContext({ db: database.db, sessions })));
  routes.push(...visitorSideRoutes({ webchat, side: visitorSide, sessions }));
  const widget = { path: WEBCHAT_PATH, middleware: widgetGate.middleware, workspaceOf: widgetGate.workspaceOf };

  // WhatsApp (docs/interfaces.md: Channels → WhatsApp): webhook stored first, processed by the worker started after listen
  // (src/service-workers.ts).
  const whatsapp = createWhatsappChannel({
    config: config.whatsapp,
    publicUrl: config.publicUrl,
    repository: whatsappRepository(database.db),
    secrets,
    runtime: channelRuntime,
    serving: (workspaceId) => accounts.isServing(workspaceId),
    satisfaction: whatsappSatisfaction,
    // The inbox is built after the channels; the worker starts after listen, so it is there by the first send.
    onDelivery: (change) => {
      void deps.inbox().deliveryChanged(change).catch((err: unknown) => logger.warn({ err }, 'a delivery status could not be shown live'));
    },
    logger,
    registry: metrics.registry,
    ...options.whatsapp,
    worker: { leaseMs: config.leaseMs, ...options.whatsapp?.worker },
  });
  routes.push(...whatsappRoutes(whatsapp));
  return { widget, whatsapp, routes, visitorSide, email, webchat };
}

/** Phone: GET /v1/phone/ws upgrades on this server (ws in noServer mode). */
export function createPhone(options: ServiceOptions, base: ServiceBase, conversations: Conversations, server: Server): PhoneChannel {
  const { config, logger } = options;
  const { integration, tools, metrics } = base;
  const { channelRuntime, admission } = conversations;
  const phone = createPhoneChannel({
    runtime: channelRuntime,
    admission,
    workspaceForNumber: (number) => base.phoneRepo.workspaceForNumber(number),
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
  return phone;
}
