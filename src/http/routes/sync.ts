/**
 * The content-sync API (protocol §1.6; docs/interfaces.md: Content sync): the service's own plugins put pages and products
 * into the knowledge base. Writes need the sync key (`X-Sync-Key`); reads also take the widget key (`X-Widget-Key`).
 *
 * - `PUT` is idempotent by external_id: the same content again is answered `unchanged` and rewrites nothing.
 * - `{external_id}` matches EXTERNAL_ID_PATTERN; a `/` in it is sent percent-encoded (`blog%2Fpost-1`).
 * - Bodies are plain text, or HTML with `"format": "html"` (converted to text). At most 200 KB each (413 otherwise).
 * - `POST /v1/sync/batch` is all or nothing: any bad item refuses the whole batch (400 or 413, each problem naming
 *   its item, e.g. `upserts[3].external_id`); a valid batch is applied in one transaction, answered item by item.
 */
import type { KnowledgeKind } from '../../../db/schema.ts';
import { AppError } from '../../errors.ts';
import type { KnowledgeService, Problem, SyncDeleteItem, SyncResult, SyncUpsert, SyncUpsertItem } from '../../knowledge/knowledge-service.ts';
import {
  EXTERNAL_ID_PATTERN,
  MAX_BATCH_ITEMS,
  MAX_DOCUMENT_BODY_BYTES,
  MAX_DOCUMENT_URL_CHARS,
  MAX_SKU_CHARS,
  MAX_TITLE_CHARS,
} from '../../knowledge/limits.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../../limits.ts';
import { VISIBLE_TEXT_PATTERN } from '../../knowledge/text.ts';
import { route, type JsonSchema, type RouteDefinition } from '../route.ts';
import { compileBodyValidator } from '../validation.ts';

const externalId = { type: 'string', pattern: EXTERNAL_ID_PATTERN, description: 'The plugin\'s own id of the page or product.' };
const common = {
  title: { type: 'string', minLength: 1, maxLength: MAX_TITLE_CHARS, pattern: VISIBLE_TEXT_PATTERN, description: 'At least one visible character.' },
  url: { type: ['string', 'null'], format: 'uri', pattern: '^https?://', maxLength: MAX_DOCUMENT_URL_CHARS, description: 'Where visitors read it; the AI may link to it.' },
  language: {
    type: ['string', 'null'],
    pattern: '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$',
    description: 'Language tag (nl, en, nl-BE). nl and en are stemmed; other languages and none are indexed word for word.',
  },
  format: { type: 'string', enum: ['text', 'html'], description: 'text (default): paragraphs separated by blank lines; html: converted to text.' },
};
const bodyText = (what: string) => ({ type: 'string', description: `${what}; at most ${MAX_DOCUMENT_BODY_BYTES} bytes (UTF-8) as sent, 413 beyond.` });

const pageProperties = { ...common, body: bodyText('The page text') };
const productProperties = {
  ...common,
  description: bodyText('The product description'),
  price: { type: ['number', 'null'], minimum: 0, maximum: 9_999_999_999 },
  currency: { type: ['string', 'null'], pattern: '^[A-Za-z]{3}$', description: 'ISO 4217, e.g. EUR.' },
  sku: { type: ['string', 'null'], maxLength: MAX_SKU_CHARS },
  availability: { type: ['string', 'null'], enum: ['in_stock', 'out_of_stock', 'preorder', 'backorder', 'discontinued', null] },
};
const pageSchema: JsonSchema = { type: 'object', required: ['title', 'body'], additionalProperties: false, properties: pageProperties };
const productSchema: JsonSchema = { type: 'object', required: ['title'], additionalProperties: false, properties: productProperties };

/** Batch items are checked one by one (below) so each problem names its item as `upserts[3].field`. */
const pageItemSchema: JsonSchema = {
  type: 'object',
  required: ['kind', 'external_id', 'title', 'body'],
  additionalProperties: false,
  properties: { kind: { type: 'string', enum: ['page'] }, external_id: externalId, ...pageProperties },
};
const productItemSchema: JsonSchema = {
  type: 'object',
  required: ['kind', 'external_id', 'title'],
  additionalProperties: false,
  properties: { kind: { type: 'string', enum: ['product'] }, external_id: externalId, ...productProperties },
};
const deleteItemSchema: JsonSchema = {
  type: 'object',
  required: ['kind', 'external_id'],
  additionalProperties: false,
  properties: { kind: { type: 'string', enum: ['page', 'product'] }, external_id: externalId },
};
const validateItem = {
  page: compileBodyValidator(pageItemSchema),
  product: compileBodyValidator(productItemSchema),
  delete: compileBodyValidator(deleteItemSchema),
};

const resultSchema = {
  type: 'object',
  properties: {
    kind: { enum: ['page', 'product'] },
    external_id: { type: 'string' },
    result: { enum: ['created', 'updated', 'unchanged', 'deleted', 'not_found'] },
    content_hash: { type: 'string' },
    chunks: { type: 'integer', description: 'Chunks written; absent when nothing was written.' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};
const listSchema = (kind: KnowledgeKind) => ({
  type: 'object',
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          external_id: { type: 'string' },
          title: { type: 'string' },
          url: { type: ['string', 'null'] },
          language: { type: ['string', 'null'] },
          content_hash: { type: 'string' },
          chunks: { type: 'integer' },
          created_at: { type: 'string', format: 'date-time' },
          updated_at: { type: 'string', format: 'date-time' },
          ...(kind === 'product' ? { price: { type: ['number', 'null'] }, currency: { type: ['string', 'null'] }, sku: { type: ['string', 'null'] }, availability: { type: ['string', 'null'] } } : {}),
        },
      },
    },
    next_cursor: { type: ['string', 'null'], description: 'Pass as ?cursor= for the next page; null on the last page.' },
  },
});

const EXTERNAL_ID = new RegExp(EXTERNAL_ID_PATTERN);

/** `{external_id}` in the path, for /openapi.json (EXTERNAL_ID_PATTERN, which refuses `.` and `..`). */
const externalIdParam = {
  type: 'string',
  pattern: EXTERNAL_ID_PATTERN,
  description: "The plugin's own id of the page or product; a / in it is sent as %2F.",
};
const badExternalId = { description: `external_id does not match ${EXTERNAL_ID_PATTERN}.` };
const listQuerySchema = {
  limit: { type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT, description: `Items per answer; default ${DEFAULT_LIST_LIMIT}.` },
  cursor: { type: 'string', description: 'The next_cursor of the previous answer.' },
};
/** POST /v1/sync/batch as described: each item as it is checked, one by one (checkBatch below). */
const batchDescribed: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    upserts: { type: 'array', maxItems: MAX_BATCH_ITEMS, items: { oneOf: [pageItemSchema, productItemSchema] } },
    deletes: { type: 'array', maxItems: MAX_BATCH_ITEMS, items: deleteItemSchema },
  },
  description: `At most ${MAX_BATCH_ITEMS} items in upserts and deletes together; each page or product once.`,
};

function externalIdOf(params: Record<string, string>): string {
  const id = params.external_id ?? '';
  if (!EXTERNAL_ID.test(id)) {
    throw new AppError('validation_failed', `external_id must match ${EXTERNAL_ID_PATTERN} (send a / as %2F).`, [
      { field: 'external_id', message: `must match pattern "${EXTERNAL_ID_PATTERN}"` },
    ]);
  }
  return id;
}

function answer(result: SyncResult) {
  return { status: result.result === 'created' ? 201 : 200, body: result };
}

/** Checks every batch item against its kind's schema and collects all problems, each naming its item. */
function checkBatch(body: { upserts?: unknown[]; deletes?: unknown[] }): { upserts: SyncUpsertItem[]; deletes: SyncDeleteItem[] } {
  const problems: Problem[] = [];
  const check = (validate: (item: unknown) => unknown, item: unknown, at: string) => {
    try {
      validate(item);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      for (const p of err.details as Problem[]) problems.push({ field: p.field ? `${at}.${p.field}` : at, message: p.message });
    }
  };
  const upserts = body.upserts ?? [];
  const deletes = body.deletes ?? [];
  upserts.forEach((item, i) => {
    const kind = (item as { kind?: unknown }).kind;
    if (kind === 'page' || kind === 'product') check(validateItem[kind], item, `upserts[${i}]`);
    else problems.push({ field: `upserts[${i}].kind`, message: kind === undefined ? 'is required' : 'must be one of "page", "product"' });
  });
  deletes.forEach((item, i) => check(validateItem.delete, item, `deletes[${i}]`));
  if (problems.length) throw new AppError('validation_failed', `${problems[0]!.field} ${problems[0]!.message}; nothing was applied.`, problems);
  return { upserts: upserts as SyncUpsertItem[], deletes: deletes as SyncDeleteItem[] };
}

function listQuery(query: Record<string, unknown>): { limit: number; cursor: string | undefined } {
  const problems: Problem[] = [];
  let limit = DEFAULT_LIST_LIMIT;
  if (query.limit !== undefined) {
    limit = typeof query.limit === 'string' && /^\d{1,4}$/.test(query.limit) ? Number(query.limit) : NaN;
    if (!(limit >= 1 && limit <= MAX_LIST_LIMIT)) problems.push({ field: 'limit', message: `must be an integer from 1 to ${MAX_LIST_LIMIT}` });
  }
  if (query.cursor !== undefined && typeof query.cursor !== 'string') problems.push({ field: 'cursor', message: 'must be given once' });
  if (problems.length) throw new AppError('validation_failed', `${problems[0]!.field} ${problems[0]!.message}.`, problems);
  return { limit, cursor: query.cursor as string | undefined };
}

export function syncRoutes(knowledge: KnowledgeService): RouteDefinition[] {
  const kinds = [
    { kind: 'page' as const, plural: 'pages', schema: pageSchema, what: 'page' },
    { kind: 'product' as const, plural: 'products', schema: productSchema, what: 'product' },
  ];
  return [
    ...kinds.flatMap(({ kind, plural, schema, what }) => [
      route<SyncUpsert>({
        method: 'put',
        path: `/v1/sync/${plural}/{external_id}`,
        tag: 'sync',
        summary: `Create or replace a ${what} by its external_id. The same content again is answered \`unchanged\` and rewrites nothing.`,
        access: 'sync-write',
        body: schema,
        params: { external_id: externalIdParam },
        responses: {
          200: { description: 'Updated, or unchanged.', schema: resultSchema },
          201: { description: 'Created.', schema: resultSchema },
          413: { description: `The ${kind === 'page' ? 'body' : 'description'} is larger than ${MAX_DOCUMENT_BODY_BYTES} bytes.` },
        },
        async handler({ body, params, workspaceId }) {
          return answer(await knowledge.upsert(workspaceId, externalIdOf(params), { ...body, kind } as SyncUpsert));
        },
      }),
      route({
        method: 'delete',
        path: `/v1/sync/${plural}/{external_id}`,
        tag: 'sync',
        summary: `Remove a ${what} and its passages from the knowledge base.`,
        access: 'sync-write',
        params: { external_id: externalIdParam },
        responses: { 204: { description: 'Removed.' }, 400: badExternalId, 404: { description: 'There was none (treat as already removed).' } },
        async handler({ params, workspaceId }) {
          if (!(await knowledge.remove(workspaceId, kind, externalIdOf(params)))) throw new AppError('not_found', `No ${what} with that external_id.`);
          return { status: 204 };
        },
      }),
      route({
        method: 'get',
        path: `/v1/sync/${plural}`,
        tag: 'sync',
        summary: `The synced ${plural}, in external_id order, ?limit= (1–${MAX_LIST_LIMIT}, default ${DEFAULT_LIST_LIMIT}) per answer; follow next_cursor with ?cursor=.`,
        access: 'sync-read',
        query: listQuerySchema,
        responses: { 200: { description: `The ${plural}.`, schema: listSchema(kind) } },
        async handler({ req, workspaceId }) {
          return { status: 200, body: await knowledge.list(workspaceId, kind, listQuery(req.query as Record<string, unknown>)) };
        },
      }),
    ]),

    route<{ upserts?: unknown[]; deletes?: unknown[] }>({
      method: 'post',
      path: '/v1/sync/batch',
      tag: 'sync',
      summary: `Up to ${MAX_BATCH_ITEMS} upserts and deletes together, all or nothing: any bad item refuses the whole batch, naming it (upserts[3].external_id); a valid one is applied in one transaction.`,
      access: 'sync-write',
      describedBody: { contentType: 'application/json', schema: batchDescribed },
      body: {
        type: 'object',
        additionalProperties: false,
        properties: {
          upserts: {
            type: 'array',
            maxItems: MAX_BATCH_ITEMS,
            items: {
              type: 'object',
              description: `{kind: "page"|"product", external_id, …} with the fields of PUT /v1/sync/pages/{external_id} or PUT /v1/sync/products/{external_id}.`,
            },
          },
          deletes: {
            type: 'array',
            maxItems: MAX_BATCH_ITEMS,
            items: { type: 'object', description: '{kind: "page"|"product", external_id}.' },
          },
        },
      },
      responses: {
        200: {
          description: 'Applied; one result per item, in the order given.',
          schema: { type: 'object', properties: { upserts: { type: 'array', items: resultSchema }, deletes: { type: 'array', items: resultSchema } } },
        },
        413: { description: `A body or description is larger than ${MAX_DOCUMENT_BODY_BYTES} bytes; nothing was applied.` },
      },
      async handler({ body, workspaceId }) {
        return { status: 200, body: await knowledge.applyBatch(workspaceId, checkBatch(body)) };
      },
    }),
  ];
}
