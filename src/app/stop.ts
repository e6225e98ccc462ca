/**
 * The composition root's stop order (src/app/service.ts; docs/operations.md): no new work, then what is in flight finishes
 * before what it uses goes away. Conversations finish their turn and are written before the connections they use
 * close; webhook attempts in flight finish (or are handed back) before the outbound client closes; the database and
 * DATA_DIR's lock last.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { PhoneChannel } from '../channels/phone/phone-channel.ts';
import type { WhatsappChannel } from '../channels/whatsapp/whatsapp-channel.ts';
import type { DeliveryWorker } from '../webhooks/delivery-worker.ts';
import type { OutboxListener } from '../webhooks/outbox-listener.ts';
import type { Accounts } from './accounts.ts';
import type { OutboundClients } from './clients.ts';
import type { Conversations } from './conversations.ts';
import type { KnowledgeBase } from './knowledge.ts';
import type { ServiceOptions } from './options.ts';
import type { ServiceStorage } from './storage.ts';

export interface StoppingParts {
  /** `database`: a database handed in (tests) is left open for its owner. */
  options: Pick<ServiceOptions, 'logger' | 'database'>;
  drainMs: number;
  storage: ServiceStorage;
  accounts: Pick<Accounts, 'streams'>;
  clients: Pick<OutboundClients, 'health' | 'ai' | 'http'>;
  knowledge: Pick<KnowledgeBase, 'knowledgeScheduler' | 'knowledgeQuestions' | 'knowledgeEmbeddings'>;
  conversations: Pick<Conversations, 'sweep' | 'runtime' | 'admission' | 'live'>;
  server: Server;
  handbackSweep: NodeJS.Timeout;
  whatsapp: Pick<WhatsappChannel, 'stop'>;
  phone: Pick<PhoneChannel, 'stop'>;
  stopHousekeeping: () => void;
  webhookWorker: Pick<DeliveryWorker, 'stop'>;
  webhookListener: OutboxListener | undefined;
}

export async function drainService(parts: StoppingParts): Promise<void> {
  const { options, drainMs, server, handbackSweep, whatsapp, phone, stopHousekeeping, webhookWorker, webhookListener } = parts;
  const { logger } = options;
  const { database, releaseLock } = parts.storage;
  const { streams } = parts.accounts;
  const { health, ai, http } = parts.clients;
  const { knowledgeScheduler, knowledgeQuestions, knowledgeEmbeddings } = parts.knowledge;
  const { sweep, runtime, admission, live } = parts.conversations;
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
  stopHousekeeping();
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
  // A website's sync in flight is aborted and given back (still due) before the outbound client closes.
  await knowledgeScheduler.stop();
  // The AI's questions: requests in flight aborted, the claim given back (the passages wait for the next run).
  await knowledgeQuestions?.stop();
  // The embeddings: the batch in flight aborted, the claim given back; the question's client closed.
  await knowledgeEmbeddings?.stop();
  await http.close();
  if (!options.database) await database.close();
  releaseLock();
  logger.info('stopped');
}
