import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { knowledgeRepository, type KnowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import { createKnowledgeService, type KnowledgeService } from '../../src/knowledge/knowledge-service.ts';
import { MAX_PHRASING_CHARS } from '../../src/knowledge/phrasing-limits.ts';
import { addPhrasings, removePhrasings } from '../../src/knowledge/phrasings.ts';
import { describeEachDatabase } from '../helpers/db.ts';

describeEachDatabase('phrasings: other wordings of a passage, searched like its text', (get) => {
  let repo: KnowledgeRepository;
  let kb: KnowledgeService;
  const shop = randomUUID();
  const other = randomUUID();

  /** The lexemes of a chunk's tsv with their weights, e.g. { hire: 'B', rent: 'D' }. */
  async function weights(documentId: string, ordinal = 0): Promise<Record<string, string>> {
    const { rows } = await sql<{ lexeme: string; weights: string[] }>`
      select t.lexeme, t.weights from knowledge_chunks c cross join lateral unnest(c.tsv) as t
      where c.document_id = ${documentId} and c.ordinal = ${ordinal}`.execute(get().db);
    return Object.fromEntries(rows.map((r) => [r.lexeme, [...new Set(r.weights)].sort().join('')]));
  }
  async function documentOf(externalId: string): Promise<string> {
    const row = await get().db.selectFrom('knowledge_documents').select('id').where('workspace_id', '=', shop).where('external_id', '=', externalId).executeTakeFirstOrThrow();
    return row.id;
  }
  const page = (externalId: string, body: string) => ({ kind: 'page' as const, external_id: externalId, language: 'en', title: 'Bike rental', body });

  beforeAll(async () => {
    const { db } = get();
    await db.insertInto('workspaces').values([{ id: shop, name: 'Cycle shop' }, { id: other, name: 'Other shop' }]).execute();
    repo = knowledgeRepository(db);
    kb = createKnowledgeService({ knowledge: repo });
    await kb.applyBatch(shop, { upserts: [page('rental', 'You can rent an e-bike for 29 euro per day.')], deletes: [] });
  });

  describe('adding and removing', () => {
    it("a team phrasing goes into its passage's tsv with weight B, beside the title (A) and the text (D)", async () => {
      const id = await documentOf('rental');
      const added = await repo.inTransaction((q) => addPhrasings(q, shop, id, [{ chunkOrdinal: 0, text: "  I'd like to  hire an electric bike ", origin: 'team' }]));
      expect(added).toHaveLength(1);
      expect(added![0]).toMatchObject({ text: "I'd like to hire an electric bike", origin: 'team', chunk_ordinal: 0, document_id: id, workspace_id: shop });
      const w = await weights(id);
      expect(w).toMatchObject({ hire: 'B', electr: 'B', rental: 'A', rent: 'D', '29': 'D' });
      expect(w.bike).toContain('B');
    });

    it('removing it takes its words out of the tsv again', async () => {
      const id = await documentOf('rental');
      const removed = await repo.inTransaction((q) => removePhrasings(q, shop, id, { origin: 'team' }));
      expect(removed).toHaveLength(1);
      const w = await weights(id);
      expect(w.hire).toBeUndefined();
      expect(w.rent).toBe('D');
      expect(await repo.listPhrasings(shop, id)).toEqual([]);
    });

    it("another workspace's document is not there: nothing is written", async () => {
      const id = await documentOf('rental');
      expect(await repo.inTransaction((q) => addPhrasings(q, other, id, [{ chunkOrdinal: 0, text: 'hire a bike', origin: 'team' }]))).toBeUndefined();
      expect(await repo.listPhrasings(shop, id)).toEqual([]);
    });

    it(`a phrasing is one line of at most ${MAX_PHRASING_CHARS} characters; an empty one is refused`, async () => {
      const id = await documentOf('rental');
      await expect(repo.inTransaction((q) => addPhrasings(q, shop, id, [{ chunkOrdinal: 0, text: 'x'.repeat(MAX_PHRASING_CHARS + 1), origin: 'team' }]))).rejects.toMatchObject({ code: 'unprocessable' });
      await expect(repo.inTransaction((q) => addPhrasings(q, shop, id, [{ chunkOrdinal: 0, text: ' \u200b ?! ', origin: 'team' }]))).rejects.toMatchObject({ code: 'unprocessable' });
      expect(await repo.listPhrasings(shop, id)).toEqual([]);
    });

    it('a phrasing of the whole document (no passage) is in every passage', async () => {
      const long = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} about renting bikes by the day or by the week, with helmets and locks included in the price.`).join('\n\n');
      await kb.upsert(shop, 'long', page('long', long));
      const id = await documentOf('long');
      const chunks = await get().db.selectFrom('knowledge_chunks').select('ordinal').where('document_id', '=', id).execute();
      expect(chunks.length).toBeGreaterThan(1);
      await repo.inTransaction((q) => addPhrasings(q, shop, id, [{ chunkOrdinal: null, text: 'lease a bicycle', origin: 'generated', passageHash: 'abc', tokens: 12 }]));
      for (const { ordinal } of chunks) expect((await weights(id, ordinal)).leas).toBe('B');
      const [row] = await repo.listPhrasings(shop, id);
      expect(row).toMatchObject({ origin: 'generated', chunk_ordinal: null, passage_hash: 'abc', tokens: 12, created_by: null });
    });
  });

  describe('when the document is chunked again', () => {
    it("the phrasings stay in the new chunks' tsv, and one past the new chunks moves to the first", async () => {
      const long = Array.from({ length: 30 }, (_, i) => `Section ${i} on repairs: flat tyres, brakes, gears and a yearly service for every kind of bike we sell.`).join('\n\n');
      await kb.upsert(shop, 'repairs', { ...page('repairs', long), title: 'Repairs' });
      const id = await documentOf('repairs');
      const n = (await get().db.selectFrom('knowledge_chunks').select('ordinal').where('document_id', '=', id).execute()).length;
      expect(n).toBeGreaterThan(1);
      await repo.inTransaction((q) => addPhrasings(q, shop, id, [
        { chunkOrdinal: 0, text: 'fix a puncture', origin: 'team' },
        { chunkOrdinal: n - 1, text: 'tune-up price', origin: 'team' },
      ]));
      expect((await weights(id, n - 1)).tune).toBe('B');
      // The page shrinks to one passage.
      await kb.upsert(shop, 'repairs', { ...page('repairs', 'We repair every bike, flat tyres while you wait.'), title: 'Repairs' });
      const after = await get().db.selectFrom('knowledge_chunks').select('ordinal').where('document_id', '=', id).execute();
      expect(after.map((c) => c.ordinal)).toEqual([0]);
      expect((await repo.listPhrasings(shop, id)).map((p) => p.chunk_ordinal)).toEqual([0, 0]);
      expect(await weights(id)).toMatchObject({ punctur: 'B', tune: 'B', repair: 'AD' });
    });

    it("deleting the document deletes its phrasings", async () => {
      const id = await documentOf('repairs');
      await kb.remove(shop, 'page', 'repairs');
      expect(await get().db.selectFrom('knowledge_phrasings').select('id').where('document_id', '=', id).execute()).toEqual([]);
    });
  });
});
