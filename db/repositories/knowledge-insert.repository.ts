/**
 * "Insert from knowledge" when the knowledge search finds nothing (docs/interfaces.md, "The team's tools"): the
 * passages of a workspace that hold every one of a few words, as written, whatever the capitals. The search ranks a
 * customer's question; an agent who types one word of a title ("warranty") expects that page as well.
 */
import { sql } from 'kysely';
import type { Db } from '../database.ts';

export function knowledgeInsertRepository(db: Db) {
  return {
    /** At most `limit` passages holding every word in their title or text, the shortest titles first. */
    async holding(workspaceId: string, words: readonly string[], limit: number): Promise<{ id: string; title: string; text: string; url: string | null }[]> {
      if (words.length === 0) return [];
      let query = db
        .selectFrom('knowledge_chunks as c')
        .innerJoin('knowledge_documents as d', 'd.id', 'c.document_id')
        .select(['c.id', 'd.title', 'c.text', 'd.url'])
        .where('c.workspace_id', '=', workspaceId);
      for (const word of words) query = query.where(sql<boolean>`position(${word.toLowerCase()} in lower(d.title || ' ' || c.text)) > 0`);
      return query.orderBy(sql`length(d.title)`).orderBy('c.ordinal').limit(limit).execute();
    },
  };
}
