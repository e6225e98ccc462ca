/**
 * The visitor's side of a conversation (docs/webchat.md, "Typing, satisfaction and email"):
 * - Typing, both ways. The visitor's signs (POST /v1/webchat/conversations/{id}/typing) go to the agent's view of the
 *   conversation on the session's live stream; the agent's (POST /v1/sessions/{id}/typing) are answered by the
 *   widget's long poll as `typing: "agent"` and wake it, on every engine through the live bus (topic `visitor`, keyed
 *   by workspace, as the polls' own watch). Both are stamped in webchat_visitor_state at most every
 *   TYPING_THROTTLE_MS, and last TYPING_MS after the latest sign (or until the agent's message).
 * - Presence: the widget's polls stamp `seen_at` (at most every SEEN_THROTTLE_MS); a visitor with no poll for
 *   VISITOR_GONE_MINUTES is gone, and an agent's reply to them is also emailed when they left an email.
 * - Satisfaction: an agent's close puts the one question (the widget shows it from its poll; on WhatsApp reply
 *   buttons, src/channels/whatsapp/satisfaction.ts); the answer is kept once.
 */
import type { Db } from '../../../db/database.ts';
import { visitorRepository } from '../../../db/repositories/visitor.repository.ts';
import { phrase } from '../../ai/phrases.ts';
import type { EmailOutbox } from '../../email/outbox.ts';
import { AppError } from '../../errors.ts';
import type { LiveBus } from '../../events/live-bus.ts';
import type { Logger } from '../../log.ts';
import type { SessionRuntime } from '../../sessions/session-runtime.ts';
import { MAX_SATISFACTION_COMMENT_CHARS, SEEN_THROTTLE_MS, TYPING_MS, TYPING_THROTTLE_MS } from './limits.ts';

export interface VisitorSideDeps {
  db: Db;
  /** Wakes the widget's polls on every engine; absent: this engine's polls only. */
  live?: Pick<LiveBus, 'publish' | 'subscribe'> | undefined;
  runtime: Pick<SessionRuntime, 'notify'>;
  /** The email outbox (src/email/outbox.ts); absent or not configured: nothing is emailed. */
  email?: Pick<EmailOutbox, 'enqueue' | 'configured'> | undefined;
  /** WhatsApp's question with reply buttons (src/channels/whatsapp/satisfaction.ts); absent: none is put there. */
  whatsapp?: { ask(row: ConversationRef): Promise<boolean> } | undefined;
  /** VISITOR_GONE_MINUTES. */
  goneMinutes: number;
  logger: Logger;
  now?: () => number;
}

/** The conversation as the inbox holds it (a session row). */
export interface ConversationRef {
  id: string;
  workspace_id: string;
  channel: 'phone' | 'whatsapp' | 'webchat';
  external_id: string;
  language?: string | null;
}

/** What the widget's poll says besides messages. */
export interface PollExtras {
  typing: 'agent' | null;
  /** When the agent's typing lapses (ms since epoch), so that the poll answers then. */
  typingUntil: number | null;
  /** `ask`: an agent closed the conversation and the question is unanswered; `answered`; null: none was put. */
  survey: 'ask' | 'answered' | null;
}

export function createVisitorSide(deps: VisitorSideDeps) {
  const repo = visitorRepository(deps.db);
  const now = deps.now ?? Date.now;
  const log = deps.logger.child({ component: 'visitor-side' });
  const local = new Map<string, Set<(sessionId: string) => void>>();

  function wake(workspaceId: string, sessionId: string): void {
    if (deps.live) return deps.live.publish('visitor', workspaceId, { sessionId });
    for (const listener of local.get(workspaceId) ?? []) listener(sessionId);
  }

  return {
    /** Whether SMTP is set: replies to visitors who left are emailed (GET /v1/inbox/settings shows it). */
    get emailConfigured(): boolean {
      return deps.email?.configured ?? false;
    },

    /** The agent-typing signs of a workspace's conversations, by session id (the long polls' wake-ups). */
    subscribe(workspaceId: string, listener: (sessionId: string) => void): () => void {
      if (deps.live) return deps.live.subscribe('visitor', workspaceId, (event) => listener((event as { sessionId: string }).sessionId));
      let set = local.get(workspaceId);
      if (!set) local.set(workspaceId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) local.delete(workspaceId);
      };
    },

    /** The widget polled or wrote: the visitor is here (written at most every SEEN_THROTTLE_MS). */
    async seen(workspaceId: string, conversationId: string): Promise<void> {
      await repo.stamp(workspaceId, conversationId, 'seen_at', new Date(now()), SEEN_THROTTLE_MS);
    },

    /** POST /v1/webchat/conversations/{id}/typing: shown to the team on the session's live stream. */
    async visitorTyping(workspaceId: string, conversationId: string, sessionId: string | null): Promise<void> {
      const at = now();
      await repo.stamp(workspaceId, conversationId, 'seen_at', new Date(at), SEEN_THROTTLE_MS);
      if (!(await repo.stamp(workspaceId, conversationId, 'visitor_typing_at', new Date(at), TYPING_THROTTLE_MS))) return;
      if (sessionId) deps.runtime.notify({ type: 'typing', sessionId, from: 'visitor', until: new Date(at + TYPING_MS).toISOString() });
    },

    /** The visitor's message was stored: their typing ended, so a sign right after it is shown (not throttled). */
    async visitorWrote(conversationId: string): Promise<void> {
      await repo.clearVisitorTyping(conversationId);
    },

    /** POST /v1/sessions/{id}/typing: the widget's poll answers `typing: "agent"` (web chat; other channels show none). */
    async agentTyping(row: ConversationRef): Promise<void> {
      if (row.channel !== 'webchat') return;
      if (await repo.stamp(row.workspace_id, row.external_id, 'agent_typing_at', new Date(now()), TYPING_THROTTLE_MS)) wake(row.workspace_id, row.id);
    },

    /** The poll's typing and survey. */
    async pollExtras(conversationId: string, sessionId: string | null): Promise<PollExtras> {
      // One statement: a poll reads this on every wake (test/channels/webchat/webchat-long-polls.test.ts counts them).
      const state = await repo.pollState(conversationId, sessionId);
      const at = now();
      const since = state.agent_typing_at?.getTime() ?? null;
      const ended = state.last_agent_message_at !== null && since !== null && state.last_agent_message_at.getTime() >= since;
      const active = since !== null && !ended && since + TYPING_MS > at;
      return { typing: active ? 'agent' : null, typingUntil: active ? since + TYPING_MS : null, survey: sessionId === null ? null : state.survey };
    },

    /**
     * The answer to the satisfaction question, once per conversation: 409 when it was answered, 409 too when no
     * question was put (no agent closed it), 422 out of range or a comment too long.
     */
    async answer(sessionId: string, input: { score: number; comment?: string | undefined }): Promise<{ score: number; comment: string | null; at: string }> {
      if (!Number.isInteger(input.score) || input.score < 1 || input.score > 5) {
        throw new AppError('unprocessable', 'score must be a whole number from 1 to 5.', [{ field: 'score', message: 'from 1 to 5' }]);
      }
      const comment = input.comment?.trim() || null;
      if (comment !== null && Array.from(comment).length > MAX_SATISFACTION_COMMENT_CHARS) {
        throw new AppError('unprocessable', `comment is longer than ${MAX_SATISFACTION_COMMENT_CHARS} characters.`, [{ field: 'comment', message: `at most ${MAX_SATISFACTION_COMMENT_CHARS} characters` }]);
      }
      const at = new Date(now());
      const outcome = await repo.answer(sessionId, input.score, comment, at);
      if (outcome === 'already') throw new AppError('conflict', 'This conversation\'s question was already answered.');
      if (outcome === 'not_asked') throw new AppError('conflict', 'No question was asked in this conversation: it is asked after a colleague closed it.');
      log.debug({ sessionId, score: input.score }, 'satisfaction answered');
      return { score: input.score, comment, at: at.toISOString() };
    },

    /**
     * An agent closed the conversation: the question is put (web chat: the widget's poll shows it; WhatsApp: a message
     * with reply buttons, inside the 24-hour window only).
     */
    async closed(row: ConversationRef): Promise<void> {
      if (row.channel === 'phone') return;
      if (row.channel === 'whatsapp') {
        await deps.whatsapp?.ask(row);
        return;
      }
      await repo.ask({ sessionId: row.id, workspaceId: row.workspace_id, channel: row.channel, at: new Date(now()) });
      wake(row.workspace_id, row.id);
    },

    /**
     * An agent's message was stored: their typing ends, and a web chat visitor who is gone and left an email gets it by
     * email too. True when an email was queued.
     */
    async agentReplied(row: ConversationRef, text: string, agentName: string | null): Promise<boolean> {
      if (row.channel !== 'webchat') return false;
      await repo.clearAgentTyping(row.external_id);
      if (!deps.email?.configured) return false;
      const goneBefore = new Date(now() - deps.goneMinutes * 60_000);
      const visitor = await repo.goneVisitor(row.workspace_id, row.external_id, goneBefore);
      if (!visitor) return false;
      const email = visitorReplyEmail({ text, agentName, shopName: visitor.shop_name, pageUrl: visitor.page_url, language: row.language ?? visitor.language ?? 'en' });
      const queued = await deps.email.enqueue({ workspace_id: row.workspace_id, kind: 'visitor_reply', session_id: row.id, to_address: visitor.email, ...email });
      if (queued) log.info({ sessionId: row.id, workspaceId: row.workspace_id }, 'a reply to a visitor who left is emailed');
      return queued;
    },
  };
}

export type VisitorSide = ReturnType<typeof createVisitorSide>;

/** Text for HTML: the five characters that matter. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The email of an agent's reply (docs/webchat.md, "Replies by email"): the reply, who wrote it and the shop's name, and
 * a link to the page the chat was on (the widget there shows the conversation again), plain text and minimal HTML.
 */
export function visitorReplyEmail(input: { text: string; agentName: string | null; shopName: string; pageUrl: string | null; language: string }): {
  subject: string;
  text_body: string;
  html_body: string;
} {
  const from = input.agentName ? `${input.agentName}, ${input.shopName}` : input.shopName;
  const subject = `${input.shopName}: ${phrase('email_reply_subject', input.language)}`;
  const intro = phrase('email_reply_intro', input.language).replace('{from}', from);
  const link = input.pageUrl ? phrase('email_reply_link', input.language) : null;
  const text = [intro, '', input.text, '', ...(link && input.pageUrl ? [`${link} ${input.pageUrl}`] : [])].join('\n');
  const html = [
    `<p>${escapeHtml(intro)}</p>`,
    `<blockquote style="white-space:pre-wrap">${escapeHtml(input.text)}</blockquote>`,
    ...(link && input.pageUrl ? [`<p>${escapeHtml(link)} <a href="${escapeHtml(input.pageUrl)}">${escapeHtml(input.pageUrl)}</a></p>`] : []),
  ].join('\n');
  return { subject, text_body: text, html_body: html };
}
