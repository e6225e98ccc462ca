/**
 * The customer beside a conversation (docs/interfaces.md, "The team's side"; docs/architecture.md, "Who handles a
 * conversation"): the same customer's earlier conversations in this workspace, on any channel. Every role reads them,
 * as every role reads the conversation itself. The panel's facts come with the session (GET /v1/sessions/{id}
 * `customer_context`, src/http/routes/sessions.ts).
 */
import type { CustomerContextService } from '../../inbox/customer-context.ts';
import { MAX_CUSTOMER_HISTORY } from '../../inbox/limits.ts';
import { route, type JsonSchema, type RouteDefinition } from '../route.ts';

const person: JsonSchema = { type: ['object', 'null'], properties: { email: { type: 'string' }, name: { type: ['string', 'null'] } } };

/** The panel's facts, as GET /v1/sessions/{id} answers them. */
export const customerContextSchema: JsonSchema = {
  type: 'object',
  description: 'The customer panel: who the customer is on this channel and what is known of them.',
  properties: {
    channel_id: { type: ['string', 'null'], description: 'The caller\'s number (phone), the WhatsApp id (digits), or the web chat\'s conversation id.' },
    name: { type: ['string', 'null'] },
    email: { type: ['string', 'null'] },
    phone: { type: ['string', 'null'] },
    page_url: { type: ['string', 'null'], description: 'The page a web chat started on, without its query string; null on other channels.' },
    language: { type: ['string', 'null'] },
    time_zone: { type: ['string', 'null'], description: 'The customer\'s IANA time zone: the browser\'s (web chat, when the widget sent it), else the one of their number\'s country when it has one; null when unknown.' },
    time_zone_source: { enum: ['browser', 'phone_number', null] },
  },
};

export function customerContextRoutes(context: CustomerContextService): RouteDefinition[] {
  return [
    route({
      method: 'get',
      path: '/v1/sessions/{id}/history',
      tag: 'sessions',
      summary:
        `The same customer's other conversations in this workspace, on any channel, newest first (at most ${MAX_CUSTOMER_HISTORY}): matched by a whole phone number, email or WhatsApp id ` +
        "of this conversation's customer (a web chat's details the visitor left count). None when the customer is not known by any of them.",
      access: 'member',
      responses: {
        200: {
          description: 'The earlier conversations.',
          schema: {
            type: 'object',
            required: ['conversations'],
            properties: {
              conversations: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['id', 'channel', 'started_at', 'last_message', 'handled_by'],
                  properties: {
                    id: { type: 'string', format: 'uuid', description: 'The session id (GET /v1/sessions/{id}).' },
                    channel: { enum: ['phone', 'whatsapp', 'webchat'] },
                    started_at: { type: 'string', format: 'date-time' },
                    last_message: {
                      type: ['object', 'null'],
                      properties: { from: { enum: ['customer', 'bot', 'agent'] }, text: { type: ['string', 'null'] }, at: { type: 'string', format: 'date-time' } },
                    },
                    handled_by: { enum: ['bot', 'waiting', 'agent'], description: 'Who handles it now.' },
                    agent: { ...person, description: 'The user holding it while handled_by is agent.' },
                    answered_by: { ...person, description: 'The team member who wrote in it last; null when nobody of the team did.' },
                  },
                },
              },
            },
          },
        },
        404: { description: 'No such session in your workspace.' },
      },
      async handler({ params, principal }) {
        return { status: 200, body: await context.history(principal.workspaceId, params.id!) };
      },
    }),
  ];
}
