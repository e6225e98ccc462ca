/**
 * The Overview (docs/analytics.md): how the bot does over a period, read from the hourly roll-ups, the questions it
 * could not answer, and the period's conversations as a file.
 *
 * - `GET /v1/analytics/overview`, `/timeseries`, `/unanswered` (every role: counts, and questions every role can
 *   already read in the conversations).
 * - `GET /v1/exports/conversations?format=csv|jsonl` (owners and admins: customers' details in bulk), streamed.
 */
import type { AnalyticsRepository } from '../../../db/repositories/analytics.repository.ts';
import type { ConversationLabelsRepository } from '../../../db/repositories/conversation-labels.repository.ts';
import type { WorkspaceSettingsRepository } from '../../../db/repositories/workspace-settings.repository.ts';
import type { VisitorRepository } from '../../../db/repositories/visitor.repository.ts';
import { EXPORT_COLUMNS, EXPORT_FORMATS, streamConversations, type ExportFormat } from '../../analytics/export.ts';
import { overview, timeseries, unanswered } from '../../analytics/overview.ts';
import { MAX_HOURLY_DAYS, MAX_PERIOD_DAYS, readBucket, readPeriod, type AnalyticsPeriod } from '../../analytics/period.ts';
import { AppError } from '../../errors.ts';
import { CHANNELS } from '../../channels-and-handoffs.ts';
import { errorSchema, route, type JsonSchema, type RouteContext, type RouteDefinition, type RouteResult } from '../route.ts';

export interface AnalyticsRouteDeps {
  analytics: AnalyticsRepository;
  settings: Pick<WorkspaceSettingsRepository, 'find'>;
  /** Names the unanswered questions' conversations (src/text/conversation-label.ts). */
  labels: Pick<ConversationLabelsRepository, 'labelFacts'>;
  /** The satisfaction answers of a period (db/repositories/visitor.repository.ts); absent: the Overview has none. */
  satisfaction?: Pick<VisitorRepository, 'summary'>;
  now?: () => number;
}

const periodQuery: Record<string, JsonSchema> = {
  from: { type: 'string', format: 'date-time', description: 'Start (ISO time), read at the whole UTC hour below it; default: seven days before `to`.' },
  to: { type: 'string', format: 'date-time', description: `End (ISO time, exclusive), read at the whole UTC hour above it, so a period that ends now includes the current hour; default: the end of the current hour. At most ${MAX_PERIOD_DAYS} days after \`from\`.` },
  channel: { type: 'string', enum: [...CHANNELS], description: 'Only this channel; default all.' },
};
const percentiles: JsonSchema = {
  type: 'object',
  required: ['p50', 'p95'],
  properties: { p50: { type: ['integer', 'null'] }, p95: { type: ['integer', 'null'] } },
  description: 'Milliseconds, read from fixed histogram buckets (docs/analytics.md); null when nothing was measured.',
};
const ANSWERERS = ['integrator', 'knowledge_base', 'ai', 'fallback', 'agent'];
const answeredBy: JsonSchema = {
  type: 'object',
  required: ANSWERERS,
  properties: Object.fromEntries(ANSWERERS.map((k) => [k, { type: 'integer' }])),
};
const badInput = { description: `from not before to, a period over ${MAX_PERIOD_DAYS} days, an unknown channel or bucket.`, schema: errorSchema };

export function analyticsRoutes(deps: AnalyticsRouteDeps): RouteDefinition[] {
  const now = () => new Date(deps.now ? deps.now() : Date.now());
  const timeZoneOf = async (workspaceId: string) => (await deps.settings.find(workspaceId))?.time_zone ?? 'UTC';
  /** The query's period, checked by src/analytics/period.ts (a 400 naming the field otherwise). */
  const periodOf = (query: Record<string, unknown>) => readPeriod(query, now());
  /** A handler that answers what `figures` reads over the query's period. */
  const overPeriod =
    (figures: (analytics: AnalyticsRepository, workspaceId: string, period: AnalyticsPeriod) => Promise<unknown>) =>
    async ({ req, workspaceId }: RouteContext<undefined>): Promise<RouteResult> => ({
      status: 200,
      body: await figures(deps.analytics, workspaceId, periodOf(req.query)),
    });
  return [
    route({
      method: 'get',
      path: '/v1/analytics/overview',
      tag: 'analytics',
      summary: 'The figures of a period: conversations, customer messages, contained and handed over, who answered, first reply time, the endpoint.',
      access: 'member',
      query: periodQuery,
      responses: {
        200: {
          description: 'The figures (docs/analytics.md defines each).',
          schema: {
            type: 'object',
            required: ['conversations', 'customer_messages', 'handed_over', 'contained', 'answered_by', 'first_reply_ms', 'integrator'],
            properties: {
              from: { type: 'string', format: 'date-time' },
              to: { type: 'string', format: 'date-time' },
              conversations: { type: 'integer' },
              customer_messages: { type: 'integer' },
              handed_over: { type: 'integer' },
              contained: { type: 'integer' },
              answered_by: answeredBy,
              first_reply_ms: percentiles,
              first_reply_ms_by_channel: { type: 'object', additionalProperties: percentiles },
              integrator: {
                type: 'object',
                required: ['requests', 'answers', 'no_answer', 'latency_ms', 'down_periods'],
                properties: {
                  requests: { type: 'integer' },
                  answers: { type: 'integer' },
                  no_answer: { type: 'object', required: ['timeout', 'status', 'invalid', 'empty', 'down'], properties: Object.fromEntries(['timeout', 'status', 'invalid', 'empty', 'down'].map((k) => [k, { type: 'integer' }])) },
                  latency_ms: percentiles,
                  down_periods: { type: 'array', items: { type: 'object', required: ['from', 'to'], properties: { from: { type: 'string' }, to: { type: ['string', 'null'] } } } },
                },
              },
              satisfaction: {
                type: 'object',
                description: 'The answers to the question put after a colleague closed a conversation, given in the period: how many, and their mean score (1..5; null with none).',
                required: ['responses', 'average'],
                properties: { responses: { type: 'integer' }, average: { type: ['number', 'null'] } },
              },
            },
          },
        },
        400: badInput,
      },
      handler: overPeriod(async (analytics, workspaceId, period) => ({
        ...(await overview(analytics, workspaceId, period)),
        satisfaction: deps.satisfaction ? await deps.satisfaction.summary({ workspaceId, ...period }) : { responses: 0, average: null },
      })),
    }),

    route({
      method: 'get',
      path: '/v1/analytics/timeseries',
      tag: 'analytics',
      summary: `The period in hour or day buckets (days in the workspace's time zone; hours for at most ${MAX_HOURLY_DAYS} days), empty ones included.`,
      access: 'member',
      query: { ...periodQuery, bucket: { type: 'string', enum: ['hour', 'day'], description: 'Default: hour up to two days, day beyond.' } },
      responses: {
        200: {
          description: 'Buckets, oldest first.',
          schema: {
            type: 'object',
            required: ['bucket', 'time_zone', 'buckets'],
            properties: {
              bucket: { enum: ['hour', 'day'] },
              time_zone: { type: 'string' },
              buckets: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['start', 'conversations', 'conversations_by_channel', 'customer_messages', 'handed_over', 'answered_by', 'integrator_latency_ms'],
                  properties: {
                    start: { type: 'string', format: 'date-time' },
                    conversations: { type: 'integer' },
                    conversations_by_channel: { type: 'object', additionalProperties: { type: 'integer' } },
                    customer_messages: { type: 'integer' },
                    handed_over: { type: 'integer' },
                    answered_by: answeredBy,
                    integrator_latency_ms: percentiles,
                  },
                },
              },
            },
          },
        },
        400: badInput,
      },
      async handler({ req, workspaceId }) {
        const period = periodOf(req.query);
        const bucket = readBucket(req.query, period);
        return { status: 200, body: await timeseries(deps.analytics, workspaceId, period, bucket, await timeZoneOf(workspaceId)) };
      },
    }),

    route({
      method: 'get',
      path: '/v1/analytics/unanswered',
      tag: 'analytics',
      summary: 'Questions the bot could not answer: customer messages answered by the fallback or handed over, grouped by their words, most asked first.',
      access: 'member',
      query: periodQuery,
      responses: {
        200: {
          description: 'Questions; `complete` false when the period had more such messages than were grouped (the newest were).',
          schema: {
            type: 'object',
            required: ['questions', 'complete'],
            properties: {
              questions: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['text', 'count', 'last_at', 'session_ids', 'sessions'],
                  properties: {
                    text: { type: 'string' },
                    count: { type: 'integer' },
                    last_at: { type: 'string' },
                    session_ids: { type: 'array', items: { type: 'string' }, description: 'The conversations that asked it, newest first (at most 10).' },
                    sessions: {
                      type: 'array',
                      description: "The same conversations named, in the same order: the customer's name, email or number, else the first words of their first message (plain text).",
                      items: { type: 'object', required: ['id', 'label'], properties: { id: { type: 'string', format: 'uuid' }, label: { type: 'string' } } },
                    },
                  },
                },
              },
              complete: { type: 'boolean' },
            },
          },
        },
        400: badInput,
      },
      handler: overPeriod((analytics, workspaceId, period) => unanswered(analytics, workspaceId, period, deps.labels)),
    }),

    route({
      method: 'get',
      path: '/v1/exports/conversations',
      tag: 'analytics',
      summary: `The period's conversations (those that started in it) with their turns, one row or line per turn: ${EXPORT_COLUMNS.join(', ')}. Streamed. Owners and admins.`,
      access: 'manager',
      query: { ...periodQuery, format: { type: 'string', enum: [...EXPORT_FORMATS], description: 'csv (default) or jsonl (JSON Lines).' } },
      responses: {
        200: { description: 'CSV (RFC 4180, a header row) or JSON Lines, as a download.', contentType: 'text/csv', alsoAs: ['application/x-ndjson'] },
        400: badInput,
      },
      async handler({ req, res, workspaceId }) {
        const period = periodOf(req.query);
        const format = req.query.format ?? 'csv';
        if (!(EXPORT_FORMATS as readonly unknown[]).includes(format)) {
          throw new AppError('validation_failed', 'format must be csv or jsonl.', [{ field: 'format', message: 'is not a known format' }]);
        }
        await streamConversations(deps.analytics, workspaceId, period, format as ExportFormat, res);
        // The audit log records which conversations left, and how (docs/privacy.md, "Audit log").
        return { status: 200, audited: { from: period.from.toISOString(), to: period.to.toISOString(), channel: period.channel, format } };
      },
    }),
  ];
}
