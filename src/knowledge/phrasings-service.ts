/**
 * The team teaches the bot (docs/knowledge.md, "The team teaches the bot"): from a question the bot could not answer,
 * an owner or admin
 * - adds an answer: the customer's question and the agent's reply (or a typed one) become a question-and-answer entry
 *   (`fromConversation`), found the next time a customer asks it;
 * - or says which page answers it: the customer's wording becomes another phrasing of that passage (`add`), searched
 *   like the passage's own text (./phrasings.ts), and taken back with `remove` when it was wrong.
 *
 * A passage is named by the id the search and the Try screen give it (a chunk id); the phrasing is kept by its
 * document and passage number, so it survives the document being chunked again (chunk ids are new each time).
 */
import type { KnowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import type { SessionsRepository } from '../../db/repositories/sessions.repository.ts';
import type { KnowledgePhrasing } from '../../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import { detectLanguage } from '../text/detect-language.ts';
import { primaryLanguage } from '../text/language.ts';
import type { EntryView, KnowledgeEntries } from './knowledge-entries.ts';
import type { KnowledgeService } from './knowledge-service.ts';
import { MAX_TITLE_CHARS, TRY_EXCERPT_CHARS } from './limits.ts';
import { MAX_TEAM_PHRASINGS_PER_DOCUMENT } from './phrasing-limits.ts';
import { addPhrasings, phrasingText, removePhrasings } from './phrasings.ts';
import { cleanLine } from './text.ts';

/** Passages the page picker offers for a question. */
export const PICKER_PASSAGES = 5;
/** Messages of one conversation read to find the agent's reply: more than any chat holds (the session route's bound). */
const MAX_CONVERSATION_MESSAGES = 10_000;

export interface FromConversationInput {
  /** The conversation's id as the dashboard has it (GET /v1/sessions/{id}). */
  session_id: string;
  /** The customer's question, as they sent it. */
  question: string;
  /** The answer; absent: the team's last reply after the question in that conversation. */
  answer?: string | undefined;
  language?: string | null | undefined;
}

export type PhrasingInputBody = { text: string; language?: string | null | undefined } & ({ passage_id: string } | { entry_id: string });

/** A phrasing as the API shows it. */
export interface PhrasingView {
  id: string;
  entry_id: string;
  /** The passage's number in its entry (0 first); null: the whole entry. */
  passage: number | null;
  text: string;
  language: string | null;
  /** team: taught in the dashboard; generated: written by a model from the passage. */
  origin: 'team' | 'generated';
  created_at: string;
}

/** A passage the search found for a question, as the page picker lists it. */
export interface FoundPassage {
  /** The passage (chunk) id: what POST /v1/knowledge/phrasings takes as passage_id. */
  id: string;
  entry_id: string | null;
  title: string;
  excerpt: string;
  url: string | null;
  score: number;
}

export interface KnowledgeTeachingDeps {
  knowledge: KnowledgeRepository;
  service: Pick<KnowledgeService, 'writing' | 'search'>;
  entries: Pick<KnowledgeEntries, 'create'>;
  conversations: Pick<SessionsRepository, 'findById' | 'messages'>;
}

export function createKnowledgeTeaching(deps: KnowledgeTeachingDeps) {
  const { knowledge, service, entries, conversations } = deps;

  return {
    /**
     * POST /v1/knowledge/entries/from-conversation: the question and the answer become a question-and-answer entry in
     * the conversation's language. 404 when the conversation is not the workspace's; 422 without an answer to use.
     */
    async fromConversation(workspaceId: string, input: FromConversationInput): Promise<EntryView> {
      const session = await conversations.findById(workspaceId, input.session_id);
      if (!session) throw notFound('The conversation');
      const question = cleanLine(input.question);
      if (!/[\p{L}\p{N}]/u.test(question)) throw unprocessable('question', 'has no letters or digits');
      if ([...question].length > MAX_TITLE_CHARS) throw unprocessable('question', `is longer than ${MAX_TITLE_CHARS} characters: shorten it to the question itself`);
      let answer = input.answer;
      if (answer === undefined || !/[\p{L}\p{N}]/u.test(answer)) {
        if (answer !== undefined) throw unprocessable('answer', 'has no letters or digits');
        answer = await teamReplyAfter(session.id, question);
        if (answer === undefined) {
          throw new AppError('unprocessable', 'Nobody of your team replied to this question in the conversation: type the answer.', [
            { field: 'answer', message: 'is needed: the conversation has no reply of your team after the question' },
          ]);
        }
      }
      const language = primaryLanguage(input.language ?? session.language) || null;
      return entries.create(workspaceId, { type: 'qa', title: question, text: answer, language });
    },

    /**
     * POST /v1/knowledge/phrasings: the customer's wording as another phrasing of a passage (by its chunk id) or of a
     * whole entry. `created` false when the same wording was already there (nothing written).
     */
    async add(workspaceId: string, userId: string | null, input: PhrasingInputBody): Promise<{ phrasing: PhrasingView; created: boolean }> {
      const byPassage = 'passage_id' in input;
      const target = byPassage
        ? await knowledge.phrasingTargetByChunk(workspaceId, input.passage_id)
        : await knowledge.phrasingTargetByDocument(workspaceId, input.entry_id);
      if (!target) throw notFound(byPassage ? 'The passage' : 'The knowledge entry');
      const text = phrasingText(input.text);
      return service.writing(workspaceId, () =>
        knowledge.inTransaction(async (queries) => {
          const known = await queries.listPhrasings(workspaceId, target.document_id);
          const same = known.find((p) => p.chunk_ordinal === target.ordinal && p.text.toLowerCase() === text.toLowerCase());
          if (same) return { phrasing: view(same), created: false };
          if (known.filter((p) => p.origin === 'team').length >= MAX_TEAM_PHRASINGS_PER_DOCUMENT) {
            throw new AppError('unprocessable', `This page already has ${MAX_TEAM_PHRASINGS_PER_DOCUMENT} phrasings from your team: remove one, or add the answer as an entry of its own.`, [
              { field: 'text', message: `is one more than the ${MAX_TEAM_PHRASINGS_PER_DOCUMENT} phrasings a page may have from the team` },
            ]);
          }
          const language = primaryLanguage(input.language ?? undefined) || target.language;
          const written = await addPhrasings(queries, workspaceId, target.document_id, [{ chunkOrdinal: target.ordinal, text, language, origin: 'team', createdBy: userId }]);
          return { phrasing: view(written![0]!), created: true };
        }),
      );
    },

    /**
     * GET /v1/knowledge/passages: the passages the search finds for a question, best first (the page picker of "This
     * page answers it"). The search alone: no model and no endpoint is asked, nothing is counted as traffic.
     */
    async findPassages(workspaceId: string, question: string, language: string | undefined): Promise<FoundPassage[]> {
      const lang = primaryLanguage(language) || detectLanguage(question) || 'en';
      const found = await service.search(workspaceId, question, lang, { limit: PICKER_PASSAGES });
      const origins = new Map((await knowledge.chunkOrigins(workspaceId, found.passages.map((p) => p.id))).map((o) => [o.chunk_id, o.document_id]));
      return found.passages.map((p) => ({
        id: p.id,
        entry_id: origins.get(p.id) ?? null,
        title: p.title,
        excerpt: p.text.length > TRY_EXCERPT_CHARS ? `${p.text.slice(0, TRY_EXCERPT_CHARS).trimEnd()}…` : p.text,
        url: p.url,
        score: p.score,
      }));
    },

    /** GET /v1/knowledge/entries/{id}/phrasings: a document's phrasings, by passage; 404 when it is not the workspace's. */
    async list(workspaceId: string, documentId: string): Promise<PhrasingView[]> {
      if (!(await knowledge.phrasingTargetByDocument(workspaceId, documentId))) throw notFound('The knowledge entry');
      return (await knowledge.listPhrasings(workspaceId, documentId)).map(view);
    },

    /** DELETE /v1/knowledge/phrasings/{id}: takes a phrasing back; 404 when the workspace has none with that id. */
    async remove(workspaceId: string, id: string): Promise<void> {
      const found = await knowledge.findPhrasing(workspaceId, id);
      if (!found) throw notFound('The phrasing');
      await service.writing(workspaceId, () => knowledge.inTransaction((queries) => removePhrasings(queries, workspaceId, found.document_id, { ids: [id] })));
    },
  };

  /**
   * The team's last reply after the customer last asked this question (the same words, spaces aside) in the
   * conversation; undefined when the question is not there or nobody of the team replied after it.
   */
  async function teamReplyAfter(sessionId: string, question: string): Promise<string | undefined> {
    const messages = (await conversations.messages(sessionId, null, MAX_CONVERSATION_MESSAGES)) ?? [];
    const asked = messages.findLastIndex((m) => m.from === 'customer' && cleanLine(m.text) === question);
    if (asked < 0) return undefined;
    return messages.slice(asked + 1).findLast((m) => m.from === 'agent' && /[\p{L}\p{N}]/u.test(m.text))?.text;
  }
}

export type KnowledgeTeaching = ReturnType<typeof createKnowledgeTeaching>;

function unprocessable(field: string, message: string): AppError {
  return new AppError('unprocessable', `${field} ${message}.`, [{ field, message }]);
}

function view(row: KnowledgePhrasing): PhrasingView {
  return {
    id: row.id,
    entry_id: row.document_id,
    passage: row.chunk_ordinal,
    text: row.text,
    language: row.language,
    origin: row.origin,
    created_at: new Date(row.created_at).toISOString(),
  };
}
