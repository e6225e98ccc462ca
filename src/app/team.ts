/**
 * The composition root's team's side (src/app/service.ts; docs/interfaces.md, "The team's side"), in two stages. First
 * the team's presence and the assignment of waiting conversations, with their sweeps: they need only the conversations,
 * and the routes without a channel (PUT /v1/team) set presence. Then, once the channels exist, the inbox (take-over,
 * hand-back, close, agents' messages, which WhatsApp's worker sends), the team's tools, their routes, and the sweep
 * that hands overdue waiting conversations back.
 */
import type { OpenedDatabase } from '../../db/database.ts';
import { knowledgeInsertRepository } from '../../db/repositories/knowledge-insert.repository.ts';
import { savedRepliesRepository } from '../../db/repositories/saved-replies.repository.ts';
import { sessionNotesRepository } from '../../db/repositories/session-notes.repository.ts';
import type { RouteDefinition } from '../http/route.ts';
import { inboxRoutes } from '../http/routes/inbox.ts';
import { presenceRoutes } from '../http/routes/presence.ts';
import { teamToolRoutes } from '../http/routes/team-tools.ts';
import { createAssignment } from '../inbox/assignment.ts';
import { createInboxService, type VisitorHooks } from '../inbox/inbox-service.ts';
import { AGENT_MESSAGE_RATE_LIMIT, HANDBACK_SWEEP_MS, PRESENCE_SWEEP_MS, PRESENCE_TOUCH_MS } from '../inbox/limits.ts';
import { createNotes } from '../inbox/notes.ts';
import { createPresence } from '../inbox/presence.ts';
import { createSavedReplies } from '../inbox/saved-replies.ts';
import { createRateLimiter } from '../rate-limiter.ts';
import { detectLanguage } from '../text/detect-language.ts';
import type { Accounts } from './accounts.ts';
import type { Conversations } from './conversations.ts';
import type { KnowledgeBase } from './knowledge.ts';
import type { ServiceOptions } from './options.ts';

export interface PresenceInput {
  options: Pick<ServiceOptions, 'config' | 'logger' | 'inbox'>;
  conversations: Pick<Conversations, 'presenceRepo' | 'sessions' | 'inboxEvents' | 'live'>;
}

export type TeamPresence = ReturnType<typeof startPresenceAndAssignment>;

/** Presence per person and the assignment of waiting conversations (docs/architecture.md, "Presence and assignment"). */
export function startPresenceAndAssignment(input: PresenceInput) {
  const { options } = input;
  const { logger } = options;
  const { presenceRepo, sessions, inboxEvents, live } = input.conversations;
  const { presenceIdleMinutes: idleMinutes, assignMaxPerAgent } = options.config.team;
  const assignment = createAssignment({ presence: presenceRepo, sessions, inbox: inboxEvents, idleMinutes, maxPerAgent: assignMaxPerAgent, logger });
  const presence = createPresence({ presence: presenceRepo, live, assignment, idleMinutes, logger });
  // A conversation this engine puts in the waiting list is assigned at once (the sweep catches any other).
  inboxEvents.observe((change) => {
    if (change.reason === 'handled_by' && change.handledBy === 'waiting') assignment.soon(change.workspaceId);
  });
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
  return { presence, assignment, idleMinutes, stopSweeps };
}

export interface InboxInput {
  options: Pick<ServiceOptions, 'config' | 'logger' | 'inbox' | 'rateLimits'>;
  database: OpenedDatabase;
  accounts: Pick<Accounts, 'streams'>;
  knowledge: KnowledgeBase['knowledge'];
  conversations: Pick<Conversations, 'sessions' | 'runtime' | 'inboxEvents' | 'live'>;
  team: Pick<TeamPresence, 'presence' | 'assignment' | 'idleMinutes'>;
  /** Agents' WhatsApp messages are queued rows; this wakes the WhatsApp worker to send them (src/app/channels.ts). */
  sendQueuedWhatsapp: () => void;
  /** The visitor's side (src/channels/webchat/visitor-side.ts): the satisfaction question on close, replies by email. */
  visitor: VisitorHooks;
}

export type TeamInbox = ReturnType<typeof startInbox>;

export function startInbox(input: InboxInput) {
  const { options, database, knowledge, sendQueuedWhatsapp, visitor } = input;
  const { logger } = options;
  const { streams } = input.accounts;
  const { sessions, runtime, inboxEvents, live } = input.conversations;
  const { presence, assignment, idleMinutes } = input.team;
  const inbox = createInboxService({
    db: database.db,
    sessions,
    runtime,
    inbox: inboxEvents,
    wakeWhatsapp: sendQueuedWhatsapp,
    messageLimiter: createRateLimiter(AGENT_MESSAGE_RATE_LIMIT, options.rateLimits?.agentMessages),
    logger,
    firstReplyTargetMinutes: options.config.team.firstReplyTargetMinutes,
    visitor,
  });
  // The team's tools: saved replies, private notes with @mentions, "Insert from knowledge" (docs/interfaces.md).
  const notes = createNotes({ repo: sessionNotesRepository(database.db), sessions, runtime, live });
  const insertable = knowledgeInsertRepository(database.db);
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
          const found = await knowledge.search(workspaceId, words, lang, { limit });
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
  return { inbox, routes, handbackSweep };
}
