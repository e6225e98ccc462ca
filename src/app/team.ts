/**
 * The composition root's team's side (src/service.ts; docs/interfaces.md, "The team's side"): the inbox (take-over,
 * hand-back, close, agents' messages), its routes, and the sweep that hands overdue waiting conversations back; the
 * team's presence and the assignment of waiting conversations, with their sweeps.
 */
import type { OpenedDatabase } from '../../db/database.ts';
import { createRateLimiter } from '../rate-limiter.ts';
import type { WhatsappChannel } from '../channels/whatsapp/whatsapp-channel.ts';
import type { RouteDefinition } from '../http/route.ts';
import { inboxRoutes } from '../http/routes/inbox.ts';
import { presenceRoutes } from '../http/routes/presence.ts';
import { createAssignment } from '../inbox/assignment.ts';
import { createPresence } from '../inbox/presence.ts';
import { PRESENCE_SWEEP_MS, PRESENCE_TOUCH_MS } from '../inbox/limits.ts';
import { teamToolRoutes } from '../http/routes/team-tools.ts';
import { savedRepliesRepository } from '../../db/repositories/saved-replies.repository.ts';
import { sessionNotesRepository } from '../../db/repositories/session-notes.repository.ts';
import { knowledgeInsertRepository } from '../../db/repositories/knowledge-insert.repository.ts';
import { createNotes } from '../inbox/notes.ts';
import { createSavedReplies } from '../inbox/saved-replies.ts';
import { detectLanguage } from '../text/detect-language.ts';
import { createInboxService, type VisitorHooks } from '../inbox/inbox-service.ts';
import { AGENT_MESSAGE_RATE_LIMIT, HANDBACK_SWEEP_MS } from '../inbox/limits.ts';
import type { ServiceBase } from './knowledge.ts';
import type { Conversations } from './conversations.ts';
import type { ServiceOptions } from './options.ts';

export type TeamSide = ReturnType<typeof startTeamSide>;

export function startTeamSide(
  options: ServiceOptions,
  database: OpenedDatabase,
  base: ServiceBase,
  conversations: Conversations,
  whatsapp: WhatsappChannel,
  /** The visitor's side (src/channels/webchat/visitor-side.ts): the satisfaction question on close, replies by email. */
  visitor?: VisitorHooks,
) {
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
    firstReplyTargetMinutes: options.config.team.firstReplyTargetMinutes,
    ...(visitor ? { visitor } : {}),
  });
  // The team's tools: saved replies, private notes with @mentions, "Insert from knowledge" (docs/interfaces.md).
  const notes = createNotes({ repo: sessionNotesRepository(database.db), sessions, runtime, live: conversations.live });
  const insertable = knowledgeInsertRepository(database.db);
  // Presence per person and the assignment of waiting conversations (docs/architecture.md, "Presence and assignment").
  const { presenceIdleMinutes: idleMinutes, assignMaxPerAgent } = options.config.team;
  const assignment = createAssignment({ presence: base.presenceRepo, sessions, inbox: inboxEvents, idleMinutes, maxPerAgent: assignMaxPerAgent, logger });
  const presence = createPresence({ presence: base.presenceRepo, live: conversations.live, assignment, idleMinutes, logger });
  // A conversation this engine puts in the waiting list is assigned at once (the sweep catches any other).
  inboxEvents.observe((change) => {
    if (change.reason === 'handled_by' && change.handledBy === 'waiting') assignment.soon(change.workspaceId);
  });
  const routes: RouteDefinition[] = [
    ...inboxRoutes({ inbox, events: inboxEvents, streams, mentions: notes.subscribeMentions, presence }),
    ...presenceRoutes({ presence, assignment, idleMinutes }),
    ...teamToolRoutes({
      savedReplies: createSavedReplies({ repo: savedRepliesRepository(database.db) }),
      notes,
      async searchKnowledge(workspaceId, words, limit, language) {
        // A few words tell their language badly ("warranty" alone): the conversation's language first, then the words',
        // then English, until one finds passages.
        for (const lang of new Set([language, detectLanguage(words), 'en'].filter((l): l is string => Boolean(l)))) {
          const found = await base.knowledge.search(workspaceId, words, lang, { limit });
          if (found.passages.length > 0) return found.passages.map((p) => ({ id: p.id, title: p.title, text: p.text, url: p.url }));
        }
        // The search ranks questions; a word or two of a title, written as the page writes it, finds the page too.
        return insertable.holding(workspaceId, words.split(/[^\p{L}\p{N}]+/u).filter(Boolean).slice(0, 5), limit);
      },
    }),
  ];
  // Waiting conversations nobody took go back to the bot after the workspace's handback_after_minutes.
  const handbackSweep = setInterval(() => {
    void inbox.handBackOverdue().catch((err: unknown) => logger.error({ err }, 'the hand-back sweep failed'));
  }, options.inbox?.handbackSweepMs ?? HANDBACK_SWEEP_MS);
  handbackSweep.unref();
  // The dashboards this engine holds open are seen a few times a minute; lapsed "available" becomes "away", and waiting
  // conversations nobody is assigned to (an engine stopped mid-way, a missed change) are assigned.
  const presenceTouch = setInterval(() => {
    void presence.touchOpen().catch((err: unknown) => logger.warn({ err }, 'marking open dashboards seen failed'));
  }, options.inbox?.presenceTouchMs ?? PRESENCE_TOUCH_MS);
  presenceTouch.unref();
  const presenceSweep = setInterval(() => {
    void presence
      .lapse()
      .then(() => assignment.sweep())
      .catch((err: unknown) => logger.error({ err }, 'the presence and assignment sweep failed'));
  }, options.inbox?.presenceSweepMs ?? PRESENCE_SWEEP_MS);
  presenceSweep.unref();
  const stopSweeps = () => {
    clearInterval(presenceTouch);
    clearInterval(presenceSweep);
  };
  return { inbox, routes, handbackSweep, presence, assignment, stopSweeps };
}
