/**
 * Customers' data under control (docs/privacy.md):
 *
 * - `GET /v1/audit?before&limit` (owners and admins): the audit log, newest first.
 * - `GET|PUT /v1/workspace/retention` `{days: 1..3650 | null}` (owners): how long conversations are kept.
 * - `POST /v1/privacy/export` and `POST /v1/privacy/erase` with one of `{phone}`, `{email}`, `{whatsapp_id}` (owners):
 *   everything held about one customer, as one JSON document, or erased everywhere; both say what they found.
 */
import { AppError } from '../../errors.ts';
import type { Audit } from '../../privacy/audit.ts';
import { AUDIT_PAGE, RETENTION_DAYS } from '../../privacy/limits.ts';
import type { CustomerData, CustomerKey } from '../../privacy/customer-data.ts';
import type { Retention } from '../../privacy/retention.ts';
import { route, type JsonSchema, type RouteDefinition } from '../route.ts';

export interface PrivacyRouteDeps {
  audit: Audit;
  retention: Retention;
  customers: CustomerData;
}

const retentionSchema: JsonSchema = {
  type: 'object',
  required: ['days'],
  properties: {
    days: {
      type: ['integer', 'null'],
      minimum: RETENTION_DAYS.min,
      maximum: RETENTION_DAYS.max,
      description: `Conversation content is kept this many days (${RETENTION_DAYS.min} to ${RETENTION_DAYS.max}); null: until erased.`,
    },
  },
};

/** Exactly one of the customer's phone number, email or WhatsApp id (one object per key, so a schema says it). */
const customerBody: JsonSchema = {
  type: 'object',
  // The body itself is required (the OpenAPI document says so from a `required` list); which key, the oneOf says.
  required: [],
  oneOf: [
    { type: 'object', additionalProperties: false, required: ['phone'], properties: { phone: { type: 'string', minLength: 3, maxLength: 40, description: 'A phone number as people write it; matched in E.164.' } } },
    { type: 'object', additionalProperties: false, required: ['email'], properties: { email: { type: 'string', minLength: 3, maxLength: 254 } } },
    { type: 'object', additionalProperties: false, required: ['whatsapp_id'], properties: { whatsapp_id: { type: 'string', minLength: 3, maxLength: 40, description: "WhatsApp's id of the customer (their number's digits)." } } },
  ],
};

const saidSchema: JsonSchema = { type: 'string', description: "The counts in an owner's words, as the dashboard and the audit log show them: `1 conversation, 4 messages, 1 website chat`, or `nothing`." };

const foundSchema: JsonSchema = {
  type: 'object',
  description: 'How many rows of each table (docs/privacy.md) were found about the customer; an erasure deletes exactly those.',
  additionalProperties: { type: 'integer' },
};

export function privacyRoutes(deps: PrivacyRouteDeps): RouteDefinition[] {
  const { audit, retention, customers } = deps;
  return [
    route({
      method: 'get',
      path: '/v1/audit',
      tag: 'privacy',
      summary: `The audit log, newest first: sign-ins, users, tokens, the integration, webhooks, channel settings, exports, erasures, retention changes and take-overs, with who, when and from which address (never a secret's value). Query: before (the next_before of the previous page), limit (≤ ${AUDIT_PAGE.max}).`,
      access: 'manager',
      query: {
        before: { type: 'string', pattern: '^[0-9]{1,18}$', description: 'The next_before of the previous page.' },
        limit: { type: 'integer', minimum: 1, maximum: AUDIT_PAGE.max, description: `Default ${AUDIT_PAGE.default}.` },
      },
      responses: {
        200: {
          description: 'A page of entries.',
          schema: {
            type: 'object',
            required: ['entries', 'next_before'],
            properties: {
              entries: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['at', 'user_email', 'ip', 'action', 'target'],
                  properties: {
                    id: { type: 'string' },
                    at: { type: 'string', format: 'date-time' },
                    user_email: { type: ['string', 'null'], description: 'Who acted; null: the operator, or nobody signed in.' },
                    ip: { type: ['string', 'null'] },
                    action: { type: 'string' },
                    target: { type: ['string', 'null'] },
                  },
                },
              },
              next_before: { type: ['string', 'null'], description: 'Pass as before for older entries; null: no more.' },
            },
          },
        },
      },
      async handler({ req, workspaceId }) {
        const q = req.query as Record<string, string | undefined>;
        const limit = q.limit === undefined ? AUDIT_PAGE.default : Number(q.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_PAGE.max) {
          throw new AppError('validation_failed', `limit must be a whole number from 1 to ${AUDIT_PAGE.max}.`, [{ field: 'limit', message: 'is out of range' }]);
        }
        if (q.before !== undefined && !/^[0-9]{1,18}$/.test(q.before)) {
          throw new AppError('validation_failed', 'before must be the next_before of a previous page.', [{ field: 'before', message: 'not a cursor' }]);
        }
        return { status: 200, body: await audit.list(workspaceId, { limit, ...(q.before ? { before: q.before } : {}) }) };
      },
    }),

    route({
      method: 'get',
      path: '/v1/workspace/retention',
      tag: 'privacy',
      summary: 'How long conversation content (turns, messages, customer details, WhatsApp and web chat records, webhook payloads) is kept. Owners only.',
      access: 'owner',
      responses: { 200: { description: 'The retention period.', schema: retentionSchema } },
      async handler({ workspaceId }) {
        return { status: 200, body: { days: await retention.days(workspaceId) } };
      },
    }),

    route<{ days: number | null }>({
      method: 'put',
      path: '/v1/workspace/retention',
      tag: 'privacy',
      summary: `Keep conversation content for days (${RETENTION_DAYS.min} to ${RETENTION_DAYS.max}) or until erased (null). Older content is deleted by the next purge. Owners only.`,
      access: 'owner',
      body: { ...retentionSchema, additionalProperties: false },
      responses: { 200: { description: 'Saved.', schema: retentionSchema } },
      async handler({ body, workspaceId }) {
        await retention.setDays(workspaceId, body.days);
        return { status: 200, body: { days: body.days } };
      },
    }),

    route<CustomerKey>({
      method: 'post',
      path: '/v1/privacy/export',
      tag: 'privacy',
      summary: 'Everything held about one customer of the workspace (by a whole phone number, email or WhatsApp id), as one JSON document, table by table: their sessions with every turn and message, web chats and leads, WhatsApp conversations, messages and raw bodies, webhook payloads and notifications. Owners only.',
      access: 'owner',
      body: customerBody,
      responses: {
        200: {
          description: 'What was found, and the records.',
          schema: { type: 'object', required: ['customer', 'found', 'said', 'data'], properties: { customer: { type: 'object' }, found: foundSchema, said: saidSchema, data: { type: 'object' } } },
        },
        400: { description: 'Not a whole phone number in E.164, WhatsApp id or email (never a part of one).' },
      },
      async handler({ body, workspaceId }) {
        return { status: 200, body: await customers.export(workspaceId, body) };
      },
    }),

    route<CustomerKey>({
      method: 'post',
      path: '/v1/privacy/erase',
      tag: 'privacy',
      summary: 'Erase everything held about one customer of the workspace (by a whole phone number, email or WhatsApp id), in this workspace only: sessions, turns, messages, web chats and leads, WhatsApp records and raw bodies, webhook payloads with their deliveries, notifications and live updates. Owners only; it cannot be undone.',
      access: 'owner',
      body: customerBody,
      responses: {
        200: {
          description: 'What was found and erased.',
          schema: {
            type: 'object',
            required: ['customer', 'found', 'erased', 'said'],
            properties: {
              customer: { type: 'object' },
              found: foundSchema,
              erased: foundSchema,
              said: saidSchema,
              erased_once_processed: { type: 'object', description: "Meta's raw webhook bodies not processed yet: each is deleted as soon as it is.", additionalProperties: { type: 'integer' } },
            },
          },
        },
        400: { description: 'Not a whole phone number in E.164, WhatsApp id or email (never a part of one).' },
      },
      async handler({ body, workspaceId }) {
        return { status: 200, body: await customers.erase(workspaceId, body) };
      },
    }),
  ];
}
