/**
 * The team's side (docs/interfaces.md, "The team's side"; docs/architecture.md, "Who handles a conversation"): the inbox
 * views and their live changes, take-over, hand-back, close, an agent's message to the customer and its retry, and
 * the inbox's one setting (handback_after_minutes). Every role works the inbox; the setting is for owners and admins.
 */
import type { StreamGuard } from '../../auth/stream-guard.ts';
import { notFound } from '../../errors.ts';
import type { InboxService } from '../../inbox/inbox-service.ts';
import type { PresenceChange } from '../../inbox/presence.ts';
import type { Principal } from '../../../db/repositories/accounts.repository.ts';
import { AGENT_MESSAGE_RATE_LIMIT, MAX_HANDBACK_AFTER_MINUTES } from '../../inbox/limits.ts';
import { isUuid } from '../../ids.ts';
import type { InboxEvents } from '../../sessions/inbox-events.ts';
import { route, type JsonSchema, type RouteDefinition } from '../route.ts';
import { assignedToSchema } from './presence.ts';
import { serveEventStream } from '../event-stream.ts';

const views = ['waiting', 'mine', 'open', 'followups'] as const;

const agentSchema: JsonSchema = {
  type: ['object', 'null'],
  properties: { user_id: { type: 'string', format: 'uuid' }, email: { type: 'string' }, name: { type: ['string', 'null'] } },
};
const conversationSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'channel', 'customer', 'handled_by', 'agent', 'waiting_since', 'last_message', 'customer_last_message'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'The session id (GET /v1/sessions/{id}).' },
    channel: { enum: ['phone', 'whatsapp', 'webchat'] },
    customer: { type: 'object' },
    label: { type: 'string', description: "The conversation's name: the customer's name, email or number, else the first words of their first message (plain text)." },
    handled_by: { enum: ['bot', 'waiting', 'agent'] },
    agent: agentSchema,
    waiting_since: { type: ['string', 'null'], format: 'date-time' },
    last_message: {
      type: ['object', 'null'],
      properties: { from: { enum: ['customer', 'bot', 'agent'] }, text: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
    },
    assigned_to: assignedToSchema,
    overdue: { type: 'boolean', description: 'Waiting longer than the first-reply target (FIRST_REPLY_TARGET_MINUTES, default 5).' },
    customer_last_message: {
      type: ['object', 'null'],
      description: "The customer's own last words (last_message may be the bot's or the team's); null before the customer wrote.",
      properties: { text: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
    },
  },
};
const settingsSchema: JsonSchema = {
  type: 'object',
  properties: {
    handback_after_minutes: { type: ['integer', 'null'], description: 'A waiting conversation nobody took goes back to the bot after this many minutes; null: never.' },
    first_reply_target_minutes: { type: 'integer', description: 'Read only (FIRST_REPLY_TARGET_MINUTES): a conversation waiting longer is overdue.' },
    email: {
      type: 'object',
      properties: { configured: { type: 'boolean', description: 'Read only: SMTP_URL is set, so an agent\'s reply to a web chat visitor who left (and gave an email) is emailed too.' } },
    },
  },
};
const chatOnly = { 422: { description: 'A phone session: the phone keeps its transfer (code phone_session).' } };
const agentMessageEverySeconds = AGENT_MESSAGE_RATE_LIMIT.windowMs / AGENT_MESSAGE_RATE_LIMIT.burst / 1000;
const agentPace = {
  429: { description: 'Faster than the agent\'s budget in this conversation (rate_limited); error.details.retry_after and Retry-After say when to send again (seconds).' },
};

export function inboxRoutes(deps: {
  inbox: InboxService;
  events: Pick<InboxEvents, 'subscribe'>;
  streams: StreamGuard;
  /** A note's @mentions of the signed-in user (src/inbox/notes.ts), sent on the same stream as `mention`. */
  mentions?: (userId: string, listener: (mention: unknown) => void) => () => void;
  /**
   * An open stream is an open dashboard: it keeps its user's "available" from lapsing, and it hears the presence
   * changes of the workspace's people as `presence` (src/inbox/presence.ts).
   */
  presence?: { opened(principal: Principal): () => void; subscribe(workspaceId: string, listener: (change: PresenceChange) => void): () => void };
}): RouteDefinition[] {
  const { inbox, streams } = deps;
  return [
    route({
      method: 'get',
      path: '/v1/inbox',
      tag: 'inbox',
      summary: 'The team\'s inbox: waiting (a person was asked for, nobody took it; oldest first), mine (held by you), open (every active WhatsApp and web chat conversation), followups (the team follows up); the others newest first.',
      access: 'member',
      query: { view: { type: 'string', enum: [...views], description: 'Default waiting.' } },
      responses: { 200: { description: 'The conversations.', schema: { type: 'object', properties: { conversations: { type: 'array', items: conversationSchema } } } } },
      async handler({ req, principal }) {
        const view = ((req.query as Record<string, string | undefined>).view ?? 'waiting') as (typeof views)[number];
        return { status: 200, body: { conversations: await inbox.list(principal, view) } };
      },
    }),

    route({
      method: 'get',
      path: '/v1/inbox/events',
      tag: 'inbox',
      summary: 'Live changes of the inbox as Server-Sent Events: `conversation` (who handles it changed, a message was added, or it was assigned: reason handled_by, message or assigned) with the conversation\'s id, handled_by, agent, waiting_since and last_message, and assigned_to on an assignment; `mention` (a colleague\'s private note named you: note_id, session_id, by, text, at); `presence` (a person of the workspace became available, away or offline, by their choice, by PUT /v1/team, or lapsed without an open dashboard: user_id, name, status). Ends with an `end` event when the token is revoked or expires.',
      access: 'member',
      responses: {
        200: { description: 'The event stream.', contentType: 'text/event-stream' },
        429: { description: 'The user or the workspace already holds its most open streams.' },
      },
      async handler({ req, res, principal }) {
        await serveEventStream(req, res, principal, streams, (send) => {
          res.write(': inbox\n\n');
          const stopMentions = deps.mentions?.(principal.userId, (mention) => send('mention', mention)) ?? (() => {});
          const closeDashboard = deps.presence?.opened(principal) ?? (() => {});
          const stopPresence = deps.presence?.subscribe(principal.workspaceId, (change) => send('presence', change)) ?? (() => {});
          const stopChanges = deps.events.subscribe(principal.workspaceId, (change) =>
            send('conversation', {
              id: change.sessionId,
              channel: change.channel,
              reason: change.reason,
              handled_by: change.handledBy,
              agent: change.agent,
              waiting_since: change.waitingSince,
              last_message: change.lastMessage,
              ...(change.assignedTo === undefined ? {} : { assigned_to: change.assignedTo }),
            }),
          );
          return () => {
            stopChanges();
            stopMentions();
            stopPresence();
            closeDashboard();
          };
        });
        return { status: 200 };
      },
    }),

    route({
      method: 'get',
      path: '/v1/inbox/settings',
      tag: 'inbox',
      summary: 'The inbox\'s setting: handback_after_minutes.',
      access: 'member',
      responses: { 200: { description: 'The setting.', schema: settingsSchema } },
      async handler({ principal }) {
        return { status: 200, body: await inbox.settings(principal.workspaceId) };
      },
    }),

    route<{ handback_after_minutes: number | null }>({
      method: 'put',
      path: '/v1/inbox/settings',
      tag: 'inbox',
      summary: `A waiting conversation nobody took goes back to the bot after handback_after_minutes (1..${MAX_HANDBACK_AFTER_MINUTES}; null: never, the default), and the customer is told so in their language. Applies to conversations that start waiting afterwards.`,
      access: 'manager',
      body: {
        type: 'object',
        required: ['handback_after_minutes'],
        additionalProperties: false,
        properties: { handback_after_minutes: { type: ['integer', 'null'], minimum: 1, maximum: MAX_HANDBACK_AFTER_MINUTES } },
      },
      responses: { 200: { description: 'Saved.', schema: settingsSchema } },
      async handler({ body, principal }) {
        return { status: 200, body: await inbox.putSettings(principal.workspaceId, body.handback_after_minutes) };
      },
    }),

    route({
      method: 'post',
      path: '/v1/sessions/{id}/takeover',
      tag: 'inbox',
      summary: 'Take the conversation over (from bot or waiting, on WhatsApp and web chat): the bot and the integrator stop answering; you answer with POST /v1/sessions/{id}/messages. Exactly one of two users at once gets it.',
      access: 'member',
      responses: {
        200: { description: 'Yours.', schema: { type: 'object', properties: { handled_by: { const: 'agent' }, agent: agentSchema } } },
        404: { description: 'No such session.' },
        409: { description: 'Another user holds it: error.code `taken`, error.holder.' },
        ...chatOnly,
      },
      async handler({ params, principal }) {
        return { status: 200, body: await inbox.takeover(principal, params.id!) };
      },
    }),

    route<{ text: string }>({
      method: 'post',
      path: '/v1/sessions/{id}/messages',
      tag: 'inbox',
      summary:
        'The holder\'s message to the customer: on WhatsApp through the Graph API with retries (status follows Meta\'s status webhooks), on web chat to the widget\'s long poll. At most 4,096 characters on WhatsApp, 2,000 on web chat. ' +
        `At most ${AGENT_MESSAGE_RATE_LIMIT.burst} at once per agent and conversation, then one a ${agentMessageEverySeconds === 1 ? 'second' : `${agentMessageEverySeconds} s`} (retries included): beyond it 429 rate_limited with Retry-After.`,
      access: 'member',
      body: { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string' } } },
      responses: {
        201: {
          description: 'Stored (and queued on WhatsApp).',
          schema: { type: 'object', properties: { message: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, status: { enum: ['queued', 'sent', 'delivered', 'read', 'failed'] } } } } },
        },
        404: { description: 'No such session.' },
        409: { description: 'You do not hold the conversation (not_holder).' },
        422: { description: 'Empty or too long (invalid_message), more than 24 h after the customer\'s last WhatsApp message (whatsapp_window_closed), or a phone session (phone_session).' },
        ...agentPace,
      },
      async handler({ body, params, principal }) {
        return { status: 201, body: await inbox.sendMessage(principal, params.id!, body.text) };
      },
    }),

    route({
      method: 'post',
      path: '/v1/sessions/{id}/messages/{message_id}/retry',
      tag: 'inbox',
      summary:
        'Send a failed WhatsApp message of the team again (its status goes back to queued): the conversation\'s holder, or an owner or admin. ' +
        'Takes from the same budget as POST /v1/sessions/{id}/messages.',
      access: 'member',
      params: { message_id: { type: 'string', format: 'uuid' } },
      responses: {
        200: { description: 'Queued again.', schema: { type: 'object', properties: { message: { type: 'object' } } } },
        404: { description: 'No such session or message.' },
        409: { description: 'The message has not failed (conflict), or you are an agent who does not hold the conversation (not_holder).' },
        422: { description: 'More than 24 h after the customer\'s last message (whatsapp_window_closed), or a phone session.' },
        ...agentPace,
      },
      async handler({ params, principal }) {
        if (!isUuid(params.message_id ?? '')) throw notFound('The message');
        return { status: 200, body: await inbox.retry(principal, params.id!, params.message_id!) };
      },
    }),

    route({
      method: 'post',
      path: '/v1/sessions/{id}/handback',
      tag: 'inbox',
      summary: 'Give the conversation back to the bot (the holder, or an owner or admin; anyone while it waits).',
      access: 'member',
      responses: {
        200: { description: 'The bot answers again.', schema: { type: 'object', properties: { handled_by: { const: 'bot' } } } },
        404: { description: 'No such session.' },
        409: { description: 'Another user holds it (not_holder).' },
        ...chatOnly,
      },
      async handler({ params, principal }) {
        return { status: 200, body: await inbox.handback(principal, params.id!) };
      },
    }),

    route({
      method: 'post',
      path: '/v1/sessions/{id}/close',
      tag: 'inbox',
      summary: 'Close the conversation: it leaves the inbox (status ended) and the bot answers whatever the customer writes next.',
      access: 'member',
      responses: {
        200: { description: 'Closed.', schema: { type: 'object', properties: { handled_by: { const: 'bot' }, status: { const: 'ended' } } } },
        404: { description: 'No such session.' },
        409: { description: 'Another user holds it (not_holder).' },
        ...chatOnly,
      },
      async handler({ params, principal }) {
        return { status: 200, body: await inbox.close(principal, params.id!) };
      },
    }),
  ];
}
