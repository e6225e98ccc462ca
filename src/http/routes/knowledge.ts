/**
 * The knowledge base in the dashboard (docs/knowledge.md): pages and question-and-answer pairs written by hand beside
 * what the sync API sends, and "Try a question". Every user of the workspace reads; owners and admins write and try
 * (a try sends a channel request to the integrator's endpoint, as the test button does, which is theirs to do).
 *
 * A body that is not JSON is 400; a field with a wrong value is 422 (`unprocessable`) with `details` naming every
 * field that is wrong, so the dashboard puts each message beside its field.
 */
import type { KnowledgeOrigin } from '../../../db/schema.ts';
import { AppError } from '../../errors.ts';
import type { EntryInput, KnowledgeEntries } from '../../knowledge/knowledge-entries.ts';
import { ENTRY_EXCERPT_CHARS, KNOWLEDGE_CONFIDENCE_THRESHOLD, MAX_DOCUMENT_BODY_BYTES, MAX_TITLE_CHARS, STRONG_MATCH_SCORE, TRY_QUESTION_RATE_LIMIT } from '../../knowledge/limits.ts';
import { VISIBLE_TEXT_PATTERN } from '../../knowledge/text.ts';
import type { TryQuestion } from '../../knowledge/try-question.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, MAX_MESSAGE_CHARS } from '../../limits.ts';
import { exchangeProperties } from '../endpoint-exchange-schema.ts';
import { route, type JsonSchema, type RouteDefinition } from '../route.ts';
import { compileBodyValidator } from '../validation.ts';

export const LANGUAGE_PATTERN = '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$';

const entryBody: JsonSchema = {
  type: 'object',
  required: ['type', 'title', 'text'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['page', 'qa'], description: 'page: a title and its text; qa: a question (title) and its answer (text).' },
    title: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_TITLE_CHARS,
      pattern: VISIBLE_TEXT_PATTERN,
      description: "The page's title, or the question. It is indexed with a title's weight, so a question asked in other words still finds it.",
    },
    text: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_DOCUMENT_BODY_BYTES,
      pattern: VISIBLE_TEXT_PATTERN,
      description: `The page's text, or the answer: plain text, paragraphs separated by blank lines; at most ${MAX_DOCUMENT_BODY_BYTES} bytes (UTF-8).`,
    },
    language: {
      type: ['string', 'null'],
      pattern: LANGUAGE_PATTERN,
      description: 'Language tag (en, nl, de, fr…). nl and en are stemmed; other languages and none are indexed word for word.',
    },
  },
};
export const tryBody: JsonSchema = {
  type: 'object',
  required: ['question'],
  additionalProperties: false,
  properties: {
    question: { type: 'string', minLength: 1, maxLength: MAX_MESSAGE_CHARS, pattern: VISIBLE_TEXT_PATTERN, description: 'As a customer would write it.' },
    language: { type: 'string', pattern: '^[A-Za-z]{2}([-_][A-Za-z0-9]{1,8})*$', description: 'Two-letter code; absent: told from the question, else en.' },
  },
};

/** Schema problems of these routes are 422 naming the field (the route's own check, after the role check). */
export function unprocessableIfInvalid<T>(schema: JsonSchema): (body: unknown) => T {
  const validate = compileBodyValidator(schema);
  return (body) => {
    try {
      return validate(body) as T;
    } catch (err) {
      if (err instanceof AppError && err.code === 'validation_failed') throw new AppError('unprocessable', err.message, err.details);
      throw err;
    }
  };
}
const checkEntry = unprocessableIfInvalid<EntryInput>(entryBody);
const checkTry = unprocessableIfInvalid<{ question: string; language?: string }>(tryBody);

export const entrySchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    origin: {
      enum: ['dashboard', 'sync', 'website', 'file'],
      description: "dashboard: written by hand here; sync: sent by the shop's or CMS's plugin; website, file: from a knowledge source (GET /v1/knowledge/sources). Only dashboard entries are changed here.",
    },
    type: { enum: ['page', 'qa', 'product'] },
    title: { type: 'string' },
    text: { type: 'string', description: `The whole text; in a list its first ${ENTRY_EXCERPT_CHARS} characters (text_cut true).` },
    text_cut: { type: 'boolean' },
    language: { type: ['string', 'null'] },
    external_id: { type: ['string', 'null'], description: "Synced documents: the plugin's own id." },
    url: { type: ['string', 'null'] },
    chunks: { type: 'integer', description: 'Passages the search can find.' },
    editable: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};
export const problems422 = (what: string) => ({ description: `${what} error.details names each field: [{field, message}].` });
const tryAnswerSchema = {
  type: 'object',
  properties: { text: { type: 'string', description: 'What the customer would read in the chat.' }, source: { enum: ['integrator', 'ai', 'knowledge_base', 'fallback'] } },
};
const trySchema: JsonSchema = {
  type: 'object',
  properties: {
    question: { type: 'string' },
    language: { type: 'string' },
    passages: {
      type: 'array',
      description: 'What the search found, best first: what the AI answers from.',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string', format: 'uuid' },
          entry_id: { type: ['string', 'null'], format: 'uuid' },
          origin: { enum: ['dashboard', 'sync', 'website', 'file', null], description: 'website, file: from a knowledge source (GET /v1/knowledge/sources).' },
          type: { enum: ['page', 'qa', 'product'] },
          title: { type: 'string' },
          excerpt: { type: 'string' },
          url: { type: ['string', 'null'] },
          score: { type: 'number', description: '0..1 as the search ranked it.' },
          match: {
            enum: ['strong', 'fair', 'weak'],
            description: `strong: score ≥ ${STRONG_MATCH_SCORE}; fair: ≥ ${KNOWLEDGE_CONFIDENCE_THRESHOLD} (the built-in answerer uses it); weak: below.`,
          },
        },
      },
    },
    confident: { type: 'boolean' },
    answer: { ...tryAnswerSchema, description: 'Without the integrator: the built-in AI from the knowledge base.' },
    with_integrator: {
      type: ['object', 'null'],
      description: "A 'webchat' channel request was sent to the endpoint; null when none is configured.",
      properties: {
        ...exchangeProperties,
        reply: { type: ['string', 'null'] },
        handled: { type: ['boolean', 'null'] },
        handoff: { enum: ['human', 'forward', null] },
        answer: { ...tryAnswerSchema, description: 'What the customer would get: a handled reply as it is, otherwise the built-in AI.' },
      },
    },
  },
};

function originOf(query: Record<string, unknown>): KnowledgeOrigin {
  const origin = query.origin ?? 'dashboard';
  if (origin !== 'dashboard' && origin !== 'sync') {
    throw new AppError('validation_failed', 'origin must be dashboard or sync.', [{ field: 'origin', message: 'must be one of "dashboard", "sync"' }]);
  }
  return origin;
}

export function knowledgeRoutes(entries: KnowledgeEntries, tryQuestion: TryQuestion): RouteDefinition[] {
  const loose = { type: 'object' };
  return [
    route({
      method: 'get',
      path: '/v1/knowledge/entries',
      tag: 'knowledge',
      summary: `The knowledge base's documents of one origin (dashboard: written by hand, the default; sync: from the plugins), most recently changed first, each text cut to ${ENTRY_EXCERPT_CHARS} characters.`,
      access: 'member',
      query: {
        origin: { type: 'string', enum: ['dashboard', 'sync'], description: 'Default dashboard.' },
        limit: { type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT, description: `Default ${DEFAULT_LIST_LIMIT}.` },
        cursor: { type: 'string', description: 'The next_cursor of the previous answer.' },
      },
      responses: {
        200: {
          description: 'The documents.',
          schema: {
            type: 'object',
            properties: { entries: { type: 'array', items: entrySchema }, next_cursor: { type: ['string', 'null'], description: 'Pass as ?cursor= for the next page; null on the last.' } },
          },
        },
      },
      async handler({ req, workspaceId }) {
        const query = req.query as Record<string, string | undefined>;
        const limit = query.limit === undefined ? DEFAULT_LIST_LIMIT : Number(query.limit);
        return { status: 200, body: await entries.list(workspaceId, { origin: originOf(query), limit, cursor: query.cursor }) };
      },
    }),

    route({
      method: 'post',
      path: '/v1/knowledge/entries',
      tag: 'knowledge',
      summary: 'Add a page or a question-and-answer pair by hand. It is searchable as soon as this answers; the sync API never lists, changes or deletes it.',
      access: 'manager',
      body: loose,
      describedBody: { contentType: 'application/json', schema: entryBody, required: true },
      responses: { 201: { description: 'Added.', schema: entrySchema }, 422: problems422('A field is missing or wrong;') },
      async handler({ body, workspaceId }) {
        return { status: 201, body: await entries.create(workspaceId, checkEntry(body)) };
      },
    }),

    route({
      method: 'get',
      path: '/v1/knowledge/entries/{id}',
      tag: 'knowledge',
      summary: 'One document of the knowledge base, whole: a hand-made entry or a synced page or product.',
      access: 'member',
      responses: { 200: { description: 'The document.', schema: entrySchema }, 404: { description: 'No such document in this workspace.' } },
      async handler({ params, workspaceId }) {
        return { status: 200, body: await entries.get(workspaceId, params.id!) };
      },
    }),

    route({
      method: 'put',
      path: '/v1/knowledge/entries/{id}',
      tag: 'knowledge',
      summary: 'Replace a hand-made entry (all fields). Synced documents are changed by their plugin only.',
      access: 'manager',
      body: loose,
      describedBody: { contentType: 'application/json', schema: entryBody, required: true },
      responses: {
        200: { description: 'Saved.', schema: entrySchema },
        404: { description: 'No such document in this workspace.' },
        409: { description: 'The id names a synced document (origin sync), which only the sync API changes.' },
        422: problems422('A field is missing or wrong;'),
      },
      async handler({ body, params, workspaceId }) {
        return { status: 200, body: await entries.update(workspaceId, params.id!, checkEntry(body)) };
      },
    }),

    route({
      method: 'delete',
      path: '/v1/knowledge/entries/{id}',
      tag: 'knowledge',
      summary: 'Delete a hand-made entry and its passages.',
      access: 'manager',
      responses: {
        204: { description: 'Deleted.' },
        404: { description: 'No such document in this workspace.' },
        409: { description: 'The id names a synced document (origin sync), which only the sync API deletes.' },
      },
      async handler({ params, workspaceId }) {
        await entries.remove(workspaceId, params.id!);
        return { status: 204 };
      },
    }),

    route({
      method: 'post',
      path: '/v1/knowledge/try',
      tag: 'knowledge',
      summary:
        'Try a question: the passages the search finds (best first, with the score and a word for it) and what the customer would get in the website chat: ' +
        "the built-in AI's answer from the knowledge base and, with an integration, after a 'webchat' channel request to the endpoint (as the test button sends it). " +
        'Creates no conversation and counts as no customer traffic. ' +
        `Limited per workspace (${TRY_QUESTION_RATE_LIMIT.burst} at once, then one every ${TRY_QUESTION_RATE_LIMIT.windowMs / TRY_QUESTION_RATE_LIMIT.burst / 1000} s): beyond it 429 rate_limited with Retry-After.`,
      access: 'manager',
      body: loose,
      describedBody: { contentType: 'application/json', schema: tryBody, required: true },
      responses: {
        200: { description: 'What would be used and answered.', schema: trySchema },
        422: problems422('The question is missing or wrong;'),
        429: { description: 'The workspace tried more questions than its budget (rate_limited); error.details.retry_after and Retry-After say when to try again (seconds).' },
      },
      async handler({ body, workspaceId }) {
        return { status: 200, body: await tryQuestion.try(workspaceId, checkTry(body)) };
      },
    }),
  ];
}
