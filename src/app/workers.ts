/**
 * The composition root's background work (src/app/service.ts): outgoing webhooks (events → outbox → one delivery actor
 * per endpoint) built before listen, the retention purge and the roll-ups' compaction started before it; the WhatsApp
 * worker, the endpoints' health and the delivery worker started after it.
 */
import type { OpenedDatabase } from '../../db/database.ts';
import { analyticsRepository } from '../../db/repositories/analytics.repository.ts';
import { webhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import { createCompaction } from '../analytics/compaction.ts';
import type { WhatsappChannel } from '../channels/whatsapp/whatsapp-channel.ts';
import { webhookRoutes } from '../http/routes/webhooks.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import { createDeliveryWorker, type DeliveryWorker } from '../webhooks/delivery-worker.ts';
import { listenForDeliveries, type OutboxListener } from '../webhooks/outbox-listener.ts';
import { createWebhookService } from '../webhooks/webhook-service.ts';
import type { OutboundClients } from './clients.ts';
import type { ServiceOptions } from './options.ts';
import type { Privacy } from './privacy.ts';

export interface WebhookDeliveryInput {
  options: Pick<ServiceOptions, 'config' | 'logger' | 'webhooks'>;
  database: OpenedDatabase;
  secrets: SecretBox;
  metrics: Metrics;
  clients: Pick<OutboundClients, 'http'>;
}

export type WebhookDelivery = ReturnType<typeof createWebhookDelivery>;

/**
 * Outgoing webhooks (protocol §6): events → outbox → one delivery actor per endpoint, their settings and log. The worker
 * starts after listen and stops on drain before the outbound client closes.
 */
export function createWebhookDelivery(input: WebhookDeliveryInput) {
  const { options, database, secrets, metrics } = input;
  const { config, logger } = options;
  const { http } = input.clients;
  const webhookRepository = webhooksRepository(database.db);
  const webhookWorker = createDeliveryWorker({ repository: webhookRepository, secrets, http, logger, metrics, leaseMs: config.leaseMs, ...options.webhooks });
  const webhooks = createWebhookService({ db: database.db, repository: webhookRepository, secrets, http, worker: webhookWorker });
  return { webhooks, webhookWorker, routes: webhookRoutes(webhooks) };
}

export interface HousekeepingInput {
  logger: Logger;
  database: OpenedDatabase;
  privacy: Pick<Privacy, 'start'>;
}

/**
 * Before listen: the retention purge (one engine at a time, docs/privacy.md) and the Overview's roll-ups folded, past
 * hours' slots into one row each (docs/analytics.md, "How the figures are kept"). The answer stops both.
 */
export function startHousekeeping(input: HousekeepingInput): () => void {
  const { logger, database, privacy } = input;
  const stopPurge = privacy.start();
  const stopCompaction = createCompaction({ analytics: analyticsRepository(database.db), logger }).start();
  return () => {
    stopPurge();
    stopCompaction();
  };
}

export interface WorkersInput {
  options: Pick<ServiceOptions, 'config' | 'logger'>;
  database: OpenedDatabase;
  whatsapp: Pick<WhatsappChannel, 'start'>;
  health: Pick<OutboundClients['health'], 'start'>;
  webhookWorker: Pick<DeliveryWorker, 'start' | 'wake'>;
}

/** After listen: WhatsApp's worker, the endpoints' health, and the delivery worker with its LISTEN on PostgreSQL. */
export async function startWorkers(input: WorkersInput): Promise<OutboxListener | undefined> {
  const { options, database, whatsapp, health, webhookWorker } = input;
  const { config, logger } = options;
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
