/**
 * Live sessions for the dashboard (docs/interfaces.md): list, one session with its turns (the source of every reply,
 * bot-link outcomes, tool calls, handoffs, where the time went), and a live SSE stream. Every role may read; the
 * team switch is for owners and admins.
 */
import type { SessionsRepository } from '../../../db/repositories/sessions.repository.ts';
import { AppError, notFound } from '../../errors.ts';
import type { StreamGuard } from '../../auth/stream-guard.ts';
import type { SessionRuntime } from '../../sessions/session-runtime.ts';
import { MAX_LIST_LIMIT } from '../../limits.ts';
import { pageQuery, readPage } from '../pagination.ts';
import { displayName } from '../../accounts/display-name.ts';
import { messageStatus } from '../../inbox/inbox-service.ts';
import { SUMMARY_RATE_LIMIT } from '../../inbox/limits.ts';
import type { Summaries, SummaryLine } from '../../inbox/summary.ts';
import { serveEventStream } from '../event-stream.ts';
import { route, type RouteDefinition } from '../route.ts';


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
    last_message: {
      type: ['object', 'null'],
      description: 'In the list: the last chat message, or the last thing the customer said (a preview, as in GET /v1/inbox).',
      properties: { from: { enum: ['customer', 'bot', 'agent'] }, text: { type: ['string', 'null'] }, at: { type: 'string', format: 'date-time' } },
    },
    turn_count: { type: 'integer' },
    updated_at: { type: 'string' },
  },
};

const agentOf = (userId: string | null, email: string | null | undefined) => (userId && email ? { user_id: userId, email, name: displayName(email) } : null);

export interface SessionRoutesDeps {
  sessions: SessionsRepository;
  runtime: SessionRuntime;
  streams: StreamGuard;
  /** The team switch and whether a handoff would connect now (the switch and the team hours). */
  team: (workspaceId: string) => Promise<{ available: boolean; availableNow: boolean }>;
  /** The take-over summaries (src/inbox/summary.ts): kept per last message, their model calls a budget per workspace. */
  summaries: Summaries;
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
        if (q.channel && !['phone', 'whatsapp', 'webchat'].includes(q.channel)) throw new AppError('validation_failed', 'channel must be one of phone, whatsapp, webchat.', [{ field: 'channel', message: 'unknown channel' }]);
        if (q.status && !['active', 'ended'].includes(q.status)) throw new AppError('validation_failed', 'status must be active or ended.', [{ field: 'status', message: 'unknown status' }]);
        if (q.handled_by && !['bot', 'waiting', 'agent'].includes(q.handled_by)) throw new AppError('validation_failed', 'handled_by must be bot, waiting or agent.', [{ field: 'handled_by', message: 'unknown value' }]);
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
              handoff: r.handoff,
              handled_by: r.handled_by,
              agent: agentOf(r.agent_user_id, r.agent_email),
              waiting_since: r.waiting_since ? iso(r.waiting_since) : null,
              last_message: lastMessage(r.last_message),
              turn_count: r.turn_count,
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
      responses: { 200: { description: 'The session.', schema: sessionSummary }, 404: { description: 'No such session.' } },
      async handler({ params, principal }) {
        const row = await load(principal.workspaceId, params.id);
        const turns = await sessions.turns(row.id);
        const messages = (await sessions.messages(row.id, null, 10_000)) ?? [];
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
            agent: agentOf(row.agent_user_id, row.agent_user_id ? await sessions.userEmail(row.agent_user_id) : null),
            waiting_since: row.waiting_since ? iso(row.waiting_since) : null,
            turn_count: row.turn_count,
            created_at: iso(row.created_at),
            updated_at: iso(row.updated_at),
            // The chat channels' messages in order: the customer's, the bot's (with its source) and the team's.
            messages: messages.map((m) => ({
              id: m.id,
              from: m.from,
              text: m.text,
              at: iso(m.at),
              ...(m.source ? { source: m.source } : {}),
              ...(m.from === 'agent' ? { agent: agentOf(m.agent_user_id, m.agent_email), status: messageStatus(m.outbound_id ? m.outbound_status : null) } : {}),
              ...(m.outbound_status === 'failed' ? { failure: { http_status: m.http_status, code: m.error_code, reason: m.error_detail } } : {}),
            })),
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
        'Live updates as Server-Sent Events: turn_started, reply_piece (a spoken sentence of a streamed phone reply), reply, turn_completed, turn_cancelled, state, handled_by (who handles it changed), message (a chat message: the customer\'s, the bot\'s or an agent\'s), message_status (an agent\'s WhatsApp message was sent, delivered, read or failed). The stream ends with an `end` event within seconds of its token being revoked or expiring.',
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

/** The team switch, and whether a human handoff on the phone would connect now. */
function teamRoutes(deps: SessionRoutesDeps): RouteDefinition[] {
  const { sessions } = deps;
  const teamSchema = {
    type: 'object',
    required: ['available', 'available_now'],
    properties: {
      available: { type: 'boolean', description: 'The manual switch.' },
      available_now: { type: 'boolean', description: 'Whether a human handoff on the phone would connect now: the switch, within the team hours when set.' },
    },
  };

  return [
    route({
      method: 'get',
      path: '/v1/team',
      tag: 'team',
      summary: 'The team switch, and whether a human handoff on the phone would connect now.',
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
        'The manual team switch: while available, a human handoff on the phone connects a person. Every role: agents are the ones who start and stop taking calls.',
      access: 'member',
      body: { type: 'object', required: ['available'], additionalProperties: false, properties: { available: { type: 'boolean' } } },
      responses: { 200: { description: 'Saved; the team state now.', schema: teamSchema } },
      async handler({ body, principal }) {
        await sessions.setTeamAvailable(principal.workspaceId, body.available);
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
      summary: 'Follow-ups for the team: forwarded questions and human handoffs that could not connect.',
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
                  },
                },
              },
            },
          },
        },
      },
      async handler({ principal }) {
        const rows = await sessions.notifications(principal.workspaceId, 100);
        return {
          status: 200,
          body: { notifications: rows.map((n) => ({
            id: n.id,
            kind: n.kind,
            session_id: n.session_id,
            message: n.message,
            created_at: iso(n.created_at),
            read_at: n.read_at ? iso(n.read_at) : null,
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

/** The list's preview, stored as JSON text by the query (db/repositories/sessions.repository.ts). */
function lastMessage(json: string | null): { from: string; text: string | null; at: string } | null {
  if (json === null) return null;
  const m = JSON.parse(json) as { from: string; text: string | null; at: string };
  return { from: m.from, text: m.text, at: iso(m.at) };
}

function iso(value: Date | string): string {
  return new Date(value).toISOString();
}
