import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { knowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import { createKnowledgeService, type KnowledgeService, type SyncUpsertItem } from '../../src/knowledge/knowledge-service.ts';
import { RECALL_RANKED_LIMIT } from '../../src/knowledge/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';

describeEachDatabase('the knowledge search over more passages than it ranks', (get) => {
  let kb: KnowledgeService;
  const shop = randomUUID();
  const sharingOneWord = RECALL_RANKED_LIMIT * 2;
  const sharingTwoWords = RECALL_RANKED_LIMIT + 10;

  beforeAll(async () => {
    const { db } = get();
    await db.insertInto('workspaces').values({ id: shop, name: 'Fietsenwinkel' }).execute();
    kb = createKnowledgeService({ knowledge: knowledgeRepository(db) });
    const page = (id: string, title: string, body: string): SyncUpsertItem => ({ kind: 'page', external_id: id, language: 'nl', title, body });
    const upserts: SyncUpsertItem[] = [
      // More passages sharing one word of the question than the recall search ranks with cover density, written first.
      ...Array.from({ length: sharingOneWord }, (_, i) => page(`een-${i}`, `Bericht ${i}`, `Onze fiets nummer ${i} staat in de winkel.`)),
      ...Array.from({ length: sharingTwoWords }, (_, i) => page(`twee-${i}`, `Vlucht ${i}`, `Een fiets past niet in een helikopter, vlucht ${i}.`)),
      page('drie', 'Landingsplaats', 'Bij de landingsplaats voor de helikopter staat een fiets klaar.'),
    ];
    for (let i = 0; i < upserts.length; i += 100) await kb.applyBatch(shop, { upserts: upserts.slice(i, i + 100), deletes: [] });
  });

  it('recall: the passage with the most of the question’s words comes first, then those with more words than one', async () => {
    const result = await kb.search(shop, 'fiets helikopter landingsplaats zeppelinhaven', 'nl');
    expect(result.strategy).toBe('recall');
    expect(result.passages[0]?.externalId).toBe('drie');
    expect(result.passages).toHaveLength(5);
    for (const passage of result.passages) expect(passage.text).toContain('helikopter');
  });

  it('precise: of passages that score the same, those first in external_id order, wherever the limit cuts', async () => {
    expect((await kb.search(shop, 'landingsplaats fiets', 'nl')).passages.map((p) => p.externalId)).toEqual(['drie']);
    const { passages } = await kb.search(shop, 'fiets', 'nl', { limit: 20 });
    expect(passages).toHaveLength(20);
    const cut = passages.filter((p) => p.score === passages.at(-1)!.score).map((p) => p.externalId);
    // Every page of a family scores the same on "fiets" (same text but for a number); the cut is the families' first.
    const families = new Set(cut.map((id) => id.split('-')[0]!));
    const ids = (family: string) => (family === 'drie' ? ['drie'] : Array.from({ length: family === 'een' ? sharingOneWord : sharingTwoWords }, (_, i) => `${family}-${i}`));
    const all = [...families].flatMap(ids).sort();
    expect(cut).toEqual(all.slice(0, cut.length));
  });

  describe("the query's words as tsqueries (migration 0014)", () => {
    const terms = async (query: string, maxTerms: number, prefixMinChars: number | null) => {
      const { rows } = await sql<{ terms: string }>`select knowledge_query_terms('simple', ${query}, ${maxTerms}, ${prefixMinChars})::text as terms`.execute(get().db);
      return rows[0]!.terms;
    };

    it('keeps the longest words, as prefixes from the given length on', async () => {
      expect(await terms("O'Reilly's verzending naar de winkel", 3, 4)).toBe(`{'verzending':*,'reilly':*,'winkel':*}`);
    });
    it('without a prefix length, every word exact', async () => {
      expect(await terms('Verzending naar de winkel', 24, null)).toBe(`{'verzending','winkel','naar','de'}`);
    });
    it('no words: no terms, and "any of them" is null, which matches nothing', async () => {
      expect(await terms('  ', 24, 4)).toBe('{}');
      const { rows } = await sql<{ none: boolean }>`select knowledge_any_term('{}') is null as none`.execute(get().db);
      expect(rows[0]!.none).toBe(true);
    });
  });

  it('a search reads at most 64 kB of index entries not yet merged (gin_pending_list_limit)', async () => {
    const { rows } = await sql<{ options: string[] }>`select reloptions as options from pg_class where relname = 'knowledge_chunks_tsv' and relnamespace = to_regnamespace(current_schema())`.execute(get().db);
    expect(rows[0]?.options).toContain('gin_pending_list_limit=64');
  });
});
