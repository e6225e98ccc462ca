/**
 * Live sessions for the dashboard (docs/interfaces.md): list, one session with its turns (the source of every reply,
 * bot-link outcomes, tool calls, handoffs, where the time went), and a live SSE stream. Every role may read; the
 * team switch is for owners and admins.
 */
import type { SessionsRepository } from '../../../db/repositories/sessions.repository.ts';
import type { Satisfaction, VisitorRepository } from '../../../db/repositories/visitor.repository.ts';
import type { Principal } from '../../../db/repositories/accounts.repository.ts';
import { AppError, notFound } from '../../errors.ts';
import type { StreamGuard } from '../../auth/stream-guard.ts';
import type { SessionRuntime } from '../../sessions/session-runtime.ts';
import { MAX_LIST_LIMIT } from '../../limits.ts';
import { pageQuery, readPage } from '../pagination.ts';
import { displayName, type NamedUser } from '../../accounts/display-name.ts';
import { conversationLabel, LABEL_WORDS_CHARS } from '../../text/conversation-label.ts';
import { messageStatus } from '../../inbox/inbox-service.ts';
import { assignedToView } from '../../inbox/assignment.ts';
import { assignedUserOf } from '../../../db/repositories/team-presence.repository.ts';
import { SUMMARY_RATE_LIMIT } from '../../inbox/limits.ts';
import type { Summaries, SummaryLine } from '../../inbox/summary.ts';
import { serveEventStream } from '../event-stream.ts';
import { route, type RouteDefinition } from '../route.ts';
import type { CustomerContextService } from '../../inbox/customer-context.ts';
import { customerContextSchema } from './customer-context.ts';


const sessionSummary = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    channel: { enum: ['phone', 'whatsapp', 'webchat'] },
    session_id: { type: 'string', description: 'The session_id sent to the integrator.' },
    status: { enum: ['active', 'ended'] },
    state: { type: 'string', description: "The state machine's state." },
    customer: { type: 'object' },
    handoff: {},
    handled_by: { enum: ['bot', 'waiting', 'agent'], description: 'Who handles the conversation: the bot, nobody yet (a person was asked for), or `agent`.' },
    agent: {
      type: ['object', 'null'],
      properties: { user_id: { type: 'string' }, email: { type: 'string' }, name: { type: ['string', 'null'] } },
      description: 'The user holding the conversation while handled_by is agent.',
    },
    waiting_since: { type: ['string', 'null'], format: 'date-time' },
    assigned_to: {
      type: ['object', 'null'],
      properties: { user_id: { type: 'string', format: 'uuid' }, name: { type: 'string' } },
      description: 'Who the conversation is assigned to: its holder while a person holds it, the assignee while it waits (POST /v1/sessions/{id}/assign); null otherwise.',
    },
    last_message: {
      type: ['object', 'null'],
      description: 'In the list: the last chat message, or the last thing the customer said (a preview, as in GET /v1/inbox).',
      properties: { from: { enum: ['customer', 'bot', 'agent'] }, text: { type: ['string', 'null'] }, at: { type: 'string', format: 'date-time' } },
    },
    turn_count: { type: 'integer' },
    label: {
      type: 'string',
      description: `In the list: the conversation's name, the customer's name, email or number, else the first words of their first message (about ${LABEL_WORDS_CHARS} characters, cut at a word; plain text, the customer's own).`,
    },
    satisfaction: {
      type: ['object', 'null'],
      description: 'One session: the answer to the satisfaction question put after a colleague closed it (score 1..5, optional comment); null when none was given.',
      properties: { score: { type: 'integer', minimum: 1, maximum: 5 }, comment: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
    },
    updated_at: { type: 'string' },
    answered_by_team: { type: 'boolean', description: 'Whether a person of the team wrote in the conversation (then it is never "not connected", whatever the handoff said).' },
    customer_context: { ...customerContextSchema, description: 'GET /v1/sessions/{id} only: the customer panel (page URL, language, time zone, details).' },
  },
};

const agentSchema = {
  type: ['object', 'null'],
  properties: { user_id: { type: 'string' }, email: { type: 'string' }, name: { type: ['string', 'null'] } },
} as const;

/**
 * One session (GET /v1/sessions/{id}): the list's fields, and its messages and turns. A turn's botlink, knowledge,
 * tool_rounds, handoff, timings and errors are stored as the engine recorded them (docs/architecture.md), so their
 * shape is described in words, not checked.
 */
const sessionDetail = {
  ...sessionSummary,
  properties: {
    ...sessionSummary.properties,
    language: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    messages: {
      type: 'array',
      description: 'The chat channels\' messages in order (the customer\'s, the bot\'s with its source, the team\'s), and the team\'s private notes among them by time (from `note`: never shown to the customer).',
      items: {
        type: 'object',
        required: ['id', 'from', 'text', 'at'],
        properties: {
          id: { type: 'string' },
          from: { enum: ['customer', 'bot', 'agent', 'note'] },
          text: { type: 'string' },
          at: { type: 'string', format: 'date-time' },
          source: { type: 'string', description: 'A bot message: where its reply came from (integrator, ai, knowledge_base, fallback).' },
          agent: { ...agentSchema, description: 'An agent\'s message: who wrote it.' },
          status: { enum: ['queued', 'sent', 'delivered', 'read', 'failed'], description: 'An agent\'s message: how far its delivery got (WhatsApp).' },
          failure: {
            type: 'object',
            description: 'A failed agent\'s message: what WhatsApp answered.',
            properties: { http_status: { type: ['integer', 'null'] }, code: { type: ['integer', 'null'] }, reason: { type: ['string', 'null'] } },
          },
          author: { type: 'object', description: 'A note: who wrote it.', properties: { user_id: { type: ['string', 'null'] }, name: { type: 'string' } } },
          mentions: { type: 'array', description: 'A note: the colleagues it @mentions.', items: { type: 'object', properties: { user_id: { type: 'string' }, name: { type: 'string' } } } },
          edited_at: { type: ['string', 'null'], description: 'A note: when its author last changed it; null: never.' },
        },
      },
    },
    turns: {
      type: 'array',
      description: 'The bot\'s exchanges in order: the customer\'s message and the bot\'s reply, with how it was found.',
      items: {
        type: 'object',
        required: ['id', 'ordinal', 'status', 'customer_message', 'reply', 'started_at', 'ended_at'],
        properties: {
          id: { type: 'string' },
          from: { const: 'bot' },
          ordinal: { type: 'integer' },
          status: { enum: ['completed', 'cancelled'] },
          language: { type: 'string' },
          customer_message: { type: 'string' },
          reply: { type: ['string', 'null'] },
          source: { type: ['string', 'null'], description: 'Where the reply came from: integrator, ai, knowledge_base or fallback.' },
          botlink: { description: 'The Bot Link call: outcome, reason, httpStatus, latencyMs, endpoint, reply, problems; null without one.' },
          knowledge: { description: 'The knowledge search: passages (title, source, externalId, score) and confident; null without one.' },
          tool_rounds: { description: 'The AI\'s tool rounds, each with its outcomes (name, ok, failure, latencyMs, content).' },
          handoff: { description: 'The handoff the turn made (kind, sentence, connected); null: none.' },
          timings: { description: 'Where the time went, in milliseconds by step (botlink, botlinkFirstByte, knowledge, ai0…, tool:name).' },
          errors: { description: 'What went wrong in the turn, as recorded.' },
          started_at: { type: 'string', format: 'date-time' },
          ended_at: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
};

const agentOf = (userId: string | null, user: NamedUser | null | undefined) =>
  userId && user ? { user_id: userId, email: user.email, name: displayName(user) } : null;

export interface SessionRoutesDeps {
  sessions: SessionsRepository;
  /** The satisfaction answer of a conversation (db/repositories/visitor.repository.ts); absent: always null. */
  satisfaction?: Pick<VisitorRepository, 'find'>;
  runtime: SessionRuntime;
  streams: StreamGuard;
  /** Whether someone of the team is available, and whether a handoff would connect now (within the team hours). */
  team: (workspaceId: string) => Promise<{ available: boolean; availableNow: boolean }>;
  /** PUT /v1/team: true makes the caller available, false makes everyone of the workspace away (src/inbox/presence.ts). */
  switchTeam: (principal: Principal, available: boolean) => Promise<void>;
  /** The take-over summaries (src/inbox/summary.ts): kept per last message, their model calls a budget per workspace. */
  summaries: Summaries;
  /** The team's private notes on a session (src/inbox/notes.ts), shown among its messages with from "note". */
  notes?: (sessionId: string) => Promise<{ id: string; from: 'note'; text: string; at: string }[]>;
  /** The customer panel's facts (src/inbox/customer-context.ts). */
  customerContext: Pick<CustomerContextService, 'of' | 'sessionFacts'>;
}

/** The dashboard's conversations, the team switch and the team's follow-ups, in the order /openapi.json lists them. */
export function sessionRoutes(deps: SessionRoutesDeps): RouteDefinition[] {
  return [...conversationRoutes(deps), ...teamRoutes(deps), ...notificationRoutes(deps)];
}

/** The conversations: the list, one with its messages and turns, the summary for a take-over, the live stream. */
function conversationRoutes(deps: SessionRoutesDeps): RouteDefinition[] {
  const { sessions, runtime, streams } = deps;

  async function load(workspaceId: string, id: string | undefined) {
    // A non-UUID {id} never gets here (src/http/app.ts answers 404 first).
    if (!id) throw notFound('The session');
    const row = await sessions.findById(workspaceId, id);
    if (!row) throw notFound('The session');
    return row;
  }

  /** Who a session is assigned to (db/repositories/team-presence.repository.ts), named as colleagues see them. */
  async function assignedTo(row: Parameters<typeof assignedUserOf>[0]) {
    const userId = assignedUserOf(row);
    const user = userId ? await sessions.userNamed(userId) : null;
    return userId && user ? assignedToView({ user_id: userId, ...user }) : null;
  }

  return [
    route({
      method: 'get',
      path: '/v1/sessions',
      tag: 'sessions',
      summary: `Sessions of the workspace, most recent first. Query: channel, status, handled_by, limit (≤ ${MAX_LIST_LIMIT}), before (ISO time).`,
      access: 'member',
      query: {
        channel: { type: 'string', enum: ['phone', 'whatsapp', 'webchat'] },
        status: { type: 'string', enum: ['active', 'ended'] },
        handled_by: { type: 'string', enum: ['bot', 'waiting', 'agent'] },
        ...pageQuery('Sessions updated before this time (the next_before of the previous answer).'),
      },
      responses: { 200: { description: 'Sessions.', schema: { type: 'object', properties: { sessions: { type: 'array', items: sessionSummary }, next_before: { type: ['string', 'null'] } } } } },
      async handler({ req, principal }) {
        const q = req.query as Record<string, string | undefined>;
        if (q.channel && !['phone', 'whatsapp', 'webchat'].includes(q.channel)) throw new AppError('validation_failed', 'channel must be one of phone, whatsapp, webchat.', [{ field: 'channel', message: 'is not a known channel' }]);
        if (q.status && !['active', 'ended'].includes(q.status)) throw new AppError('validation_failed', 'status must be active or ended.', [{ field: 'status', message: 'is not a known status' }]);
        if (q.handled_by && !['bot', 'waiting', 'agent'].includes(q.handled_by)) throw new AppError('validation_failed', 'handled_by must be bot, waiting or agent.', [{ field: 'handled_by', message: 'is not a known value' }]);
        const { limit, before } = readPage(q);
        const rows = await sessions.list(
          principal.workspaceId,
          {
            ...(q.channel ? { channel: q.channel } : {}),
            ...(q.status ? { status: q.status } : {}),
            ...(q.handled_by ? { handledBy: q.handled_by } : {}),
            limit,
            ...(before ? { before } : {}),
          },
        );
        return {
          status: 200,
          body: {
            sessions: rows.map((r) => ({
              id: r.id,
              channel: r.channel,
              session_id: r.external_id,
              status: r.status,
              state: r.state,
              language: r.language,
              customer: { phone: r.customer_phone, email: r.customer_email, name: r.customer_name },
              label: conversationLabel(r),
              handoff: r.handoff,
              handled_by: r.handled_by,
              agent: agentOf(r.agent_user_id, r.agent_email ? { email: r.agent_email, name: r.agent_name } : null),
              waiting_since: r.waiting_since ? iso(r.waiting_since) : null,
              assigned_to: assignedToView(r.assigned_to),
              last_message: lastMessage(r.last_message),
              turn_count: r.turn_count,
              answered_by_team: Boolean(r.answered_by_team),
              created_at: iso(r.created_at),
              updated_at: iso(r.updated_at),
            })),
            next_before: rows.length === limit ? iso(rows.at(-1)!.updated_at) : null,
          },
        };
      },
    }),

    route({
      method: 'get',
      path: '/v1/sessions/{id}',
      tag: 'sessions',
      summary: 'One session: channel, state, customer, and every turn with the source of its reply, the bot-link outcome, tool calls, handoff and timings.',
      access: 'member',
      responses: { 200: { description: 'The session.', schema: sessionDetail }, 404: { description: 'No such session.' } },
      async handler({ params, principal }) {
        const row = await load(principal.workspaceId, params.id);
        const turns = await sessions.turns(row.id);
        const messages = (await sessions.messages(row.id, null, 10_000)) ?? [];
        const notes = (await deps.notes?.(row.id)) ?? [];
        return {
          status: 200,
          body: {
            id: row.id,
            channel: row.channel,
            session_id: row.external_id,
            status: row.status,
            state: row.state,
            language: row.language,
            customer: { phone: row.customer_phone, email: row.customer_email, name: row.customer_name },
            handoff: row.handoff,
            handled_by: row.handled_by,
            agent: agentOf(row.agent_user_id, row.agent_user_id ? await sessions.userNamed(row.agent_user_id) : null),
            waiting_since: row.waiting_since ? iso(row.waiting_since) : null,
            assigned_to: await assignedTo(row),
            turn_count: row.turn_count,
            created_at: iso(row.created_at),
            updated_at: iso(row.updated_at),
            satisfaction: satisfactionOf(await deps.satisfaction?.find(row.id)),
            answered_by_team: messages.some((m) => m.from === 'agent'),
            customer_context: await deps.customerContext.of(row),
            // The chat channels' messages in order: the customer's, the bot's (with its source) and the team's; the
            // team's private notes among them by time (from "note": never the customer's to see).
            messages: withNotes(messages.map((m) => ({
              id: m.id,
              from: m.from,
              text: m.text,
              at: iso(m.at),
              ...(m.source ? { source: m.source } : {}),
              ...(m.from === 'agent' ? { agent: agentOf(m.agent_user_id, m.agent_email ? { email: m.agent_email, name: m.agent_name } : null), status: messageStatus(m.outbound_id ? m.outbound_status : null) } : {}),
              ...(m.outbound_status === 'failed' ? { failure: { http_status: m.http_status, code: m.error_code, reason: m.error_detail } } : {}),
            })), notes),
            turns: turns.map((t) => ({
              id: t.id,
              // A turn is the bot's exchange: the customer's message and the bot's reply.
              from: 'bot',
              ordinal: t.ordinal,
              status: t.status,
              language: t.language,
              customer_message: t.customer_message,
              reply: t.reply,
              source: t.source,
              botlink: t.botlink,
              knowledge: t.knowledge,
              tool_rounds: t.tool_rounds,
              handoff: t.handoff,
              timings: t.timings,
              errors: t.errors,
              started_at: iso(t.started_at),
              ended_at: iso(t.ended_at),
            })),
          },
        };
      },
    }),

    route({
      method: 'get',
      path: '/v1/sessions/{id}/summary',
      tag: 'sessions',
      summary:
        'A short summary for whoever takes the conversation over: `text` written by the language model when one is set (source `ai`), and always the last turns as they were (`last_turns`; without a model, or when it fails, they are the summary: source `last_turns`). ' +
        `The same last message gives the same summary without a new model call; model calls are limited per workspace (${SUMMARY_RATE_LIMIT.burst} at once, then one every ${SUMMARY_RATE_LIMIT.windowMs / SUMMARY_RATE_LIMIT.burst / 1000} s): beyond it 429 rate_limited with Retry-After.`,
      access: 'member',
      responses: {
        200: {
          description: 'The summary.',
          schema: {
            type: 'object',
            required: ['source', 'text', 'last_turns'],
            properties: {
              source: { enum: ['ai', 'last_turns'] },
              text: { type: ['string', 'null'] },
              last_turns: { type: 'array', items: { type: 'object', properties: { from: { enum: ['customer', 'bot', 'agent'] }, text: { type: 'string' } } } },
            },
          },
        },
        404: { description: 'No such session.' },
        429: { description: 'The workspace asked for more new summaries than its budget (rate_limited); error.details.retry_after and Retry-After say when to ask again (seconds).' },
      },
      async handler({ params, principal }) {
        const row = await load(principal.workspaceId, params.id);
        const messages = (await sessions.messages(row.id, null, 10_000)) ?? [];
        // The chat channels' messages; a phone call (or a conversation from before messages were kept) its turns.
        const turns = messages.length > 0 ? [] : await sessions.turns(row.id);
        const lines: SummaryLine[] = messages.length > 0
          ? messages.map((m) => ({ from: m.from, text: m.text }))
          : turns.flatMap((t) => [
              ...(t.customer_message ? [{ from: 'customer' as const, text: t.customer_message }] : []),
              ...(t.reply ? [{ from: 'bot' as const, text: t.reply }] : []),
            ]);
        const lastId = messages.at(-1)?.id ?? turns.at(-1)?.id ?? null;
        // The model's own deadline (LLM_TIMEOUT_MS) bounds the wait.
        const summary = await deps.summaries.of({ workspaceId: row.workspace_id, sessionId: row.id, language: row.language, lastId }, lines);
        return { status: 200, body: summary };
      },
    }),

    route({
      method: 'get',
      path: '/v1/sessions/{id}/events',
      tag: 'sessions',
      summary:
        'Live updates as Server-Sent Events: turn_started, reply_piece (a spoken sentence of a streamed phone reply), reply, turn_completed, turn_cancelled, state, handled_by (who handles it changed), message (a chat message: the customer\'s, the bot\'s or an agent\'s), message_status (an agent\'s WhatsApp message was sent, delivered, read or failed), note (a private note of the team, new or edited: the note with edited_at), note_deleted (note_id). The stream ends with an `end` event within seconds of its token being revoked or expiring.',
      access: 'member',
      responses: {
        200: { description: 'The event stream.', contentType: 'text/event-stream' },
        404: { description: 'No such session.' },
        429: { description: 'The user (all their tokens together) or the workspace already holds its most open streams.' },
      },
      async handler({ req, res, params, principal }) {
        const row = await load(principal.workspaceId, params.id);
        await serveEventStream(req, res, principal, streams, (send) => {
          send('state', { sessionId: row.id, state: row.state, status: row.status, turn_count: row.turn_count });
          return runtime.subscribe(row.id, (event) => send(event.type, event));
        });
        return { status: 200 };
      },
    }),
  ];
}

/**
 * The team switch, kept for API clients (the dashboard sets each person's presence instead: PUT /v1/me/presence), and
 * whether a human handoff would reach a person now.
 */
function teamRoutes(deps: SessionRoutesDeps): RouteDefinition[] {
  const teamSchema = {
    type: 'object',
    required: ['available', 'available_now'],
    properties: {
      available: { type: 'boolean', description: 'Whether someone of the team is available (GET /v1/team/presence), the team hours aside.' },
      available_now: { type: 'boolean', description: 'Whether a human handoff reaches a person now, on every channel: someone available, within the team hours when set.' },
    },
  };

  return [
    route({
      method: 'get',
      path: '/v1/team',
      tag: 'team',
      summary: 'Whether someone of the team is available, and whether a human handoff reaches a person now (within the team hours).',
      access: 'member',
      responses: { 200: { description: 'The team state.', schema: teamSchema } },
      async handler({ principal }) {
        const state = await deps.team(principal.workspaceId);
        return { status: 200, body: { available: state.available, available_now: state.availableNow } };
      },
    }),

    route<{ available: boolean }>({
      method: 'put',
      path: '/v1/team',
      tag: 'team',
      summary:
        'Deprecated, kept for API clients: the team is available while someone of it is (PUT /v1/me/presence). available true makes you available; false makes everyone of the workspace who is available away (the team closes). Every role.',
      access: 'member',
      body: { type: 'object', required: ['available'], additionalProperties: false, properties: { available: { type: 'boolean' } } },
      responses: { 200: { description: 'Saved; the team state now.', schema: teamSchema } },
      async handler({ body, principal }) {
        await deps.switchTeam(principal, body.available);
        const state = await deps.team(principal.workspaceId);
        return { status: 200, body: { available: state.available, available_now: state.availableNow } };
      },
    }),
  ];
}

/** The team's follow-ups: forwarded questions and human handoffs that could not connect. */
function notificationRoutes(deps: SessionRoutesDeps): RouteDefinition[] {
  const { sessions } = deps;
  return [
    route({
      method: 'get',
      path: '/v1/notifications',
      tag: 'team',
      summary: 'Follow-ups for the team: forwarded questions and human handoffs that could not connect; and yours alone: a colleague\'s private note that @mentions you (kind mention).',
      access: 'member',
      responses: {
        200: {
          description: 'Notifications, newest first.',
          schema: {
            type: 'object',
            properties: {
              notifications: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    id: { type: 'string' },
                    kind: { type: 'string' },
                    session_id: { type: ['string', 'null'] },
                    message: { type: 'string' },
                    created_at: { type: 'string', format: 'date-time' },
                    read_at: { type: ['string', 'null'], format: 'date-time' },
                    channel: { enum: ['phone', 'whatsapp', 'webchat', null], description: 'The channel of its conversation; null without one.' },
                    answered_by_team: { type: 'boolean', description: 'Whether a person of the team wrote in its conversation (a chat answered in the Inbox).' },
                    label: { type: ['string', 'null'], description: "Its conversation's name: the customer's name, email or number, else the first words they wrote; null without a conversation." },
                  },
                },
              },
            },
          },
        },
      },
      async handler({ principal }) {
        const rows = await sessions.notifications(principal.workspaceId, 100, principal.userId);
        // The channel says the words (a caller is called back; a chat is answered in the chat).
        const ids = rows.flatMap((n) => (n.session_id ? [n.session_id] : []));
        const about = await deps.customerContext.sessionFacts(principal.workspaceId, ids);
        const labels = new Map((await sessions.labelFacts(principal.workspaceId, ids)).map((f) => [f.id, f]));
        return {
          status: 200,
          body: { notifications: rows.map((n) => ({
            id: n.id,
            kind: n.kind,
            session_id: n.session_id,
            message: n.message,
            created_at: iso(n.created_at),
            read_at: n.read_at ? iso(n.read_at) : null,
            channel: n.session_id ? (about.get(n.session_id)?.channel ?? null) : null,
            label: n.session_id && labels.has(n.session_id) ? conversationLabel(labels.get(n.session_id)!) : null,
            answered_by_team: n.session_id ? (about.get(n.session_id)?.answered_by_team ?? false) : false,
          })) },
        };
      },
    }),

    route({
      method: 'post',
      path: '/v1/notifications/{id}/read',
      tag: 'team',
      summary: 'Mark a notification done (the follow-up is handled); doing it again keeps the first time.',
      access: 'member',
      responses: { 204: { description: 'Marked.' }, 404: { description: 'No such notification.' } },
      async handler({ params, principal }) {
        if (!(await sessions.markNotificationRead(principal.workspaceId, params.id!, new Date()))) throw notFound('The notification');
        return { status: 204 };
      },
    }),
  ];
}

/** The team's notes placed among the messages by time; a note as old as a message comes after it. */
function withNotes<M extends { at: string }>(messages: M[], notes: { at: string }[]): (M | { at: string })[] {
  if (notes.length === 0) return messages;
  const out: (M | { at: string })[] = [];
  let n = 0;
  for (const m of messages) {
    while (n < notes.length && notes[n]!.at < m.at) out.push(notes[n++]!);
    out.push(m);
  }
  return [...out, ...notes.slice(n)];
}

/** The session's `satisfaction`: the answer after a close, or null (none asked, or not answered). */
function satisfactionOf(row: Satisfaction | undefined): { score: number; comment?: string; at: string } | null {
  if (!row || row.score === null || row.answered_at === null) return null;
  return { score: row.score, ...(row.comment ? { comment: row.comment } : {}), at: iso(row.answered_at) };
}

/** The list's preview, stored as JSON text by the query (db/repositories/sessions.repository.ts). */
function lastMessage(json: string | null): { from: string; text: string | null; at: string } | null {
  if (json === null) return null;
  const m = JSON.parse(json) as { from: string; text: string | null; at: string };
  return { from: m.from, text: m.text, at: iso(m.at) };
}

function iso(value: Date | string): string {
  return new Date(value).toISOString();
}
