/**
 * The team teaches the bot (docs/knowledge.md, "The team teaches the bot"): an answer added from a conversation, and
 * a customer's wording added to a passage as another phrasing (taken back with DELETE). Every user of the workspace
 * reads phrasings; owners and admins add and remove them. Another workspace's conversation, passage, entry or
 * phrasing is not there (404).
 */
import { AppError } from '../../errors.ts';
import { MAX_DOCUMENT_BODY_BYTES, MAX_TITLE_CHARS } from '../../knowledge/limits.ts';
import { MAX_PHRASING_CHARS, MAX_TEAM_PHRASINGS_PER_DOCUMENT } from '../../knowledge/phrasing-limits.ts';
import { PICKER_PASSAGES, type FromConversationInput, type KnowledgeTeaching, type PhrasingInputBody } from '../../knowledge/phrasings-service.ts';
import { VISIBLE_TEXT_PATTERN } from '../../knowledge/text.ts';
import { MAX_MESSAGE_CHARS } from '../../limits.ts';
import { route, type JsonSchema, type RouteDefinition } from '../route.ts';
import { entrySchema, LANGUAGE_PATTERN, problems422, unprocessableIfInvalid } from './knowledge.ts';

const uuid = { type: 'string', format: 'uuid' };
/** The page picker's question in a URL: the beginning of a long message searches as well, and stays in a header's limit. */
const MAX_PICKER_QUESTION_CHARS = 1_000;
const language = { type: ['string', 'null'], pattern: LANGUAGE_PATTERN, description: 'Language tag (en, nl, de…).' };

const fromConversationBody: JsonSchema = {
  type: 'object',
  required: ['session_id', 'question'],
  additionalProperties: false,
  properties: {
    session_id: { ...uuid, description: 'The conversation (the id of GET /v1/sessions/{id}, and of the Overview\'s unanswered questions).' },
    question: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_MESSAGE_CHARS,
      pattern: VISIBLE_TEXT_PATTERN,
      description: `The customer's question as they sent it: the entry's question (at most ${MAX_TITLE_CHARS} characters once spaces are collapsed).`,
    },
    answer: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_DOCUMENT_BODY_BYTES,
      description: "The answer; absent: your team's last reply after the question in that conversation (422 when there is none).",
    },
    language: { ...language, description: "The entry's language; absent: the conversation's." },
  },
};

const phrasingBody: JsonSchema = {
  type: 'object',
  required: ['text'],
  additionalProperties: false,
  description: 'Exactly one of passage_id and entry_id.',
  properties: {
    passage_id: { ...uuid, description: 'A passage, by the id the search and POST /v1/knowledge/try give it (passages[].id).' },
    entry_id: { ...uuid, description: 'A whole entry, page or product (every passage of it), by its id.' },
    text: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_PHRASING_CHARS * 4,
      pattern: VISIBLE_TEXT_PATTERN,
      description: `The customer's wording, at most ${MAX_PHRASING_CHARS} characters once spaces are collapsed.`,
    },
    language: { ...language, description: "The wording's language; absent: the entry's." },
  },
};

const phrasingSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: uuid,
    entry_id: { ...uuid, description: 'The entry, page or product it belongs to.' },
    passage: { type: ['integer', 'null'], description: 'Which passage of it (0 first); null: every passage.' },
    text: { type: 'string' },
    language: { type: ['string', 'null'] },
    origin: { enum: ['team', 'generated'], description: 'team: taught in the dashboard; generated: written by a model from the passage.' },
    created_at: { type: 'string', format: 'date-time' },
  },
};

const passageSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { ...uuid, description: 'The passage: passage_id of POST /v1/knowledge/phrasings.' },
    entry_id: { type: ['string', 'null'], format: 'uuid' },
    title: { type: 'string' },
    excerpt: { type: 'string' },
    url: { type: ['string', 'null'] },
    score: { type: 'number', description: '0..1 as the search ranked it.' },
  },
};

const checkFromConversation = unprocessableIfInvalid<FromConversationInput>(fromConversationBody);
const checkPhrasingFields = unprocessableIfInvalid<{ text: string; language?: string | null; passage_id?: string; entry_id?: string }>(phrasingBody);
function checkPhrasing(body: unknown): PhrasingInputBody {
  const input = checkPhrasingFields(body);
  if ((input.passage_id === undefined) === (input.entry_id === undefined)) {
    throw new AppError('unprocessable', 'Name either a passage (passage_id) or an entry (entry_id).', [
      { field: input.passage_id === undefined ? 'passage_id' : 'entry_id', message: 'exactly one of passage_id and entry_id is needed' },
    ]);
  }
  return input as PhrasingInputBody;
}

export function knowledgePhrasingRoutes(teaching: KnowledgeTeaching): RouteDefinition[] {
  const loose = { type: 'object' };
  return [
    route({
      method: 'post',
      path: '/v1/knowledge/entries/from-conversation',
      tag: 'knowledge',
      summary:
        "Add as an answer: a customer's question from a conversation and its answer (given, or your team's last reply after it there) become a " +
        'question-and-answer entry, found the next time a customer asks it.',
      access: 'manager',
      body: loose,
      describedBody: { contentType: 'application/json', schema: fromConversationBody, required: true },
      responses: {
        201: { description: 'Added.', schema: entrySchema },
        404: { description: 'No such conversation in this workspace.' },
        422: problems422('A field is wrong, or there is no answer to use;'),
      },
      async handler({ body, workspaceId }) {
        return { status: 201, body: await teaching.fromConversation(workspaceId, checkFromConversation(body)) };
      },
    }),

    route({
      method: 'post',
      path: '/v1/knowledge/phrasings',
      tag: 'knowledge',
      summary:
        "This page answers it: adds a customer's wording to a passage (or a whole entry) as another phrasing, searched like the passage's own text. " +
        `At most ${MAX_TEAM_PHRASINGS_PER_DOCUMENT} from the team per entry.`,
      access: 'manager',
      body: loose,
      describedBody: { contentType: 'application/json', schema: phrasingBody, required: true },
      responses: {
        200: { description: 'The same wording was already there; nothing was added.', schema: phrasingSchema },
        201: { description: 'Added.', schema: phrasingSchema },
        404: { description: 'No such passage or entry in this workspace.' },
        422: problems422(`A field is wrong, or the entry has ${MAX_TEAM_PHRASINGS_PER_DOCUMENT} phrasings from the team already;`),
      },
      async handler({ body, principal, workspaceId }) {
        const added = await teaching.add(workspaceId, principal.userId, checkPhrasing(body));
        return { status: added.created ? 201 : 200, body: added.phrasing };
      },
    }),

    route({
      method: 'get',
      path: '/v1/knowledge/passages',
      tag: 'knowledge',
      summary:
        `The passages the search finds for a question, best first (at most ${PICKER_PASSAGES}): which page answers it. ` +
        'The search alone: unlike POST /v1/knowledge/try, no model and no endpoint is asked.',
      access: 'manager',
      query: {
        question: { type: 'string', maxLength: MAX_PICKER_QUESTION_CHARS, description: 'As the customer asked it (its beginning, when longer). Without letters or digits: no passages.' },
        language: { type: 'string', pattern: '^[A-Za-z]{2}([-_][A-Za-z0-9]{1,8})*$', description: 'Two-letter code; absent: told from the question, else en.' },
      },
      responses: {
        200: { description: 'The passages.', schema: { type: 'object', properties: { passages: { type: 'array', items: passageSchema } } } },
        400: { description: 'A question longer than the limit, or a language that is no language code.' },
      },
      async handler({ req, workspaceId }) {
        // The query was checked against its schema on mount; a question without words finds nothing.
        const query = req.query as Record<string, unknown>;
        const question = typeof query.question === 'string' ? query.question : '';
        const language = typeof query.language === 'string' ? query.language : undefined;
        if (!/[\p{L}\p{N}]/u.test(question)) return { status: 200, body: { passages: [] } };
        return { status: 200, body: { passages: await teaching.findPassages(workspaceId, question, language) } };
      },
    }),

    route({
      method: 'get',
      path: '/v1/knowledge/entries/{id}/phrasings',
      tag: 'knowledge',
      summary: "An entry's, page's or product's phrasings: the team's and the generated ones, by passage.",
      access: 'member',
      responses: {
        200: { description: 'Its phrasings.', schema: { type: 'object', properties: { phrasings: { type: 'array', items: phrasingSchema } } } },
        404: { description: 'No such entry in this workspace.' },
      },
      async handler({ params, workspaceId }) {
        return { status: 200, body: { phrasings: await teaching.list(workspaceId, params.id!) } };
      },
    }),

    route({
      method: 'delete',
      path: '/v1/knowledge/phrasings/{id}',
      tag: 'knowledge',
      summary: 'Take a phrasing back: its words no longer find the passage.',
      access: 'manager',
      responses: { 204: { description: 'Removed.' }, 404: { description: 'No such phrasing in this workspace.' } },
      async handler({ params, workspaceId }) {
        await teaching.remove(workspaceId, params.id!);
        return { status: 204 };
      },
    }),
  ];
}
