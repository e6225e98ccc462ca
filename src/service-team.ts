/**
 * The composition root's team's side (src/service.ts; docs/interfaces.md, "The team's side"): the inbox (take-over,
 * hand-back, close, agents' messages), its routes, and the sweep that hands overdue waiting conversations back.
 */
import type { OpenedDatabase } from '../db/database.ts';
import { createRateLimiter } from './rate-limiter.ts';
import type { WhatsappChannel } from './channels/whatsapp/whatsapp-channel.ts';
import type { RouteDefinition } from './http/route.ts';
import { inboxRoutes } from './http/routes/inbox.ts';
import { createInboxService } from './inbox/inbox-service.ts';
import { AGENT_MESSAGE_RATE_LIMIT, HANDBACK_SWEEP_MS } from './inbox/limits.ts';
import type { ServiceBase } from './service-base.ts';
import type { Conversations } from './service-conversations.ts';
import type { ServiceOptions } from './service-options.ts';

export type TeamSide = ReturnType<typeof startTeamSide>;

export function startTeamSide(options: ServiceOptions, database: OpenedDatabase, base: ServiceBase, conversations: Conversations, whatsapp: WhatsappChannel) {
  const { logger } = options;
  const { sessions, streams } = base;
  const { runtime, inboxEvents } = conversations;
  // Agents' WhatsApp messages go out through the WhatsApp worker (src/service-channels.ts).
  const inbox = createInboxService({
    db: database.db,
    sessions,
    runtime,
    inbox: inboxEvents,
    wakeWhatsapp: () => whatsapp.worker.wake('sends'),
    messageLimiter: createRateLimiter(AGENT_MESSAGE_RATE_LIMIT, options.rateLimits?.agentMessages),
    logger,
  });
  const routes: RouteDefinition[] = [...inboxRoutes({ inbox, events: inboxEvents, streams })];
  // Waiting conversations nobody took go back to the bot after the workspace's handback_after_minutes.
  const handbackSweep = setInterval(() => {
    void inbox.handBackOverdue().catch((err: unknown) => logger.error({ err }, 'the hand-back sweep failed'));
  }, options.inbox?.handbackSweepMs ?? HANDBACK_SWEEP_MS);
  handbackSweep.unref();
  return { inbox, routes, handbackSweep };
}
