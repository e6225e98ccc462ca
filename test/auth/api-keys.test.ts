import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { apiKeysRepository } from '../../db/repositories/api-keys.repository.ts';
import { createApiKeysService, type ApiKeysService } from '../../src/auth/api-keys.ts';
import { describeEachDatabase } from '../helpers/db.ts';

describeEachDatabase('the knowledge tables and the sync keys in the database', (get) => {
  let keys: ApiKeysService;
  const ws = randomUUID();

  beforeAll(async () => {
    await get().db.insertInto('workspaces').values({ id: ws, name: 'Keys' }).execute();
    keys = createApiKeysService({ apiKeys: apiKeysRepository(get().db) });
  });

  it('index the chunks with GIN on tsv and by workspace', async () => {
    const { rows } = await sql<{ indexname: string; indexdef: string }>`
      select indexname, indexdef from pg_indexes where tablename = 'knowledge_chunks' and schemaname = current_schema()`.execute(get().db);
    expect(rows.find((r) => r.indexname === 'knowledge_chunks_tsv')?.indexdef).toMatch(/USING gin \(tsv\)/);
    expect(rows.map((r) => r.indexname)).toContain('knowledge_chunks_workspace');
  });

  it('the text-search configurations we index with exist on this server', async () => {
    const { rows } = await sql<{ v: string }>`select to_tsvector('dutch', 'verzendkosten retourneren')::text || ' ' || to_tsvector('english', 'shipping')::text as v`.execute(get().db);
    expect(rows[0]!.v).toBe("'retourner':2 'verzendkost':1 'ship':1");
  });

  it('new sync keys made at the same moment: each call answers, and exactly one key stays live', async () => {
    const made = await Promise.all(Array.from({ length: 5 }, () => keys.rotateSyncKey(ws)));
    const live = await Promise.all(made.map((m) => keys.workspaceForSyncKey(m.key)));
    expect(live.filter(Boolean)).toHaveLength(1);
    const rows = await get().db.selectFrom('api_keys').select('id').where('workspace_id', '=', ws).where('kind', '=', 'sync').where('revoked_at', 'is', null).execute();
    expect(rows).toHaveLength(1);
  });

  it('the widget key read at the same moment is one key', async () => {
    const read = await Promise.all(Array.from({ length: 5 }, () => keys.widgetKey(ws)));
    expect(new Set(read.map((r) => r.key)).size).toBe(1);
    expect(await keys.workspaceForWidgetKey(read[0]!.key)).toBe(ws);
  });

  it('the database itself refuses a second live key of a kind and a readable sync key', async () => {
    const row = { workspace_id: ws, kind: 'sync' as const, key_hint: 'abcd', revoked_at: null };
    // A live sync key exists (above): a second one breaks the one-live-key index.
    await expect(get().db.insertInto('api_keys').values({ ...row, id: randomUUID(), key_hash: randomUUID(), key_plain: null }).execute()).rejects.toThrow();
    // Even a revoked sync key may not be stored readable.
    await expect(
      get().db.insertInto('api_keys').values({ ...row, id: randomUUID(), key_hash: randomUUID(), key_plain: 'bls_readable', revoked_at: new Date() }).execute(),
    ).rejects.toThrow();
  });

  it('a key of the wrong shape is not looked up', async () => {
    for (const key of ['', 'bls_', `bls_${'a'.repeat(42)}`, `blt_${'a'.repeat(43)}`, `bls_${'a'.repeat(43)}\n`]) {
      expect(await keys.workspaceForSyncKey(key)).toBeUndefined();
      expect(await keys.workspaceForWidgetKey(key)).toBeUndefined();
    }
  });
});
