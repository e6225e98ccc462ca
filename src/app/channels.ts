/**
 * The composition root's channels (src/app/service.ts): the website chat with its widget gate, WhatsApp (webhooks stored
 * first, processed by a worker that starts after listen), the email outbox for visitors who left, and the phone's
 * WebSocket on the HTTP server.
 */
import type { Server } from 'node:http';
import type { OpenedDatabase } from '../../db/database.ts';
import { emailOutboxRepository } from '../../db/repositories/email-outbox.repository.ts';
import { visitorRepository } from '../../db/repositories/visitor.repository.ts';
import { whatsappRepository } from '../../db/repositories/whatsapp.repository.ts';
import { createPhoneChannel, type PhoneChannel } from '../channels/phone/phone-channel.ts';
import { createPhoneMetrics } from '../channels/phone/phone-metrics.ts';
import { MAX_RATE_BUCKETS, WEBCHAT_RATE_BURST, WEBCHAT_RATE_WINDOW_MS } from '../channels/webchat/limits.ts';
import { createVisitorSide } from '../channels/webchat/visitor-side.ts';
import { createWebchatService } from '../channels/webchat/webchat-service.ts';
import { createWidgetGate, WEBCHAT_PATH } from '../channels/webchat/widget-gate.ts';
import { createSatisfactionQuestion, createSatisfactionTaps } from '../channels/whatsapp/satisfaction.ts';
import { createWhatsappChannel } from '../channels/whatsapp/whatsapp-channel.ts';
import { createEmailOutbox } from '../email/outbox.ts';
import { visitorSideRoutes } from '../http/routes/visitor-side.ts';
import { webchatRoutes } from '../http/routes/webchat.ts';
import { whatsappRoutes } from '../http/routes/whatsapp.ts';
import { createCustomerContext } from '../inbox/customer-context.ts';
import { createDeliveryStatus, type DeliveryChange } from '../inbox/delivery-status.ts';
import type { Metrics } from '../metrics.ts';
import { createRateLimiter } from '../rate-limiter.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { Accounts } from './accounts.ts';
import type { OutboundClients } from './clients.ts';
import type { Conversations } from './conversations.ts';
import type { ServiceOptions } from './options.ts';

export interface ChannelsInput {
  options: Pick<ServiceOptions, 'config' | 'logger' | 'email' | 'webchat' | 'whatsapp'>;
  database: OpenedDatabase;
  secrets: SecretBox;
  metrics: Metrics;
  accounts: Pick<Accounts, 'mailer' | 'apiKeys' | 'accounts'>;
  conversations: Pick<Conversations, 'sessions' | 'teamStatus' | 'live' | 'inboxEvents' | 'runtime' | 'runtimeCountingTurns' | 'admission'>;
}

export type Channels = ReturnType<typeof createChannels>;

export function createChannels(input: ChannelsInput) {
  const { options, database, secrets, metrics } = input;
  const { config, logger } = options;
  const { mailer, apiKeys, accounts } = input.accounts;
  const { sessions, teamStatus, live, inboxEvents, runtime, runtimeCountingTurns, admission } = input.conversations;
  // Email through SMTP_URL (src/email): stored first, sent with retries; replies to web chat visitors who left.
  const email = createEmailOutbox({ repository: emailOutboxRepository(database.db), mailer, logger, ...options.email });

  // WhatsApp (docs/interfaces.md: Channels → WhatsApp): webhook stored first, processed by the worker started after listen
  // (src/app/workers.ts). What the worker calls back is built before it: the taps on the satisfaction question's
  // buttons, and the agents' messages' delivery status for the team's side.
  const deliveryChanged = createDeliveryStatus({ db: database.db, runtime });
  // The worker's word that an agent's message may have a new delivery status, shown live on the team's side; not
  // awaited, so showing it never holds up the worker's pass.
  const showDeliveryStatus = (change: DeliveryChange) => {
    void deliveryChanged(change).catch((err: unknown) => logger.warn({ err }, 'a delivery status could not be shown live'));
  };
  const whatsapp = createWhatsappChannel({
    config: config.whatsapp,
    publicUrl: config.publicUrl,
    repository: whatsappRepository(database.db),
    secrets,
    // Customers' messages go to the runtime that counts turns in flight (src/admission/count-turns.ts).
    runtime: runtimeCountingTurns,
    serving: (workspaceId) => accounts.isServing(workspaceId),
    satisfaction: createSatisfactionTaps({ repository: whatsappRepository(database.db), answers: visitorRepository(database.db), logger }),
    onDelivery: showDeliveryStatus,
    logger,
    registry: metrics.registry,
    ...options.whatsapp,
    worker: { leaseMs: config.leaseMs, ...options.whatsapp?.worker },
  });
  // What we queue for a WhatsApp customer outside a turn (an agent's message, the satisfaction question) is an outgoing
  // row; waking the worker's send pass sends it now rather than at the worker's next poll.
  const sendQueuedWhatsapp = () => whatsapp.worker.wake('sends');
  // WhatsApp's satisfaction question after a close, as reply buttons (src/channels/whatsapp/satisfaction.ts).
  const whatsappSatisfaction = createSatisfactionQuestion({
    sessions,
    answers: visitorRepository(database.db),
    runtime,
    wake: sendQueuedWhatsapp,
    logger,
  });

  // Typing both ways, the visitor's presence, the satisfaction question (src/channels/webchat/visitor-side.ts).
  const visitorSide = createVisitorSide({
    db: database.db,
    live,
    runtime,
    email,
    whatsapp: whatsappSatisfaction,
    goneMinutes: config.visitorGoneMinutes,
    logger,
  });
  // Website chat (protocol §1.3, §6): knowledge base only, events into the outbox, the widget gate below /v1/webchat/.
  const webchat = createWebchatService({
    visitorSide,
    db: database.db,
    runtime: runtimeCountingTurns,
    teamAvailable: teamStatus.available,
    teamOpensAt: teamStatus.opensAt,
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
  const widget = { path: WEBCHAT_PATH, middleware: widgetGate.middleware, workspaceOf: widgetGate.workspaceOf };
  const routes = [
    // The visitor's browser time zone, for the customer panel beside the conversation (src/inbox/customer-context.ts).
    ...webchatRoutes(webchat, createCustomerContext({ db: database.db, sessions })),
    ...visitorSideRoutes({ webchat, side: visitorSide, sessions }),
    ...whatsappRoutes(whatsapp),
  ];
  return { widget, whatsapp, sendQueuedWhatsapp, routes, visitorSide, email, webchat };
}

export interface PhoneInput {
  options: Pick<ServiceOptions, 'config' | 'logger' | 'phone'>;
  metrics: Metrics;
  /** A call's tools manifest is fetched while it rings. */
  clients: Pick<OutboundClients, 'integration' | 'tools'>;
  conversations: Pick<Conversations, 'runtimeCountingTurns' | 'admission' | 'phoneRepo'>;
  server: Server;
}

/** Phone: GET /v1/phone/ws upgrades on this server (ws in noServer mode). */
export function attachPhone(input: PhoneInput): PhoneChannel {
  const { options, metrics, server } = input;
  const { config, logger } = options;
  const { integration, tools } = input.clients;
  const { runtimeCountingTurns, admission, phoneRepo } = input.conversations;
  const phone = createPhoneChannel({
    // Callers' words go to the runtime that counts turns in flight (src/admission/count-turns.ts).
    runtime: runtimeCountingTurns,
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
  return phone;
}
