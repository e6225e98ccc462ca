/**
 * The team's tools to answer fast (docs/interfaces.md, "The team's tools"): saved replies, private notes with @mentions,
 * and the knowledge search for "Insert from knowledge" in the reply box. Every role reads and adds saved replies; an
 * agent changes and deletes the ones they wrote, owners and admins any. Every role writes notes and searches; a note's
 * author changes and deletes it, an owner deletes any.
 */
import { PLACEHOLDERS, type SavedReplies } from '../../inbox/saved-replies.ts';
import type { Notes } from '../../inbox/notes.ts';
import { KNOWLEDGE_INSERT_PASSAGES, MAX_KNOWLEDGE_QUERY_CHARS, MAX_NOTE_CHARS, MAX_SAVED_REPLIES, MAX_SAVED_REPLY_CHARS, MAX_SHORTCUT_CHARS } from '../../inbox/limits.ts';
import { AppError, notFound } from '../../errors.ts';
import { isUuid } from '../../ids.ts';
import { route, type JsonSchema, type RouteDefinition } from '../route.ts';

/** A passage of the knowledge base as the reply box inserts it. */
export interface InsertablePassage {
  id: string;
  title: string;
  text: string;
  url: string | null;
}

export interface TeamToolDeps {
  savedReplies: SavedReplies;
  notes: Notes;
  /** The knowledge search (src/knowledge/knowledge-service.ts): the best `limit` passages for the words, in `language` first. */
  searchKnowledge: (workspaceId: string, words: string, limit: number, language: string | undefined) => Promise<InsertablePassage[]>;
}

const uuid = { type: 'string', format: 'uuid' };
const placeholders = PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ');

const savedReplySchema: JsonSchema = {
  type: 'object',
  required: ['id', 'shortcut', 'text', 'created_by', 'created_at', 'updated_at'],
  properties: {
    id: uuid,
    shortcut: { type: 'string', description: 'Typed after / in the reply box.' },
    text: { type: 'string', description: `With placeholders (${placeholders}) as written; the reply box fills them.` },
    created_by: { type: ['string', 'null'], format: 'uuid', description: 'Who wrote it; null after that user was removed.' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};
const savedReplyBody: JsonSchema = {
  type: 'object',
  required: ['shortcut', 'text'],
  additionalProperties: false,
  properties: {
    shortcut: { type: 'string', maxLength: 200, description: `1 to ${MAX_SHORTCUT_CHARS} letters, digits, - and _ (a leading / is dropped); one per workspace, whatever the capitals.` },
    text: { type: 'string', maxLength: MAX_SAVED_REPLY_CHARS * 4, description: `At most ${MAX_SAVED_REPLY_CHARS} characters once trimmed. Placeholders: ${placeholders}.` },
  },
};
const noteSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: uuid,
    from: { const: 'note' },
    text: { type: 'string' },
    at: { type: 'string', format: 'date-time' },
    author: { type: 'object', properties: { user_id: { type: ['string', 'null'], format: 'uuid' }, name: { type: 'string' } } },
    mentions: { type: 'array', items: { type: 'object', properties: { user_id: uuid, name: { type: 'string' } } } },
    edited_at: { type: ['string', 'null'], format: 'date-time', description: 'When its author last changed it; null: never.' },
  },
};
const noteBody: JsonSchema = { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string', maxLength: MAX_NOTE_CHARS * 4 } } };
const savedReply422 = {
  422: { description: `A shortcut that is not 1 to ${MAX_SHORTCUT_CHARS} letters, digits, - and _, an empty or too long text, a placeholder other than ${placeholders}, or the workspace's ${MAX_SAVED_REPLIES}th reply (unprocessable; error.details names the field).` },
};

export function teamToolRoutes(deps: TeamToolDeps): RouteDefinition[] {
  const { savedReplies, notes } = deps;
  const replyId = (id: string | undefined) => {
    if (!id || !isUuid(id)) throw notFound('The saved reply');
    return id;
  };
  const noteId = (id: string | undefined) => {
    if (!id || !isUuid(id)) throw notFound('The note');
    return id;
  };
  return [
    route({
      method: 'get',
      path: '/v1/saved-replies',
      tag: 'inbox',
      summary: `The team's saved replies, by shortcut (at most ${MAX_SAVED_REPLIES}). Every role.`,
      access: 'member',
      responses: { 200: { description: 'The saved replies.', schema: { type: 'object', required: ['saved_replies'], properties: { saved_replies: { type: 'array', items: savedReplySchema } } } } },
      async handler({ principal }) {
        return { status: 200, body: { saved_replies: await savedReplies.list(principal.workspaceId) } };
      },
    }),

    route<{ shortcut: string; text: string }>({
      method: 'post',
      path: '/v1/saved-replies',
      tag: 'inbox',
      summary: `Add a saved reply (every role): typed as /shortcut in the reply box, its placeholders (${placeholders}) filled when inserted.`,
      access: 'member',
      body: savedReplyBody,
      responses: {
        201: { description: 'Added.', schema: { type: 'object', properties: { saved_reply: savedReplySchema } } },
        409: { description: 'The workspace has a saved reply with that shortcut already (conflict).' },
        ...savedReply422,
      },
      async handler({ body, principal }) {
        return { status: 201, body: { saved_reply: await savedReplies.add(principal, body) } };
      },
    }),

    route<{ shortcut: string; text: string }>({
      method: 'put',
      path: '/v1/saved-replies/{id}',
      tag: 'inbox',
      summary: 'Change a saved reply: an agent the ones they wrote, owners and admins any.',
      access: 'member',
      body: savedReplyBody,
      responses: {
        200: { description: 'Changed.', schema: { type: 'object', properties: { saved_reply: savedReplySchema } } },
        403: { description: 'An agent, and another user wrote it (forbidden).' },
        404: { description: 'No such saved reply in this workspace.' },
        409: { description: 'Another saved reply has that shortcut (conflict).' },
        ...savedReply422,
      },
      async handler({ body, params, principal }) {
        return { status: 200, body: { saved_reply: await savedReplies.update(principal, replyId(params.id), body) } };
      },
    }),

    route({
      method: 'delete',
      path: '/v1/saved-replies/{id}',
      tag: 'inbox',
      summary: 'Delete a saved reply: an agent the ones they wrote, owners and admins any.',
      access: 'member',
      responses: {
        204: { description: 'Deleted.' },
        403: { description: 'An agent, and another user wrote it (forbidden).' },
        404: { description: 'No such saved reply in this workspace.' },
      },
      async handler({ params, principal }) {
        await savedReplies.remove(principal, replyId(params.id));
        return { status: 204 };
      },
    }),

    route<{ text: string }>({
      method: 'post',
      path: '/v1/sessions/{id}/notes',
      tag: 'inbox',
      summary:
        `A private note on the conversation (every role, every channel; at most ${MAX_NOTE_CHARS} characters): only the team sees it, in GET /v1/sessions/{id} among the messages with from "note" and on the session's stream (event note). ` +
        'It never reaches the customer: not the widget, not WhatsApp, not exports, not the integrator. `@name` (a colleague\'s name or email before the @, whatever the capitals) notifies that colleague: GET /v1/notifications (kind mention) and the `mention` event of GET /v1/inbox/events.',
      access: 'member',
      body: noteBody,
      responses: {
        201: { description: 'Stored.', schema: { type: 'object', properties: { note: noteSchema } } },
        404: { description: 'No such session.' },
        422: { description: 'Empty or too long (unprocessable).' },
      },
      async handler({ body, params, principal }) {
        return { status: 201, body: await notes.add(principal, params.id!, body.text) };
      },
    }),

    route<{ text: string }>({
      method: 'patch',
      path: '/v1/sessions/{id}/notes/{note_id}',
      tag: 'inbox',
      summary:
        `Change a private note's text (its author only; at most ${MAX_NOTE_CHARS} characters): it carries edited_at from then on, and the session's stream sends it again as the event note. ` +
        'A colleague the new text @mentions who was not told of this note before is told now (GET /v1/notifications, the mention event of GET /v1/inbox/events); nobody is told twice.',
      access: 'member',
      params: { note_id: { type: 'string', format: 'uuid' } },
      body: noteBody,
      responses: {
        200: { description: 'Changed.', schema: { type: 'object', properties: { note: noteSchema } } },
        403: { description: 'Someone else wrote it (forbidden).' },
        404: { description: 'No such session, or no such note in it.' },
        422: { description: 'Empty or too long (unprocessable).' },
      },
      async handler({ body, params, principal }) {
        return { status: 200, body: await notes.edit(principal, params.id!, noteId(params.note_id), body.text) };
      },
    }),

    route({
      method: 'delete',
      path: '/v1/sessions/{id}/notes/{note_id}',
      tag: 'inbox',
      summary: "Delete a private note: its author, or an owner any. The notifications of its @mentions go with it; the session's stream sends note_deleted.",
      access: 'member',
      params: { note_id: { type: 'string', format: 'uuid' } },
      responses: {
        204: { description: 'Deleted.' },
        403: { description: 'Someone else wrote it, and you are not an owner (forbidden).' },
        404: { description: 'No such session, or no such note in it.' },
      },
      async handler({ params, principal }) {
        await notes.remove(principal, params.id!, noteId(params.note_id));
        return { status: 204 };
      },
    }),

    route({
      method: 'get',
      path: '/v1/knowledge/search',
      tag: 'knowledge',
      summary: `"Insert from knowledge" in the reply box: the knowledge base's passages for some words, best first (at most ${KNOWLEDGE_INSERT_PASSAGES}), whole, to insert into a reply. Every role; the search alone, no model is asked.`,
      access: 'member',
      query: {
        q: { type: 'string', maxLength: MAX_KNOWLEDGE_QUERY_CHARS, description: `The words to search for (at most ${MAX_KNOWLEDGE_QUERY_CHARS} characters). Without letters or digits: no passages.` },
        language: { type: 'string', pattern: '^[A-Za-z]{2}([-_][A-Za-z0-9]{1,8})*$', description: "The conversation's language, searched first; then the words' own, then English." },
      },
      responses: {
        200: {
          description: 'The passages.',
          schema: {
            type: 'object',
            properties: {
              passages: { type: 'array', items: { type: 'object', properties: { id: uuid, title: { type: 'string' }, text: { type: 'string' }, url: { type: ['string', 'null'] } } } },
            },
          },
        },
        400: { description: 'q longer than the limit (validation_failed).' },
      },
      async handler({ req, principal }) {
        const query = req.query as Record<string, unknown>;
        const words = typeof query.q === 'string' ? query.q : '';
        const language = typeof query.language === 'string' ? query.language.slice(0, 2).toLowerCase() : undefined;
        if (Array.from(words).length > MAX_KNOWLEDGE_QUERY_CHARS) {
          throw new AppError('validation_failed', `q is longer than ${MAX_KNOWLEDGE_QUERY_CHARS} characters.`, [{ field: 'q', message: `at most ${MAX_KNOWLEDGE_QUERY_CHARS} characters` }]);
        }
        if (!/[\p{L}\p{N}]/u.test(words)) return { status: 200, body: { passages: [] } };
        return { status: 200, body: { passages: await deps.searchKnowledge(principal.workspaceId, words, KNOWLEDGE_INSERT_PASSAGES, language) } };
      },
    }),
  ];
}
