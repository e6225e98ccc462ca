/**
 * The team's side of a conversation (docs/architecture.md, "Who handles a conversation"; docs/interfaces.md, "The team's
 * side"): the inbox views, take-over, hand-back and close (applied to the session's statechart by the runtime), an
 * agent's message to the customer (WhatsApp through the stored-then-sent Graph pipeline, web chat stored for the
 * widget's long poll), a failed WhatsApp message sent again, and the sweep that hands waiting conversations back to
 * the bot after the workspace's handback_after_minutes.
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../db/repositories/accounts.repository.ts';
import { inboxRepository, type InboxView } from '../../db/repositories/inbox.repository.ts';
import type { MessageRecord, SessionsRepository } from '../../db/repositories/sessions.repository.ts';
import type { Db } from '../../db/database.ts';
import type { AgentRef } from '../../machines/session-types.ts';
import type { RateLimiter } from '../rate-limiter.ts';
import { displayName } from '../accounts/display-name.ts';
import { conversationLabel } from '../text/conversation-label.ts';
import { DEFAULT_FIRST_REPLY_TARGET_MINUTES } from '../config.ts';
import { assignedToView } from './assignment.ts';
import { phrase, type PhraseKey } from '../ai/phrases.ts';
import { AppError, notFound } from '../errors.ts';
import type { Logger } from '../log.ts';
import { agentView, type AttendantEvent, type AttendantOutcome, type ConversationMessage, type SessionRuntime } from '../sessions/session-runtime.ts';
import type { InboxEvents } from '../sessions/inbox-events.ts';
import { MAX_AGENT_WEBCHAT_CHARS, MAX_AGENT_WHATSAPP_CHARS, MAX_INBOX_CONVERSATIONS, WHATSAPP_WINDOW_MS } from './limits.ts';

export interface InboxServiceDeps {
  db: Db;
  sessions: SessionsRepository;
  runtime: Pick<SessionRuntime, 'control' | 'notify'>;
  inbox: InboxEvents;
  /** Wakes the WhatsApp worker, which sends what was queued (absent: its poll finds it). */
  wakeWhatsapp?: () => void;
  /** Agents' messages and retries, keyed per agent and conversation (AGENT_MESSAGE_RATE_LIMIT). */
  messageLimiter: RateLimiter;
  logger: Logger;
  now?: () => number;
  /** FIRST_REPLY_TARGET_MINUTES (src/config.ts): a conversation waiting longer is overdue; default 5. */
  firstReplyTargetMinutes?: number;
  /** The visitor's side (src/channels/webchat/visitor-side.ts): told of a close and of an agent's message. */
  visitor?: VisitorHooks;
}

/** What the visitor's side hears from the inbox (the satisfaction question, typing's end, replies by email). */
export interface VisitorHooks {
  /** Whether SMTP is set (GET /v1/inbox/settings' `email.configured`). */
  readonly emailConfigured: boolean;
  closed(row: SessionRow): Promise<void>;
  agentReplied(row: SessionRow, text: string, agentName: string | null): Promise<boolean>;
}

type SessionRow = NonNullable<Awaited<ReturnType<SessionsRepository['findById']>>>;

/** The status of a message as the API shows it: WhatsApp's delivery status, or `sent` for a stored web chat message. */
export function messageStatus(outboundStatus: string | null | undefined): 'queued' | 'sent' | 'delivered' | 'read' | 'failed' {
  switch (outboundStatus) {
    case undefined:
    case null:
      return 'sent';
    case 'queued':
      return 'queued';
    // Meta took it (accepted) or reported it sent.
    case 'accepted':
    case 'sent':
      return 'sent';
    case 'delivered':
    case 'read':
    case 'failed':
      return outboundStatus;
    default:
      return 'queued';
  }
}


const iso = (value: Date | string | number) => new Date(value).toISOString();

export function createInboxService(deps: InboxServiceDeps) {
  const { sessions, runtime } = deps;
  const repo = inboxRepository(deps.db);
  const now = deps.now ?? Date.now;
  const log = deps.logger.child({ component: 'inbox' });
  const firstReplyTargetMinutes = deps.firstReplyTargetMinutes ?? DEFAULT_FIRST_REPLY_TARGET_MINUTES;
  const firstReplyTargetMs = firstReplyTargetMinutes * 60_000;

  async function load(workspaceId: string, id: string): Promise<SessionRow> {
    const row = await sessions.findById(workspaceId, id);
    if (!row) throw notFound('The session');
    return row;
  }

  function chatOnly(row: SessionRow): void {
    if (row.channel === 'phone') {
      throw new AppError('phone_session', 'A phone session cannot be taken over here: the phone hands a caller to a person with its transfer (PUT /v1/phone).');
    }
  }

  /** A list row's holder as the API shows them. */
  function holderOf(userId: string, user: { email: string; name: string | null }) {
    return { user_id: userId, email: user.email, name: displayName(user) };
  }

  /** The signed-in user as the holder: their token was found live, for a live user, in this very request. */
  function agentOf(principal: Principal): AgentRef {
    return { userId: principal.userId, email: principal.email, name: displayName(principal) };
  }

  function control(row: SessionRow, event: AttendantEvent): Promise<AttendantOutcome> {
    return runtime.control({ workspaceId: row.workspace_id, channel: row.channel, externalId: row.external_id }, event);
  }

  function holderOnly(row: SessionRow, principal: Principal, what: string): void {
    if (row.handled_by !== 'agent' || row.agent_user_id === principal.userId) return;
    // Owners and admins may end another's hold (someone left for the day); an agent may not.
    if (principal.role === 'agent') throw new AppError('not_holder', `Only the user who holds this conversation may ${what} it.`);
  }

  /**
   * An agent's message or retry takes from their budget in this conversation (docs/architecture.md, "Who handles a
   * conversation"): on WhatsApp each is a Graph send, and a loop would spend the number's quality rating.
   */
  function paceAgent(row: SessionRow, principal: Principal): void {
    deps.messageLimiter.takeOrRefuse(`${principal.userId}\n${row.id}`, () => 'You are sending messages faster than we can deliver them; wait a moment.');
  }

  /** A message stored (and, on WhatsApp, queued for sending), shown live on the session's stream and in the inbox. */
  async function deliver(row: SessionRow, from: 'bot' | 'agent', text: string, agent: AgentRef | null): Promise<{ id: string; status: string } | null> {
    const id = randomUUID();
    const at = iso(now());
    let outboundId: string | null = null;
    const record: MessageRecord = {
      id,
      session_id: row.id,
      from,
      text,
      source: null,
      agent_user_id: agent?.userId ?? null,
      turn_id: null,
      outbound_id: null,
      at,
    };
    if (row.channel === 'whatsapp') {
      outboundId = randomUUID();
      const stored = await sessions.addWhatsappMessage(
        { ...record, outbound_id: outboundId },
        { workspaceId: row.workspace_id, externalId: row.external_id, kind: from === 'agent' ? 'agent' : 'notice', windowStart: new Date(now() - WHATSAPP_WINDOW_MS) },
      );
      if (!stored) {
        if (from === 'bot') return null; // a sentence of ours: not sent outside the window (Meta would refuse it)
        throw new AppError(
          'whatsapp_window_closed',
          "More than 24 hours passed since the customer's last message: WhatsApp accepts only a template message now, so this one cannot be sent.",
        );
      }
      deps.wakeWhatsapp?.();
    } else {
      await sessions.addMessage(record);
    }
    const status = outboundId ? 'queued' : 'sent';
    const message: ConversationMessage = { id, from, text, at, agent: agentView(agent), status };
    runtime.notify({ type: 'message', sessionId: row.id, message });
    deps.inbox.publish({
      workspaceId: row.workspace_id,
      sessionId: row.id,
      channel: row.channel,
      reason: 'message',
      handledBy: row.handled_by,
      agent: agentView(agent),
      waitingSince: row.waiting_since ? iso(row.waiting_since) : null,
      lastMessage: { from, text, at },
    });
    return { id, status };
  }

  /**
   * A line in the customer's language when a person joins, hands back or closes (docs/webchat.md, "Lines the visitor
   * sees"): stored and sent as the bot's (on WhatsApp inside the 24-hour window only). A failure is logged: the change
   * itself was made.
   */
  async function announce(row: SessionRow, outcome: AttendantOutcome, key: PhraseKey, name: string | null): Promise<void> {
    const text = phrase(key, outcome.language).replace('{name}', name ?? 'A colleague');
    try {
      await deliver({ ...row, handled_by: outcome.handledBy }, 'bot', text, null);
    } catch (err) {
      log.warn({ err, sessionId: row.id, line: key }, 'the line for the customer could not be stored');
    }
  }

  return {
    async list(principal: Principal, view: InboxView) {
      const rows = await repo.list(principal.workspaceId, principal.userId, view, MAX_INBOX_CONVERSATIONS);
      return rows.map((r) => ({
        id: r.id,
        channel: r.channel,
        session_id: r.external_id,
        status: r.status,
        customer: { phone: r.customer_phone, email: r.customer_email, name: r.customer_name },
        label: conversationLabel(r),
        handled_by: r.handled_by,
        agent: r.agent_user_id && r.agent_email ? holderOf(r.agent_user_id, { email: r.agent_email, name: r.agent_name }) : null,
        waiting_since: r.waiting_since ? iso(r.waiting_since) : null,
        handoff: r.handoff,
        last_message: r.last ? { from: r.last.from, text: r.last.text, at: iso(r.last.at) } : null,
        customer_last_message: r.customerLast ? { text: r.customerLast.text, at: iso(r.customerLast.at) } : null,
        assigned_to: assignedToView(r.assigned_to),
        // Waiting longer than the first-reply target (FIRST_REPLY_TARGET_MINUTES).
        overdue: r.handled_by === 'waiting' && r.waiting_since !== null && now() - new Date(r.waiting_since).getTime() > firstReplyTargetMs,
        updated_at: iso(r.updated_at),
      }));
    },

    /** POST /v1/sessions/{id}/takeover: from bot or waiting (or closed) to this user; 409 taken when another holds it. */
    async takeover(principal: Principal, id: string) {
      const row = await load(principal.workspaceId, id);
      chatOnly(row);
      const agent = agentOf(principal);
      const outcome = await control(row, { type: 'takeover', agent, at: now() });
      if (outcome.handledBy === 'agent' && outcome.agent?.userId === agent.userId) {
        if (outcome.applied) {
          log.info({ sessionId: row.id, userId: agent.userId }, 'conversation taken over');
          await announce(row, outcome, 'agent_joined', agent.name);
        }
        return { handled_by: 'agent' as const, agent: agentView(agent) };
      }
      if (outcome.handledBy === 'agent' && outcome.agent) {
        const err = new AppError('taken', `${outcome.agent.email} holds this conversation.`);
        err.fields = { holder: agentView(outcome.agent) };
        throw err;
      }
      throw new AppError('conflict', 'The conversation could not be taken over; it may have ended.');
    },

    /** POST /v1/sessions/{id}/handback: the bot answers again. */
    async handback(principal: Principal, id: string) {
      const row = await load(principal.workspaceId, id);
      chatOnly(row);
      holderOnly(row, principal, 'hand back');
      const outcome = await control(row, { type: 'handback', at: now() });
      if (outcome.handledBy !== 'bot') throw new AppError('conflict', 'The conversation is handled by a person again; load it and try again.');
      // The customer hears it when a person had it (a waiting conversation given back was never joined).
      if (outcome.applied && row.handled_by === 'agent') await announce(row, outcome, 'agent_handed_back', agentOf(principal).name);
      return { handled_by: 'bot' as const };
    },

    /** POST /v1/sessions/{id}/close: the team is done; the bot answers whatever the customer writes next. */
    async close(principal: Principal, id: string) {
      const row = await load(principal.workspaceId, id);
      chatOnly(row);
      holderOnly(row, principal, 'close');
      const outcome = await control(row, { type: 'close', at: now() });
      if (!outcome.closed) throw new AppError('conflict', 'The conversation could not be closed; load it and try again.');
      if (outcome.applied) {
        // The one satisfaction question (the widget's poll; WhatsApp's reply buttons). On the web chat it is put before
        // the closing line is stored, so the poll that brings the line brings the question too: put after, a poll on
        // another engine could answer the line without it, and the widget's next poll, beginning with the question
        // already put, saw no change and waited out its 25 s. On WhatsApp the customer reads the line first.
        const ask = () => deps.visitor?.closed(row).catch((err: unknown) => log.warn({ err, sessionId: row.id }, 'the satisfaction question could not be put'));
        if (row.channel === 'webchat') await ask();
        await announce(row, outcome, 'agent_closed', agentOf(principal).name);
        if (row.channel !== 'webchat') await ask();
      }
      return { handled_by: 'bot' as const, status: 'ended' as const };
    },

    /** POST /v1/sessions/{id}/messages: the holder's message to the customer. */
    async sendMessage(principal: Principal, id: string, text: string) {
      const row = await load(principal.workspaceId, id);
      chatOnly(row);
      const body = text.trim();
      const max = row.channel === 'whatsapp' ? MAX_AGENT_WHATSAPP_CHARS : MAX_AGENT_WEBCHAT_CHARS;
      if (body === '') throw new AppError('invalid_message', 'text is empty.', [{ field: 'text', message: 'must not be empty' }]);
      if (Array.from(body).length > max) {
        throw new AppError('invalid_message', `text is longer than ${max} characters (the limit on ${row.channel}).`, [{ field: 'text', message: `at most ${max} characters` }]);
      }
      if (row.handled_by !== 'agent' || row.agent_user_id !== principal.userId) {
        throw new AppError('not_holder', 'Only the user who holds this conversation may write in it: take it over first (POST /v1/sessions/{id}/takeover).');
      }
      paceAgent(row, principal);
      const agent = agentOf(principal);
      const sent = await deliver(row, 'agent', body, agent);
      // Typing ends with the message; a web chat visitor who left gets it by email too (stored before this answers).
      await deps.visitor?.agentReplied(row, body, agent.name).catch((err: unknown) => log.error({ err, sessionId: row.id }, 'the reply could not be queued for email'));
      return { message: sent! };
    },

    /**
     * POST /v1/sessions/{id}/messages/{message_id}/retry: a failed WhatsApp message queued again, by the conversation's
     * holder or an owner or admin (the holder's colleague is not to send in their name).
     */
    async retry(principal: Principal, id: string, messageId: string) {
      const row = await load(principal.workspaceId, id);
      chatOnly(row);
      const holds = row.handled_by === 'agent' && row.agent_user_id === principal.userId;
      if (!holds && principal.role === 'agent') {
        throw new AppError('not_holder', 'Only the user who holds this conversation, or an owner or admin, may send its failed message again.');
      }
      const message = await sessions.findMessage(row.id, messageId);
      if (!message || message.from !== 'agent') throw notFound('The message');
      if (!message.outbound_id) throw new AppError('conflict', 'Only a WhatsApp message that failed can be sent again.');
      const inbound = await repo.latestInbound(row.workspace_id, row.external_id);
      if (!inbound || now() - new Date(inbound.sent_at).getTime() > WHATSAPP_WINDOW_MS) {
        throw new AppError('whatsapp_window_closed', "More than 24 hours passed since the customer's last message: WhatsApp accepts only a template message now.");
      }
      paceAgent(row, principal);
      if (!(await repo.requeueFailed(message.outbound_id))) throw new AppError('conflict', 'The message has not failed; only a failed message is sent again.');
      deps.wakeWhatsapp?.();
      runtime.notify({ type: 'message_status', sessionId: row.id, message_id: message.id, status: 'queued', failure: null });
      return { message: { id: message.id, status: 'queued' as const } };
    },

    /**
     * The sweep: waiting conversations whose hand-back deadline passed go back to the bot, and the customer is told in
     * their language. Returns how many.
     */
    async handBackOverdue(): Promise<number> {
      let count = 0;
      for (const due of await sessions.dueHandbacks(50)) {
        const row = await sessions.findById(due.workspace_id, due.id);
        if (!row || row.handled_by !== 'waiting') continue;
        try {
          const outcome = await control(row, { type: 'handback_due', at: now() });
          if (!outcome.applied || outcome.reason !== 'handback_timeout') continue;
          count++;
          await deliver({ ...row, handled_by: 'bot', waiting_since: null }, 'bot', phrase('handback_timeout', outcome.language), null);
        } catch (err) {
          log.warn({ err, sessionId: row.id }, 'handing a waiting conversation back to the bot failed; the next sweep tries again');
        }
      }
      return count;
    },

    async settings(workspaceId: string) {
      return {
        handback_after_minutes: await sessions.handbackAfterMinutes(workspaceId),
        first_reply_target_minutes: firstReplyTargetMinutes,
        // SMTP_URL: a reply to a web chat visitor who left is emailed (docs/webchat.md, "Replies by email").
        email: { configured: deps.visitor?.emailConfigured ?? false },
      };
    },

    async putSettings(workspaceId: string, minutes: number | null) {
      await sessions.setHandbackAfterMinutes(workspaceId, minutes);
      return { handback_after_minutes: minutes, first_reply_target_minutes: firstReplyTargetMinutes };
    },
  };
}

export type InboxService = ReturnType<typeof createInboxService>;
