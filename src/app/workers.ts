/**
 * The composition root's background work (src/service.ts): outgoing webhooks (events → outbox → one delivery actor
 * per endpoint), the retention purge and the roll-ups' compaction, built before listen; the WhatsApp worker, the endpoints' health and the
 * delivery worker, started after it.
 */
import type { OpenedDatabase } from '../../db/database.ts';
import { analyticsRepository } from '../../db/repositories/analytics.repository.ts';
import { webhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import { createCompaction } from '../analytics/compaction.ts';
import type { WhatsappChannel } from '../channels/whatsapp/whatsapp-channel.ts';
import type { RouteDefinition } from '../http/route.ts';
import { webhookRoutes } from '../http/routes/webhooks.ts';
import { createPrivacy } from './privacy.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { ServiceBase } from './knowledge.ts';
import type { Conversations } from './conversations.ts';
import type { ServiceOptions } from './options.ts';
import { createDeliveryWorker, type DeliveryWorker } from '../webhooks/delivery-worker.ts';
import { listenForDeliveries, type OutboxListener } from '../webhooks/outbox-listener.ts';
import { createWebhookService } from '../webhooks/webhook-service.ts';

export type Outgoing = ReturnType<typeof createOutgoing>;

export function createOutgoing(options: ServiceOptions, database: OpenedDatabase, secrets: SecretBox, base: ServiceBase, conversations: Conversations) {
  const { config, logger } = options;
  const { http, metrics } = base;
  const { runtime, engine } = conversations;
  // Outgoing webhooks (protocol §6): events → outbox → one delivery actor per endpoint. The worker starts after
  // listen and stops on drain before the outbound client closes.
  const webhookRepository = webhooksRepository(database.db);
  const webhookWorker = createDeliveryWorker({ repository: webhookRepository, secrets, http, logger, metrics, leaseMs: config.leaseMs, ...options.webhooks });
  const webhooks = createWebhookService({ db: database.db, repository: webhookRepository, secrets, http, worker: webhookWorker });
  const routes: RouteDefinition[] = [...webhookRoutes(webhooks)];
  // Customers' data under control (docs/privacy.md): one engine at a time purges past the retention periods.
  const endConversation = (s: { workspaceId: string; channel: 'phone' | 'whatsapp' | 'webchat'; externalId: string }) => runtime.end(s.workspaceId, s.channel, s.externalId);
  const privacy = createPrivacy({ db: database.db, logger, registry: metrics.registry, engine, endConversation, ...options.retention });
  routes.push(...privacy.routes);
  const stopPurge = privacy.start();
  // The Overview's roll-ups: past hours' slots folded into one row each (docs/analytics.md, "How the figures are kept").
  const stopCompaction = createCompaction({ analytics: analyticsRepository(database.db), logger }).start();
  const stopHousekeeping = () => {
    stopPurge();
    stopCompaction();
  };
  return { webhooks, webhookWorker, privacy, stopHousekeeping, routes };
}

/** After listen: WhatsApp's worker, the endpoints' health, and the delivery worker with its LISTEN on PostgreSQL. */
export async function startWorkers(
  options: ServiceOptions,
  database: OpenedDatabase,
  work: { whatsapp: WhatsappChannel; health: ServiceBase['health']; webhookWorker: DeliveryWorker },
): Promise<OutboxListener | undefined> {
  const { config, logger } = options;
  const { whatsapp, health, webhookWorker } = work;
  let webhookListener: OutboxListener | undefined;
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
  return webhookListener;
}
