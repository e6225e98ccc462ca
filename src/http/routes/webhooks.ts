/**
 * Outgoing webhook settings, the test button and the delivery log (docs/interfaces.md: Dashboard API; protocol §6). Owners
 * and admins only (protocol §5.6).
 */
import { AppError } from '../../errors.ts';
import { subscribableEvents } from '../../webhooks/events.ts';
import { MAX_LIST_LIMIT } from '../../limits.ts';
import { pageQuery, readPage } from '../pagination.ts';
import type { WebhookService } from '../../webhooks/webhook-service.ts';
import { route, type RouteDefinition } from '../route.ts';

const statuses = ['pending', 'succeeded', 'failed', 'cancelled'] as const;
/** `{event}`: one of the events a URL is set for (which also keeps /v1/webhooks/deliveries and /test apart from it). */
const eventParam = { event: { type: 'string', enum: [...subscribableEvents] } };

const endpointSchema = {
  type: 'object',
  properties: {
    event: { enum: [...subscribableEvents] },
    url: { type: 'string' },
    secret_hint: { type: 'string', description: 'whsec_… and the last four characters.' },
    enabled: { type: 'boolean' },
    disabled_at: { type: ['string', 'null'], format: 'date-time' },
    disabled_reason: { type: ['string', 'null'], description: 'Why deliveries stopped: 410 Gone, or 5 days without a success.' },
    last_success_at: { type: ['string', 'null'], format: 'date-time' },
    last_failure_at: { type: ['string', 'null'], format: 'date-time' },
    failing_since: { type: ['string', 'null'], format: 'date-time' },
    previous_secret_expires_at: { type: ['string', 'null'], format: 'date-time', description: 'After a rotation: until when the previous secret signs as well.' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    secret: { type: 'string', description: 'Only in the answer that made it (first PUT, rotation): the whsec_ secret, shown this once.' },
  },
};

const deliverySchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    webhook_id: { type: 'string', description: 'The webhook-id header of every attempt.' },
    event: { type: 'string' },
    kind: { enum: ['event', 'test'] },
    status: { enum: [...statuses] },
    attempt_count: { type: 'integer' },
    next_attempt_at: { type: ['string', 'null'] },
    last_status: { type: ['integer', 'null'] },
    last_error: { type: ['string', 'null'] },
    created_at: { type: 'string' },
    completed_at: { type: ['string', 'null'] },
    payload: { type: 'object' },
    attempts: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          attempt: { type: 'integer' },
          started_at: { type: 'string' },
          url: { type: 'string' },
          status: { enum: ['succeeded', 'failed'] },
          http_status: { type: ['integer', 'null'] },
          latency_ms: { type: 'integer' },
          error: { type: ['string', 'null'] },
          response_excerpt: { type: ['string', 'null'], description: 'The first 4 KB of the answer.' },
        },
      },
    },
  },
};

export function webhookRoutes(webhooks: WebhookService): RouteDefinition[] {
  return [
    route({
      method: 'get',
      path: '/v1/webhooks',
      tag: 'webhooks',
      summary: 'The URL set per event, a hint of its secret, whether it is enabled (and why not), and its last success.',
      access: 'manager',
      responses: { 200: { description: 'The webhooks.', schema: { type: 'object', properties: { webhooks: { type: 'array', items: endpointSchema } } } } },
      async handler({ principal }) {
        return { status: 200, body: { webhooks: await webhooks.list(principal.workspaceId) } };
      },
    }),

    route<{ url: string }>({
      method: 'put',
      path: '/v1/webhooks/{event}',
      tag: 'webhooks',
      summary:
        'Set the URL (https, public) for new_chat, escalation or new_lead. The first time a whsec_ secret is made and shown in this answer only; later the secret is kept, and a disabled webhook is enabled again.',
      access: 'manager',
      params: eventParam,
      body: { type: 'object', required: ['url'], additionalProperties: false, properties: { url: { type: 'string', minLength: 1, maxLength: 2048 } } },
      responses: {
        200: { description: 'Saved; `secret` only when new.', schema: endpointSchema },
        404: { description: 'Not one of the events.' },
        422: { description: 'The URL is not https and public (the reason is in the error).' },
      },
      async handler({ body, params, principal }) {
        return { status: 200, body: await webhooks.put(principal.workspaceId, params.event ?? '', body) };
      },
    }),

    route({
      method: 'post',
      path: '/v1/webhooks/{event}/secret',
      tag: 'webhooks',
      summary: 'Rotate the secret: a new one, shown once; for 24 hours every delivery is signed with the new and the previous secret.',
      access: 'manager',
      params: eventParam,
      responses: { 200: { description: 'The new secret, this once.', schema: endpointSchema }, 404: { description: 'No webhook for the event.' } },
      async handler({ params, principal }) {
        return { status: 200, body: await webhooks.rotateSecret(principal.workspaceId, params.event ?? '') };
      },
    }),

    route({
      method: 'delete',
      path: '/v1/webhooks/{event}',
      tag: 'webhooks',
      summary: 'Remove the webhook of the event; deliveries waiting for it are cancelled (the log keeps them).',
      access: 'manager',
      params: eventParam,
      responses: { 204: { description: 'Removed.' }, 404: { description: 'No webhook for the event.' } },
      async handler({ params, principal }) {
        await webhooks.remove(principal.workspaceId, params.event ?? '');
        return { status: 204 };
      },
    }),

    route<{ event: string }>({
      method: 'post',
      path: '/v1/webhooks/test',
      tag: 'webhooks',
      summary: "The test button: sends the `test` event ({\"event\":\"test\"}, signed like every delivery) to the URL set for `event` and answers the delivery with its attempt.",
      access: 'manager',
      body: { type: 'object', required: ['event'], additionalProperties: false, properties: { event: { enum: [...subscribableEvents] } } },
      responses: { 200: { description: 'The test delivery and what came back.', schema: deliverySchema }, 404: { description: 'No webhook for the event.' } },
      async handler({ body, principal }) {
        return { status: 200, body: await webhooks.test(principal.workspaceId, body.event) };
      },
    }),

    route({
      method: 'get',
      path: '/v1/webhooks/deliveries',
      tag: 'webhooks',
      summary: `The delivery log, newest first, each with its attempts. Query: event, status (${statuses.join(', ')}), webhook_id, before (ISO time), limit (≤ ${MAX_LIST_LIMIT}).`,
      access: 'manager',
      query: {
        event: { type: 'string', enum: [...subscribableEvents, 'test'] },
        status: { type: 'string', enum: [...statuses] },
        webhook_id: { type: 'string', description: 'The webhook-id of a delivery.' },
        ...pageQuery('Deliveries made before this time (the next_before of the previous answer).'),
      },
      responses: {
        200: {
          description: 'Deliveries.',
          schema: { type: 'object', properties: { deliveries: { type: 'array', items: deliverySchema }, next_before: { type: ['string', 'null'] } } },
        },
      },
      async handler({ req, principal }) {
        const q = req.query as Record<string, string | undefined>;
        if (q.event && q.event !== 'test' && !(subscribableEvents as readonly string[]).includes(q.event)) {
          throw new AppError('validation_failed', `event must be one of ${[...subscribableEvents, 'test'].join(', ')}.`, [{ field: 'event', message: 'unknown event' }]);
        }
        if (q.status && !(statuses as readonly string[]).includes(q.status)) {
          throw new AppError('validation_failed', `status must be one of ${statuses.join(', ')}.`, [{ field: 'status', message: 'is not a known status' }]);
        }
        const { limit, before } = readPage(q);
        const result = await webhooks.deliveries(principal.workspaceId, {
          ...(q.event ? { event: q.event } : {}),
          ...(q.status ? { status: q.status as (typeof statuses)[number] } : {}),
          ...(q.webhook_id ? { webhookId: q.webhook_id } : {}),
          ...(before ? { before } : {}),
          limit,
        });
        return { status: 200, body: result };
      },
    }),

    route({
      method: 'get',
      path: '/v1/webhooks/deliveries/{id}',
      tag: 'webhooks',
      summary: 'One delivery with its attempts.',
      access: 'manager',
      responses: { 200: { description: 'The delivery.', schema: deliverySchema }, 404: { description: 'No such delivery.' } },
      async handler({ params, principal }) {
        return { status: 200, body: await webhooks.delivery(principal.workspaceId, params.id!) };
      },
    }),

    route({
      method: 'post',
      path: '/v1/webhooks/deliveries/{id}/retry',
      tag: 'webhooks',
      summary: 'Manual retry: one more attempt now, with the same webhook-id (a delivery that had succeeded is sent again).',
      access: 'manager',
      responses: {
        202: { description: 'Queued; the delivery as it stands.', schema: deliverySchema },
        404: { description: 'No such delivery.' },
        409: { description: 'Its webhook was deleted or is disabled.' },
      },
      async handler({ params, principal }) {
        return { status: 202, body: await webhooks.retry(principal.workspaceId, params.id!) };
      },
    }),
  ];
}
