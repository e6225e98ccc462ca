/**
 * The WhatsApp channel (docs/interfaces.md: Channels → WhatsApp; docs/whatsapp.md), put together: the webhook's two
 * checks, durable ingest, the settings, the Graph client and the processing worker. The composition root builds it
 * once; the HTTP routes (src/http/routes/whatsapp.ts) call it.
 */
import type { Registry } from 'prom-client';
import type { WhatsappRepository } from '../../../db/repositories/whatsapp.repository.ts';
import type { Logger } from '../../log.ts';
import type { SecretBox } from '../../secrets/secret-box.ts';
import type { SessionRuntime } from '../../sessions/session-runtime.ts';
import { GraphClient } from './graph-client.ts';
import { createEventWriter } from './ingest.ts';
import { createWhatsappMetrics } from './metrics.ts';
import { createWhatsappSettings } from './settings.ts';
import { verifyHandshake, verifyWebhookSignature } from './signature.ts';
import { createWhatsappWorker, type WhatsappWorkerOptions } from './worker.ts';
import { cleanText } from '../../text/outside-text.ts';

export interface WhatsappChannelOptions {
  config: { appSecret: string | null; verifyToken: string | null; graphUrl: string };
  publicUrl: string;
  repository: WhatsappRepository;
  secrets: SecretBox;
  runtime: Pick<SessionRuntime, 'handleMessage'>;
  /** Whether a workspace answers its messages (not disabled by the operator); absent: every workspace does. */
  serving?: WhatsappWorkerOptions['serving'];
  /** A tap on the satisfaction question's reply buttons is its answer (src/channels/whatsapp/satisfaction.ts). */
  satisfaction?: WhatsappWorkerOptions['satisfaction'];
  logger: Logger;
  registry?: Registry;
  /** The delivery status of an agent's message may have changed (the team's side shows it live). */
  onDelivery?: WhatsappWorkerOptions['onDelivery'];
  /** false: webhooks are stored but not processed (benchmarks of the ingest alone); default true. */
  processing?: boolean;
  /** Worker settings (tests use short ones). */
  worker?: Pick<WhatsappWorkerOptions, 'owner' | 'leaseMs' | 'pollMs' | 'retryDelaysMs' | 'conversationIdleMs' | 'now' | 'random'>;
}

export type ReceiveResult = 'stored' | 'unauthorized' | 'not_configured';

export function createWhatsappChannel(options: WhatsappChannelOptions) {
  const { config, repository } = options;
  const metrics = options.registry ? createWhatsappMetrics(options.registry) : undefined;
  const settings = createWhatsappSettings({ repository, secrets: options.secrets, publicUrl: options.publicUrl });
  const graph = new GraphClient({ graphUrl: config.graphUrl });
  const worker = createWhatsappWorker({
    repository,
    settings,
    runtime: options.runtime,
    graph,
    ...(options.serving ? { serving: options.serving } : {}),
    ...(options.satisfaction ? { satisfaction: options.satisfaction } : {}),
    ...(options.onDelivery ? { onDelivery: options.onDelivery } : {}),
    logger: options.logger,
    ...(metrics ? { metrics } : {}),
    ...options.worker,
  });
  const writer = createEventWriter({ insert: (rows) => repository.insertEvents(rows), onStored: () => worker.wake() });

  return {
    settings,
    worker,

    /** The verify handshake: the challenge to echo, null to refuse (403), undefined when no verify token is set. */
    handshake(query: { mode?: unknown; token?: unknown; challenge?: unknown }): string | null | undefined {
      if (config.verifyToken === null) return undefined;
      return verifyHandshake(config.verifyToken, query);
    },

    /** A webhook POST: checked over the raw bytes, then committed before the caller answers 200. */
    async receive(raw: Buffer, signature: string | undefined): Promise<ReceiveResult> {
      if (config.appSecret === null) return 'not_configured';
      if (!verifyWebhookSignature(config.appSecret, raw, signature)) {
        metrics?.webhooks.inc({ result: 'unauthorized' });
        return 'unauthorized';
      }
      const stop = metrics?.ingestDuration.startTimer();
      try {
        // Meta writes JSON, which escapes U+0000; a raw 0x00 byte (signed, so Meta's) cannot go into a text column.
        // The outside-text rule keeps it storable: the event is kept (and read as invalid JSON), never refused.
        await writer.store(cleanText(raw.toString('utf8')));
      } catch (err) {
        metrics?.webhooks.inc({ result: 'error' });
        throw err;
      }
      stop?.();
      metrics?.webhooks.inc({ result: 'stored' });
      return 'stored';
    },

    /** Starts the worker, unless processing is paused or WhatsApp is off here (no app secret: no webhook is accepted). */
    start(): void {
      if (options.processing !== false && config.appSecret !== null) worker.start();
    },

    async stop(graceMs?: number): Promise<void> {
      await worker.stop(graceMs);
      await graph.close();
    },
  };
}

export type WhatsappChannel = ReturnType<typeof createWhatsappChannel>;
