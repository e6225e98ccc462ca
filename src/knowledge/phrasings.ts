/**
 * Phrasings: other wordings of a passage (docs/knowledge.md, "The team teaches the bot"). A phrasing is how a customer
 * asked what a passage answers; the team adds one from a question the bot could not answer ("This page answers it"),
 * and a model may write some from the passage (origin `generated`). They are searched like the passage's own text:
 * the chunk's tsv holds them with weight B (db/repositories/knowledge-phrasings.repository.ts).
 *
 * `addPhrasings` and `removePhrasings` are the one way to change them: each writes the rows and computes the tsv of
 * the document's chunks again, in the caller's transaction. Run them inside the knowledge service's `writing`, so the
 * next search of this process looks at the knowledge again.
 */
import { randomUUID } from 'node:crypto';
import type { KnowledgeQueries, PhrasingFilter } from '../../db/repositories/knowledge.repository.ts';
import type { KnowledgePhrasing, PhrasingOrigin } from '../../db/schema.ts';
import { AppError } from '../errors.ts';
import { primaryLanguage } from '../text/language.ts';
import { searchConfigFor } from './chunking.ts';
import { MAX_PHRASING_CHARS } from './phrasing-limits.ts';
import { cleanLine } from './text.ts';

/** A phrasing to add to one document. */
export interface PhrasingInput {
  /** The passage's ordinal (knowledge_chunks.ordinal); null: the whole document, every passage of it. */
  chunkOrdinal: number | null;
  /** Cleaned to one line; 1..MAX_PHRASING_CHARS characters. */
  text: string;
  /** Language tag of the wording (en, nl…); null when unknown. */
  language?: string | null;
  origin: PhrasingOrigin;
  /** The user who taught it (team). */
  createdBy?: string | null;
  /** Generated ones: a hash of the passage text they were made from. */
  passageHash?: string | null;
  /** Generated ones: the model's tokens spent on them. */
  tokens?: number | null;
}

/** A phrasing's text as stored: one line, no control characters; throws 422 without a letter or digit, or too long. */
export function phrasingText(text: string, field = 'text'): string {
  const line = cleanLine(text);
  if (!/[\p{L}\p{N}]/u.test(line)) throw new AppError('unprocessable', `${field} has no letters or digits.`, [{ field, message: 'has no letters or digits' }]);
  if ([...line].length > MAX_PHRASING_CHARS) {
    throw new AppError('unprocessable', `${field} is longer than ${MAX_PHRASING_CHARS} characters.`, [{ field, message: `is longer than ${MAX_PHRASING_CHARS} characters` }]);
  }
  return line;
}

/**
 * Adds phrasings to a document of the workspace and indexes them (the document's chunks' tsv computed again).
 * Answers the rows written; undefined when the workspace has no such document. Texts are cleaned (`phrasingText`).
 */
export async function addPhrasings(
  queries: KnowledgeQueries,
  workspaceId: string,
  documentId: string,
  rows: readonly PhrasingInput[],
): Promise<KnowledgePhrasing[] | undefined> {
  const target = await queries.phrasingTargetByDocument(workspaceId, documentId);
  if (!target) return undefined;
  const written = await queries.insertPhrasings(
    rows.map((row) => ({
      id: randomUUID(),
      workspaceId,
      documentId,
      chunkOrdinal: row.chunkOrdinal,
      text: phrasingText(row.text),
      language: primaryLanguage(row.language ?? undefined) || null,
      origin: row.origin,
      createdBy: row.createdBy ?? null,
      passageHash: row.passageHash ?? null,
      tokens: row.tokens ?? null,
    })),
  );
  if (written.length) await queries.reindexChunks(documentId, searchConfigFor(target.language));
  return written;
}

/**
 * Removes the document's phrasings the filter names (by ids, origin, passage) and indexes the document again.
 * Answers the rows removed (none: nothing was written).
 */
export async function removePhrasings(
  queries: KnowledgeQueries,
  workspaceId: string,
  documentId: string,
  filter: PhrasingFilter,
): Promise<KnowledgePhrasing[]> {
  const removed = await queries.deletePhrasings(workspaceId, documentId, filter);
  if (removed.length === 0) return removed;
  const target = await queries.phrasingTargetByDocument(workspaceId, documentId);
  if (target) await queries.reindexChunks(documentId, searchConfigFor(target.language));
  return removed;
}
