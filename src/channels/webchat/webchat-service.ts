/**
 * Website chat (protocol §1.3, §6; docs/interfaces.md: Channels → Website chat). A visitor's conversation on the customer's
 * web page: it answers from the knowledge base only (the session runtime never calls the bot link for `webchat`),
 * and it emits the protocol §6 events `new_chat`, `new_lead` and `escalation` into the outbox, each in the same
 * transaction as the state change that causes it (src/webhooks/outbox.ts), so an event exists exactly when its
 * cause was committed.
 *
 * Decisions (docs/webchat.md):
 * - The conversation id is a random UUID: the `conversation_id` of the events and the session's external_id.
 * - A message that asks for a person (in words, or a yes right after the bot offered one: the session finds it, as on
 *   every channel, src/text/person-request.ts) is answered by the handoff rule instead of the knowledge base, and
 *   emits `escalation` of type `detected`, at most once per conversation and not after the visitor already asked with
 *   the button.
 * - The escalate route emits `escalation` of type `requested` once per conversation; a repeat press is answered the
 *   same and records nothing.
 * - A lead emits `new_lead` when the details are new or changed; the same details again record nothing.
 * - Every read and write of a conversation after its start needs the visitor token that start answered: knowing the
 *   conversation id (agents see it, webhook receivers get it) is not enough to write as the visitor.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Counter } from 'prom-client';
import type { Db } from '../../../db/database.ts';
import { webchatRepository, type Lead } from '../../../db/repositories/webchat.repository.ts';
import { DEFAULT_LANGUAGE } from '../../text/language.ts';
import { detectLanguage } from '../../text/detect-language.ts';
import { notFound } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import type { Metrics } from '../../metrics.ts';
import type { SessionRuntime, TestConversation, TurnResult } from '../../sessions/session-runtime.ts';
import { dashboardUrl, timestamp, type EscalationType } from '../../webhooks/events.ts';
import { recordEvent, type Executor } from '../../webhooks/outbox.ts';
import { parseAllowedOrigins } from './origins.ts';
import { isUuid } from '../../ids.ts';
import { SESSION_MACHINE_VERSION } from '../../../machines/session-types.ts';
import { displayName } from '../../accounts/display-name.ts';
import type { SessionsRepository } from '../../../db/repositories/sessions.repository.ts';
import type { HandledBy } from '../../../db/schema.ts';
import type { InboxEvents } from '../../sessions/inbox-events.ts';
import { waitingSentence, type TeamAvailabilityDeps } from '../../sessions/handoff.ts';
import { AppError } from '../../errors.ts';
import { MAX_POLL_MESSAGES } from '../../inbox/limits.ts';
import { createLongPolls, type LongPollsOptions, type PollWake } from './long-polls.ts';
import type { PollExtras, VisitorSide } from './visitor-side.ts';

export interface WebchatServiceDeps {
  db: Db;
  runtime: Pick<SessionRuntime, 'handleMessage' | 'open'>;
  /** Whether the team can take a person now (presence and the team hours); absent: not. */
  teamAvailable?: (workspaceId: string) => Promise<boolean>;
  /** Outside the team hours, when they open next (the visitor is told until when the team is away); absent: not said. */
  teamOpensAt?: TeamAvailabilityDeps['teamOpensAt'];
  /** The session's messages (the long poll reads them) and the inbox's changes (which wake a waiting poll). */
  sessions?: Pick<SessionsRepository, 'find' | 'messages'>;
  inbox?: Pick<InboxEvents, 'subscribe'>;
  /** The caps of open long polls (src/channels/webchat/long-polls.ts); defaults from src/channels/webchat/limits.ts. */
  polls?: Omit<LongPollsOptions, 'inbox'>;
  /** Typing, presence and satisfaction (src/channels/webchat/visitor-side.ts); absent: the poll answers no typing. */
  visitorSide?: VisitorSide;
  /** PUBLIC_URL: the base of `dashboard_url` in new_chat. */
  publicUrl: string;
  logger: Logger;
  /** Counters are registered here when given. */
  metrics?: Pick<Metrics, 'registry'>;
  now?: () => Date;
}

export interface WebchatSettings {
  allowed_origins: string[];
  /** The owner's switch; the chat works when it is on and the page's site is among the allowed origins. */
  enabled: boolean;
  updated_at: string | null;
}


/** A message as the widget's long poll shows it. */
export interface VisitorMessage {
  id: string;
  from: 'customer' | 'bot' | 'agent';
  text: string;
  at: string;
  agent_name?: string;
}

/** A poll without the visitor side: nobody types, no question. */
const NO_EXTRAS: PollExtras = { typing: null, typingUntil: null, survey: null };

/** The visitor's token as stored: its SHA-256, hex. */
function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function createWebchatService(deps: WebchatServiceDeps) {
  const { db, runtime } = deps;
  const now = deps.now ?? (() => new Date());
  const repo = webchatRepository(db);
  const log = deps.logger.child({ channel: 'webchat' });
  const side = deps.visitorSide;
  const team: TeamAvailabilityDeps = {
    teamAvailable: deps.teamAvailable ?? (async () => false),
    ...(deps.teamOpensAt ? { teamOpensAt: deps.teamOpensAt } : {}),
  };
  const polls = createLongPolls({ ...deps.polls, inbox: deps.inbox, ...(side ? { signals: side } : {}) });
  const events = deps.metrics
    ? new Counter({ name: 'webchat_events_recorded_total', help: 'Website-chat events written to the outbox, by event and escalation type.', labelNames: ['event', 'type'] as const, registers: [deps.metrics.registry] })
    : null;

  /**
   * The visitor pressed the button for the team: a session turn that is the handoff (src/sessions/handoff.ts decides
   * what the visitor is told, in the conversation's language, and notifies the team), so it is in the history too.
   */
  async function handOff(workspaceId: string, conversationId: string, text: string, language: string | null): Promise<string> {
    const result = await runtime.handleMessage({
      workspaceId,
      channel: 'webchat',
      externalId: conversationId,
      text,
      ...(language ? { language } : {}),
      // A person is asked for: the conversation waits for a colleague in the team's inbox (docs/webchat.md).
      handoff: { kind: 'human', requestedBy: 'customer' },
    });
    if (!result.cancelled && !result.held) return result.text;
    // Already with a person (held), or replaced by a newer message: what the handoff says, from the same presence and
    // team hours (src/sessions/handoff.ts).
    return waitingSentence(team, workspaceId, language ?? DEFAULT_LANGUAGE);
  }

  /**
   * The conversation of the visitor who holds its token (X-Visitor-Token): its reads and its writes need it
   * (docs/webchat.md, "The visitor token"). Another workspace's conversation, a missing token and another
   * conversation's token are all answered exactly like a conversation that does not exist.
   */
  async function visitorConversation(workspaceId: string, id: string, visitorToken: string | undefined) {
    const row = isUuid(id) ? await repo.findConversation(workspaceId, id) : undefined;
    if (!row || !visitorToken || row.visitor_token_hash === null || row.visitor_token_hash !== tokenHash(visitorToken.trim())) throw notFound('The conversation');
    return row;
  }

  /** Marks and records one escalation inside `trx`; true when it was recorded now. */
  async function escalateIn(
    trx: Executor,
    workspaceId: string,
    conversationId: string,
    type: EscalationType,
    visitorMessage: string,
    at: Date,
  ): Promise<boolean> {
    if (!(await webchatRepository(trx).markEscalation(workspaceId, conversationId, type, at))) return false;
    await recordEvent(trx, workspaceId, { event: 'escalation', conversation_id: conversationId, type, visitor_message: visitorMessage, timestamp: timestamp(at) });
    return true;
  }

  function counted(event: string, type = ''): void {
    events?.inc({ event, type });
  }

  /**
   * One turn of the visitor's message; null when a newer message of the visitor replaced it (that request carries the
   * answer). When the session found that the message asks for a person, the team hears of it: `escalation` of type
   * `detected`, once per conversation.
   */
  async function turn(workspaceId: string, conversationId: string, text: string, language: string | null): Promise<string | null> {
    const result = await answer(workspaceId, conversationId, text, language);
    return result.cancelled || result.held ? null : result.text;
  }

  /** The turn itself; a scenario's test conversation (`test`) never tells the team (no `escalation` webhook). */
  async function answer(workspaceId: string, conversationId: string, text: string, language: string | null, test?: TestConversation): Promise<TurnResult> {
    const result = await runtime.handleMessage({ workspaceId, channel: 'webchat', externalId: conversationId, text, ...(language ? { language } : {}), ...(test ? { test } : {}) });
    // Held for the person who handles the conversation: stored, and nobody answers it here.
    if (result.cancelled || result.held || test) return result;
    if (result.handoff?.requestedBy === 'customer') {
      const at = now();
      const recorded = await db.transaction().execute((trx) => escalateIn(trx, workspaceId, conversationId, 'detected', text, at));
      if (recorded) counted('escalation', 'detected');
      log.debug({ workspaceId, conversationId, recorded }, 'visitor asked for a person');
    }
    return result;
  }

  return {
    /** POST /v1/webchat/conversations: the conversation and its new_chat event in one transaction, then the reply. */
    async start(
      workspaceId: string,
      input: { visitorMessage: string; pageUrl: string; language: string | null },
    ): Promise<{ conversation_id: string; visitor_token: string; reply: string | null }> {
      const id = randomUUID();
      // The visitor's own key to the conversation's messages: answered once, stored as a hash only.
      const visitorToken = `blv_${randomBytes(24).toString('base64url')}`;
      const at = now();
      const text = input.visitorMessage.trim();
      const language = conversationLanguage(text, input.language);
      // The session is made here, with the conversation, so that new_chat's dashboard_url can name it: the dashboard
      // opens a conversation by its session id (docs/interfaces.md; docs/webhooks.md). The runtime finds it by external id.
      const sessionId = randomUUID();
      await db.transaction().execute(async (trx) => {
        await webchatRepository(trx).insertConversation({
          id,
          workspace_id: workspaceId,
          page_url: input.pageUrl,
          language,
          created_at: at,
          visitor_token_hash: tokenHash(visitorToken),
        });
        await webchatRepository(trx).insertSession({
          id: sessionId,
          workspace_id: workspaceId,
          external_id: id,
          language: language ?? DEFAULT_LANGUAGE,
          machine_version: SESSION_MACHINE_VERSION,
        });
        await recordEvent(trx, workspaceId, {
          event: 'new_chat',
          conversation_id: id,
          visitor_message: text,
          page_url: input.pageUrl,
          timestamp: timestamp(at),
          dashboard_url: dashboardUrl(deps.publicUrl, sessionId),
        });
      });
      counted('new_chat');
      log.debug({ workspaceId, conversationId: id }, 'website chat started');
      return { conversation_id: id, visitor_token: visitorToken, reply: await turn(workspaceId, id, text, language) };
    },

    /** POST /v1/webchat/conversations/{id}/messages: the visitor's next message and its reply. */
    async message(
      workspaceId: string,
      conversationId: string,
      input: { visitorToken: string | undefined; message: string; language: string | null },
    ): Promise<{ reply: string | null }> {
      const row = await visitorConversation(workspaceId, conversationId, input.visitorToken);
      const text = input.message.trim();
      const language = detectLanguage(text) ?? row.language ?? input.language;
      if (language && language !== row.language) await repo.setLanguage(row.id, language);
      await side?.visitorWrote(conversationId);
      return { reply: await turn(workspaceId, row.id, text, language) };
    },

    /**
     * A scenario's test message (docs/scenarios.md): the visitor's turn as `start` and `message` run it (the language
     * told as they tell it), without a conversation row, a visitor token or an event: nothing of it reaches the team
     * or a webhook. `language`: the page's, for a first message too short to tell; later ones keep the previous.
     */
    async testTurn(
      workspaceId: string,
      conversationId: string,
      input: { message: string; language: string | null; test: TestConversation },
    ): Promise<TurnResult> {
      const text = input.message.trim();
      return answer(workspaceId, conversationId, text, conversationLanguage(text, input.language), input.test);
    },

    /** POST /v1/webchat/conversations/{id}/lead: the contact details on the conversation, and new_lead. */
    async lead(workspaceId: string, conversationId: string, input: Lead & { visitorToken: string | undefined }): Promise<{ recorded: boolean }> {
      await visitorConversation(workspaceId, conversationId, input.visitorToken);
      const at = now();
      const lead = { name: input.name.trim(), email: input.email.trim(), phone: input.phone.trim() };
      const outcome = await db.transaction().execute(async (trx) => {
        const saved = await webchatRepository(trx).saveLead(workspaceId, conversationId, lead, at);
        if (saved === 'changed') {
          // The visitor who left details is the conversation's customer on the dashboard too.
          await webchatRepository(trx).setSessionCustomer(workspaceId, conversationId, lead);
          await recordEvent(trx, workspaceId, { event: 'new_lead', conversation_id: conversationId, ...lead, timestamp: timestamp(at) });
        }
        return saved;
      });
      if (outcome === 'missing') throw notFound('The conversation');
      if (outcome === 'changed') counted('new_lead');
      log.debug({ workspaceId, conversationId, recorded: outcome === 'changed' }, 'visitor left contact details');
      return { recorded: outcome === 'changed' };
    },

    /** POST /v1/webchat/conversations/{id}/escalate: the visitor asked for the team with the widget's button. */
    async escalate(
      workspaceId: string,
      conversationId: string,
      input: { visitorToken: string | undefined; message?: string | undefined; language: string | null },
    ): Promise<{ reply: string }> {
      const row = await visitorConversation(workspaceId, conversationId, input.visitorToken);
      const given = input.message?.trim();
      // protocol §6 wants the visitor's message: the one given with the button, else the visitor's latest one.
      const visitorMessage = given || (await repo.latestVisitorMessage(workspaceId, row.id)) || '';
      const at = now();
      const recorded = await db.transaction().execute((trx) => escalateIn(trx, workspaceId, row.id, 'requested', visitorMessage, at));
      if (recorded) counted('escalation', 'requested');
      log.debug({ workspaceId, conversationId: row.id, recorded }, 'visitor asked for the team');
      const language = (given ? detectLanguage(given) : null) ?? row.language ?? input.language;
      return { reply: await handOff(workspaceId, row.id, given ?? '', language) };
    },

    /**
     * GET /v1/webchat/conversations/{id}/messages: the conversation's messages after `after` (all when null), for the
     * visitor who holds its token. With `waitMs` it answers as soon as a newer message exists (a long poll; docs/webchat.md,
     * "Long polls"): it holds one of the conversation's and the client address's few places (429 beyond), and reads the
     * database again only when the conversation's session changed, on any engine (src/channels/webchat/long-polls.ts),
     * and at the end of the wait.
     */
    async messages(
      workspaceId: string,
      conversationId: string,
      input: { visitorToken: string | undefined; after: string | null; waitMs: number; clientAddress: string; signal?: AbortSignal },
    ): Promise<{ messages: VisitorMessage[]; handled_by: HandledBy } & Pick<PollExtras, 'typing' | 'survey'>> {
      const row = await visitorConversation(workspaceId, conversationId, input.visitorToken);
      if (input.after !== null && !isUuid(input.after)) {
        throw new AppError('validation_failed', 'after must be the id of a message of this conversation.', [{ field: 'after', message: 'not a message id' }]);
      }
      if (!deps.sessions) throw new AppError('unavailable', 'Website chat messages are not available on this server.');
      const sessions = deps.sessions;
      const deadline = Date.now() + input.waitMs;
      let session = await sessions.find(workspaceId, 'webchat', row.id);
      // Placed (and subscribed) before the read, so that a message added after the read wakes it.
      const poll = input.waitMs > 0 ? polls.open({ workspaceId, conversationId: row.id, sessionId: session?.id ?? null, address: input.clientAddress }) : null;
      let woken: PollWake | null = null;
      /** Typing and the survey as the poll began: a change of either answers it too. */
      let began: PollExtras | null = null;
      try {
        // The visitor is here while the widget polls (docs/webchat.md, "Replies by email").
        await side?.seen(workspaceId, row.id);
        for (let first = true; ; first = false) {
          if (!first) session = await sessions.find(workspaceId, 'webchat', row.id);
          const rows = session ? await sessions.messages(session.id, input.after, MAX_POLL_MESSAGES) : [];
          if (rows === undefined) {
            throw new AppError('validation_failed', 'after must be the id of a message of this conversation.', [{ field: 'after', message: 'not a message of this conversation' }]);
          }
          const extras = side ? await side.pollExtras(row.id, session?.id ?? null) : NO_EXTRAS;
          began ??= extras;
          const changed = extras.typing !== began.typing || extras.survey !== began.survey;
          const answer = () => ({
            handled_by: session?.handled_by ?? 'bot',
            typing: extras.typing,
            survey: extras.survey,
            messages: rows.map((m) => ({
              id: m.id,
              from: m.from,
              text: m.text,
              at: new Date(m.at).toISOString(),
              ...(m.from === 'agent' && m.agent_email ? { agent_name: displayName({ email: m.agent_email, name: m.agent_name }) } : {}),
            })),
          });
          if (!poll || rows.length > 0 || changed || woken === 'deadline' || Date.now() >= deadline) return answer();
          // Nothing is read while it waits. It ends when there is a reason to read (the agent's typing lapsing is
          // one), or when the client left (then nothing is read: the answer would go nowhere).
          const until = extras.typingUntil !== null && extras.typingUntil < deadline ? extras.typingUntil + 1 : deadline;
          woken = await poll.wait(until, input.signal);
          if (woken === 'deadline' && until !== deadline) woken = 'settled';
          if (woken === 'aborted') return { handled_by: session?.handled_by ?? 'bot', messages: [], typing: extras.typing, survey: extras.survey };
        }
      } finally {
        poll?.close();
        if (side) void side.seen(workspaceId, row.id).catch((err: unknown) => log.warn({ err, conversationId: row.id }, 'the visitor\'s last poll could not be noted'));
      }
    },

    /** POST /v1/webchat/conversations/{id}/typing: the visitor is typing; the team sees it live. */
    async typing(workspaceId: string, conversationId: string, input: { visitorToken: string | undefined }): Promise<void> {
      const row = await visitorConversation(workspaceId, conversationId, input.visitorToken);
      if (!side || !deps.sessions) return;
      const session = await deps.sessions.find(workspaceId, 'webchat', row.id);
      await side.visitorTyping(workspaceId, row.id, session?.id ?? null);
    },

    /** POST /v1/webchat/conversations/{id}/satisfaction: the answer to the question put after a colleague closed it. */
    async satisfaction(
      workspaceId: string,
      conversationId: string,
      input: { visitorToken: string | undefined; score: number; comment?: string | undefined },
    ): Promise<{ satisfaction: { score: number; comment: string | null; at: string } }> {
      const row = await visitorConversation(workspaceId, conversationId, input.visitorToken);
      const session = deps.sessions ? await deps.sessions.find(workspaceId, 'webchat', row.id) : undefined;
      if (!side || !session) throw new AppError('conflict', 'No question was asked in this conversation: it is asked after a colleague closed it.');
      return { satisfaction: await side.answer(session.id, { score: input.score, comment: input.comment }) };
    },

    /** GET /v1/webchat. */
    async settings(workspaceId: string): Promise<WebchatSettings> {
      const row = await repo.findSettings(workspaceId);
      return { allowed_origins: row?.allowed_origins ?? [], enabled: row?.enabled ?? true, updated_at: row ? row.updated_at.toISOString() : null };
    },

    /** PUT /v1/webchat: the origins are checked and canonicalised (a page's address gives its site's); the list replaces the previous one. */
    async putSettings(workspaceId: string, input: { allowed_origins: string[]; enabled?: boolean }): Promise<WebchatSettings & { notes: string[] }> {
      const { origins, notes } = parseAllowedOrigins(input.allowed_origins);
      const row = await repo.putSettings(workspaceId, origins, input.enabled);
      return { allowed_origins: row.allowed_origins, enabled: row.enabled, updated_at: row.updated_at.toISOString(), notes };
    },

    /** The gate's view: the canonical origins whose pages may call the website-chat API (none until set) and the switch, in one read. */
    async access(workspaceId: string): Promise<{ origins: readonly string[]; enabled: boolean }> {
      const row = await repo.findSettings(workspaceId);
      return { origins: row?.allowed_origins ?? [], enabled: row?.enabled ?? true };
    },
  };
}

export type WebchatService = ReturnType<typeof createWebchatService>;

/**
 * The language a conversation starts in: what the visitor's words are written in when that can be told (tinyld), else
 * the page's (the body's `language` or the browser's Accept-Language). Later messages keep the conversation's language
 * unless their words tell another one: visitors switch, pages do not.
 */
function conversationLanguage(text: string, page: string | null): string | null {
  return detectLanguage(text) ?? page;
}
