/**
 * Website chat (protocol §1.3, §6; docs/interfaces.md: Channels → Website chat; docs/webchat.md).
 * - The widget's routes take the widget key in `X-Widget-Key` (access `widget`); the gate below /v1/webchat/
 *   (src/channels/webchat/widget-gate.ts) has already checked the key, the page's Origin and the rate limit.
 * - Everything about a conversation after its start (its messages, the next message, the lead, the call for the team)
 *   also takes the visitor token that the start answered, in `X-Visitor-Token`.
 * - The widget's settings (`GET|PUT /v1/webchat`, the allowed web origins) are for owners and admins.
 */
import type { Request } from 'express';
import { primaryLanguage } from '../../text/language.ts';
import type { WebchatService } from '../../channels/webchat/webchat-service.ts';
import {
  MAX_ALLOWED_ORIGINS,
  MAX_EMAIL_CHARS,
  MAX_MESSAGE_CHARS,
  MAX_NAME_CHARS,
  MAX_ORIGIN_CHARS,
  MAX_PAGE_URL_CHARS,
  MAX_PHONE_CHARS,
  MAX_POLLS_PER_ADDRESS,
  MAX_POLLS_PER_CONVERSATION,
  ORIGIN_PATTERN,
  PAGE_URL_PATTERN,
  PHONE_PATTERN,
} from '../../channels/webchat/limits.ts';
import { AppError } from '../../errors.ts';
import { VISITOR_TOKEN_HEADER } from '../../channels/webchat/widget-gate.ts';
import { MAX_POLL_WAIT_SECONDS, MAX_TIME_ZONE_CHARS, TIME_ZONE_PATTERN } from '../../inbox/limits.ts';
import { isTimeZone } from '../../inbox/customer-time-zone.ts';
import { route, type JsonSchema, type RouteDefinition } from '../route.ts';

const visitorText = (what: string): JsonSchema => ({
  type: 'string',
  minLength: 1,
  maxLength: MAX_MESSAGE_CHARS,
  pattern: '\\S',
  description: `${what}; at most ${MAX_MESSAGE_CHARS} characters (protocol §8).`,
});
const language: JsonSchema = {
  type: 'string',
  pattern: '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$',
  description: 'The page\'s language (nl, en, nl-BE); default: the browser\'s Accept-Language, then the conversation\'s.',
};
const reply: JsonSchema = {
  type: ['string', 'null'],
  description: 'The answer for the visitor; null only when a newer message of the visitor replaced this turn (its request carries the answer).',
};
const widgetErrors = {
  403: { description: 'The request has no Origin, or the page\'s Origin is not one of the workspace\'s allowed origins (PUT /v1/webchat).' },
  429: { description: 'Too many requests from this client address, or into this conversation; see Retry-After (seconds).' },
};
/** The writes and reads of a conversation after its start: the visitor token (docs/webchat.md, "The visitor token"). */
const conversationErrors = {
  ...widgetErrors,
  404: { description: 'No such conversation in the widget key\'s workspace, or X-Visitor-Token is missing or not this conversation\'s (nothing is changed).' },
};
const VISITOR_TOKEN_NOTE = 'Needs the conversation\'s X-Visitor-Token (answered by POST /v1/webchat/conversations).';
const settingsSchema: JsonSchema = {
  type: 'object',
  properties: {
    allowed_origins: { type: 'array', items: { type: 'string' } },
    enabled: { type: 'boolean', description: 'The switch: off, visitors are told the chat is closed.' },
    updated_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

/** PUT /v1/webchat; `described`: with the pattern of an origin. */
const originsBody = (described: boolean): JsonSchema => ({
  type: 'object',
  required: ['allowed_origins'],
  additionalProperties: false,
  properties: {
    allowed_origins: {
      type: 'array',
      maxItems: MAX_ALLOWED_ORIGINS,
      items: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_ORIGIN_CHARS,
        ...(described ? { pattern: ORIGIN_PATTERN, description: 'A web origin: http(s), a host, an optional port; no path.' } : {}),
      },
    },
    enabled: { type: 'boolean', description: 'Switch the chat on or off; absent: unchanged (on for a first save).' },
  },
});

/** The language of this request: the body's, else the browser's first Accept-Language, else none (keep the conversation's). */
function languageOf(req: Request, given: string | undefined): string | null {
  const tag = given ?? req.get('accept-language')?.split(',', 1)[0]?.split(';', 1)[0];
  const primary = tag ? primaryLanguage(tag) : '';
  return /^[a-z]{2}$/.test(primary) ? primary : null;
}

/**
 * protocol §6 page_url: a URL; we take http(s) pages only, with a host, and keep it without its query string and
 * fragment: those carry sign-in tokens, order numbers and tracking ids, which would be stored and sent on in the
 * new_chat webhook (docs/webchat.md).
 */
function pageUrl(text: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '') {
    throw new AppError('validation_failed', 'page_url must be an http(s) URL.', [{ field: 'page_url', message: 'must be an http(s) URL' }]);
  }
  return text.split(/[?#]/, 1)[0]!;
}

/**
 * `context`: keeps the visitor's browser time zone for the customer panel (src/inbox/customer-context.ts); without it
 * the field is accepted and not kept.
 */
export function webchatRoutes(
  webchat: WebchatService,
  context?: { keepTimeZone(workspaceId: string, conversationId: string, timeZone: string): Promise<void> },
): RouteDefinition[] {
  return [
    route<{ visitor_message: string; page_url: string; language?: string; time_zone?: string }>({
      method: 'post',
      path: '/v1/webchat/conversations',
      tag: 'webchat',
      summary: 'A visitor starts a conversation: emits new_chat, and answers from the knowledge base (or with the team sentence when the visitor asks for a person).',
      access: 'widget',
      body: {
        type: 'object',
        required: ['visitor_message', 'page_url'],
        additionalProperties: false,
        properties: {
          visitor_message: visitorText('The visitor\'s first message'),
          page_url: { type: 'string', format: 'uri', pattern: PAGE_URL_PATTERN, maxLength: MAX_PAGE_URL_CHARS, description: 'The page the chat was opened on: an http(s) URL with a host; kept and sent on (new_chat) without its query string and fragment.' },
          language,
          time_zone: {
            type: 'string',
            maxLength: MAX_TIME_ZONE_CHARS,
            pattern: TIME_ZONE_PATTERN,
            description:
              'The visitor\'s browser time zone, an IANA name (`Europe/Amsterdam`; `Intl.DateTimeFormat().resolvedOptions().timeZone`): the team sees the visitor\'s local time. ' +
              'Optional; a name written as a zone but unknown to the service is not kept (a browser may know a zone newer than ours), and the chat starts all the same.',
          },
        },
      },
      responses: {
        201: {
          description: 'Started.',
          schema: {
            type: 'object',
            properties: {
              conversation_id: { type: 'string', format: 'uuid' },
              visitor_token: { type: 'string', description: 'The visitor\'s key to the conversation (X-Visitor-Token on its messages, the next message, the lead and the call for the team); answered only here, stored only as a hash.' },
              reply,
            },
          },
        },
        ...widgetErrors,
      },
      async handler({ req, body, workspaceId }) {
        const started = await webchat.start(
          workspaceId,
          { visitorMessage: body.visitor_message, pageUrl: pageUrl(body.page_url), language: languageOf(req, body.language) },
        );
        if (body.time_zone !== undefined && isTimeZone(body.time_zone)) await context?.keepTimeZone(workspaceId, started.conversation_id, body.time_zone);
        return { status: 201, body: started };
      },
    }),

    route<{ message: string; language?: string }>({
      method: 'post',
      path: '/v1/webchat/conversations/{id}/messages',
      tag: 'webchat',
      summary: `The visitor's next message and its reply. ${VISITOR_TOKEN_NOTE}`,
      access: 'widget',
      body: { type: 'object', required: ['message'], additionalProperties: false, properties: { message: visitorText('The visitor\'s message'), language } },
      responses: {
        200: { description: 'The reply; null also while a person handles the conversation (the message is kept for them).', schema: { type: 'object', properties: { reply } } },
        ...conversationErrors,
      },
      async handler({ req, body, params, workspaceId }) {
        const visitorToken = req.get(VISITOR_TOKEN_HEADER);
        return { status: 200, body: await webchat.message(workspaceId, params.id ?? '', { visitorToken, message: body.message, language: languageOf(req, body.language) }) };
      },
    }),

    route({
      method: 'get',
      path: '/v1/webchat/conversations/{id}/messages',
      tag: 'webchat',
      summary: `The conversation's messages after \`after\` (the visitor's, the bot's and the team's), oldest first, and who handles it. With \`wait\` (0..${MAX_POLL_WAIT_SECONDS} s) a long poll: it answers as soon as a newer message exists; at most ${MAX_POLLS_PER_CONVERSATION} open at once per conversation and ${MAX_POLLS_PER_ADDRESS} per client address on one engine (429 with Retry-After beyond). ${VISITOR_TOKEN_NOTE}`,
      access: 'widget',
      query: {
        after: { type: 'string', format: 'uuid', description: 'The id of the last message the widget has; absent: from the start.' },
        wait: { type: 'integer', minimum: 0, maximum: MAX_POLL_WAIT_SECONDS, description: 'Seconds to wait for a newer message; default 0.' },
      },
      responses: {
        200: {
          description: 'The messages and who handles the conversation.',
          schema: {
            type: 'object',
            required: ['messages', 'handled_by'],
            properties: {
              messages: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['id', 'from', 'text', 'at'],
                  properties: {
                    id: { type: 'string', format: 'uuid' },
                    from: { enum: ['customer', 'bot', 'agent'] },
                    text: { type: 'string' },
                    at: { type: 'string', format: 'date-time' },
                    agent_name: { type: 'string', description: 'The colleague who wrote it (from agent only).' },
                  },
                },
              },
              handled_by: { enum: ['bot', 'waiting', 'agent'] },
              typing: { enum: ['agent', null], description: 'A colleague is typing a reply (POST /v1/sessions/{id}/typing); the poll also answers when this changes.' },
              survey: {
                enum: ['ask', 'answered', null],
                description: 'ask: a colleague closed the conversation and the satisfaction question waits for POST …/satisfaction; answered; null: none was put. The poll also answers when this changes.',
              },
            },
          },
        },
        400: { description: '`after` is not a message of this conversation.' },
        ...conversationErrors,
        429: { description: `Too many requests from this client address, or into this conversation; or already ${MAX_POLLS_PER_CONVERSATION} open long polls on this conversation or ${MAX_POLLS_PER_ADDRESS} from this address. See Retry-After (seconds).` },
      },
      async handler({ req, res, params, workspaceId }) {
        const q = req.query as Record<string, string | undefined>;
        const aborted = new AbortController();
        res.on('close', () => aborted.abort());
        let answer;
        try {
          answer = await webchat.messages(workspaceId, params.id ?? '', {
            visitorToken: req.get(VISITOR_TOKEN_HEADER),
            after: q.after ?? null,
            waitMs: Number(q.wait ?? 0) * 1_000,
            clientAddress: req.ip ?? '',
            signal: aborted.signal,
          });
        } catch (err) {
          // Too many open long polls (src/channels/webchat/long-polls.ts): when to try again, as the gate says it.
          if (err instanceof AppError && err.code === 'rate_limited') res.setHeader('Retry-After', String((err.details as { retry_after_seconds: number }).retry_after_seconds));
          throw err;
        }
        return { status: 200, body: answer, headers: { 'cache-control': 'no-store' } };
      },
    }),

    route<{ name: string; email: string; phone?: string }>({
      method: 'post',
      path: '/v1/webchat/conversations/{id}/lead',
      tag: 'webchat',
      summary: `The visitor leaves contact details: saved on the conversation, emits new_lead (again only when they changed). ${VISITOR_TOKEN_NOTE}`,
      access: 'widget',
      body: {
        type: 'object',
        required: ['name', 'email'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: MAX_NAME_CHARS, pattern: '\\S', description: `At most ${MAX_NAME_CHARS} characters (protocol §8).` },
          email: { type: 'string', format: 'email', maxLength: MAX_EMAIL_CHARS, description: `At most ${MAX_EMAIL_CHARS} characters (protocol §8).` },
          phone: { type: 'string', maxLength: MAX_PHONE_CHARS, pattern: PHONE_PATTERN, description: 'May be empty or left out (protocol §6).' },
        },
      },
      responses: {
        200: { description: 'Saved; `recorded` says whether new_lead was emitted (false for the same details again).', schema: { type: 'object', properties: { recorded: { type: 'boolean' } } } },
        ...conversationErrors,
      },
      async handler({ req, body, params, workspaceId }) {
        const visitorToken = req.get(VISITOR_TOKEN_HEADER);
        return { status: 200, body: await webchat.lead(workspaceId, params.id ?? '', { visitorToken, name: body.name, email: body.email, phone: body.phone ?? '' }) };
      },
    }),

    route<{ message?: string }>({
      method: 'post',
      path: '/v1/webchat/conversations/{id}/escalate',
      tag: 'webchat',
      summary: `The visitor asks for the team (the widget's button): emits escalation of type requested, once per conversation; the conversation waits for a colleague in the team's inbox, and the answer says so. ${VISITOR_TOKEN_NOTE}`,
      access: 'widget',
      body: { type: 'object', additionalProperties: false, properties: { message: { type: 'string', maxLength: MAX_MESSAGE_CHARS, description: `For the team; default: the visitor's latest message. At most ${MAX_MESSAGE_CHARS} characters.` } } },
      responses: { 200: { description: 'The team sentence for the visitor.', schema: { type: 'object', properties: { reply: { type: 'string' } } } }, ...conversationErrors },
      async handler({ req, body, params, workspaceId }) {
        const visitorToken = req.get(VISITOR_TOKEN_HEADER);
        return { status: 200, body: await webchat.escalate(workspaceId, params.id ?? '', { visitorToken, message: body.message, language: languageOf(req, undefined) }) };
      },
    }),

    route({
      method: 'get',
      path: '/v1/webchat',
      tag: 'webchat',
      summary: 'The widget\'s settings: the web origins whose pages may use the widget key (none until set).',
      access: 'manager',
      responses: { 200: { description: 'The settings.', schema: settingsSchema } },
      async handler({ workspaceId }) {
        return { status: 200, body: await webchat.settings(workspaceId) };
      },
    }),

    route<{ allowed_origins: string[]; enabled?: boolean }>({
      method: 'put',
      path: '/v1/webchat',
      tag: 'webchat',
      summary: "Replace the allowed web origins (https://shop.example: scheme, host, optional port; a page's address or a bare host is taken as its site's origin) and switch the chat on or off. Browsers on other origins get 403.",
      access: 'manager',
      body: originsBody(false),
      // The origin pattern is described, not validated on mount: parseAllowedOrigins checks each item and names it
      // allowed_origins[1]; test/http/openapi-fuzz.test.ts checks that the pattern admits nothing it refuses.
      describedBody: { contentType: 'application/json', schema: originsBody(true), required: true },
      responses: {
        200: {
          description: "Saved, canonicalised (lowercase, default port dropped, duplicates merged; a page's address or a bare host is taken as its site's origin, and notes say so).",
          schema: { ...settingsSchema, properties: { ...(settingsSchema.properties as JsonSchema), notes: { type: 'array', items: { type: 'string' }, description: 'What was changed in the list as given, in words.' } } },
        },
      },
      async handler({ body, workspaceId }) {
        return { status: 200, body: await webchat.putSettings(workspaceId, body) };
      },
    }),
  ];
}
