import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BATCH_ITEMS, MAX_DOCUMENT_BODY_BYTES } from '../../src/knowledge/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

describeEachDatabase('the content-sync API and its keys', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let syncKey = '';
  let widgetKey = '';

  beforeAll(async () => {
    service = await startTestService(get());
    ws = await seedWorkspace(service);
  });
  afterAll(async () => {
    await service.stop();
  });

  const sync = (method: string, path: string, body?: unknown, key = syncKey) =>
    service.api(method, path, { headers: { 'x-sync-key': key }, ...(body === undefined ? {} : { body }) });
  const read = (path: string, key = widgetKey) => service.api('GET', path, { headers: { 'x-widget-key': key } });
  const page = (title: string, body: string) => ({ title, body, language: 'nl', url: 'https://shop.example/p' });

  describe('keys in the dashboard (owners and admins only)', () => {
    it('an agent may not make or read keys (403)', async () => {
      expect((await service.api('POST', '/v1/keys/sync', { token: ws.agent })).status).toBe(403);
      expect((await service.api('GET', '/v1/keys/sync', { token: ws.agent })).status).toBe(403);
      expect((await service.api('GET', '/v1/keys/widget', { token: ws.agent })).status).toBe(403);
      expect((await service.api('GET', '/v1/keys/widget')).status).toBe(401);
    });

    it('before the first sync key, there is none (404)', async () => {
      expect((await service.api('GET', '/v1/keys/sync', { token: ws.owner })).status).toBe(404);
    });

    it('POST /v1/keys/sync shows a new sync key once; afterwards only its hint', async () => {
      const made = await service.api('POST', '/v1/keys/sync', { token: ws.admin });
      expect(made.status).toBe(201);
      expect(made.body.key).toMatch(/^bls_[A-Za-z0-9_-]{43}$/);
      expect(made.body.key_hint).toBe(made.body.key.slice(-4));
      syncKey = made.body.key;

      const info = await service.api('GET', '/v1/keys/sync', { token: ws.owner });
      expect(info.status).toBe(200);
      expect(info.body).toEqual({ key_hint: made.body.key_hint, created_at: made.body.created_at });
      expect(info.text).not.toContain(syncKey);
    });

    it('stores the sync key only as its SHA-256 hash; the widget key is kept readable (it is public)', async () => {
      widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key;
      const rows = await get().db.selectFrom('api_keys').selectAll().where('workspace_id', '=', ws.workspaceId).where('revoked_at', 'is', null).execute();
      const syncRow = rows.find((r) => r.kind === 'sync')!;
      expect(syncRow.key_plain).toBeNull();
      expect(syncRow.key_hash).toBe(createHash('sha256').update(syncKey).digest('hex'));
      expect(JSON.stringify(rows.filter((r) => r.kind === 'sync'))).not.toContain(syncKey);
      expect(rows.find((r) => r.kind === 'widget')!.key_plain).toBe(widgetKey);
    });

    it('GET /v1/keys/widget makes the widget key on first read and answers the same key after', async () => {
      expect(widgetKey).toMatch(/^blw_[A-Za-z0-9_-]{43}$/);
      const again = await service.api('GET', '/v1/keys/widget', { token: ws.admin });
      expect(again.body.key).toBe(widgetKey);
    });

    it('a new sync key replaces the old one at once', async () => {
      const old = syncKey;
      syncKey = (await service.api('POST', '/v1/keys/sync', { token: ws.owner })).body.key;
      expect(syncKey).not.toBe(old);
      expect((await sync('GET', '/v1/sync/pages', undefined, old)).status).toBe(401);
      expect((await sync('GET', '/v1/sync/pages')).status).toBe(200);
    });
  });

  describe('who may call the sync API', () => {
    it('without a key: 401 with a JSON error naming the header', async () => {
      const res = await service.api('PUT', '/v1/sync/pages/x', { body: page('T', 'B') });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
      expect(res.body.error.message).toContain('X-Sync-Key');
      expect((await service.api('GET', '/v1/sync/pages')).status).toBe(401);
    });

    it('a wrong or malformed key: 401, in either header', async () => {
      expect((await sync('PUT', '/v1/sync/pages/x', page('T', 'B'), `bls_${'A'.repeat(43)}`)).status).toBe(401);
      expect((await sync('GET', '/v1/sync/pages', undefined, 'nonsense')).status).toBe(401);
      expect((await read('/v1/sync/pages', `blw_${'A'.repeat(43)}`)).status).toBe(401);
      // The sync key is not a widget key and the other way round.
      expect((await read('/v1/sync/pages', syncKey)).status).toBe(401);
      expect((await sync('GET', '/v1/sync/pages', undefined, widgetKey)).status).toBe(401);
    });

    it('a user bearer token does not open the sync API', async () => {
      expect((await service.api('GET', '/v1/sync/pages', { token: ws.owner })).status).toBe(401);
    });

    it('the widget key can read (200) but not write (403)', async () => {
      expect((await read('/v1/sync/pages')).status).toBe(200);
      expect((await read('/v1/sync/products')).status).toBe(200);
      const put = await service.api('PUT', '/v1/sync/pages/x', { headers: { 'x-widget-key': widgetKey }, body: page('T', 'B') });
      expect(put.status).toBe(403);
      expect(put.body.error.message).toContain('X-Sync-Key');
      expect((await service.api('DELETE', '/v1/sync/pages/x', { headers: { 'x-widget-key': widgetKey } })).status).toBe(403);
      expect((await service.api('POST', '/v1/sync/batch', { headers: { 'x-widget-key': widgetKey }, body: {} })).status).toBe(403);
    });
  });

  describe('pages and products', () => {
    it('PUT creates (201), the same again is unchanged (200), other content updates (200)', async () => {
      const body = page('Retourneren', 'Je kunt je bestelling binnen 30 dagen retourneren.');
      const created = await sync('PUT', '/v1/sync/pages/retour', body);
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ kind: 'page', external_id: 'retour', result: 'created', chunks: 1 });
      expect(created.body.content_hash).toMatch(/^[0-9a-f]{64}$/);

      const same = await sync('PUT', '/v1/sync/pages/retour', body);
      expect(same.status).toBe(200);
      expect(same.body).toMatchObject({ result: 'unchanged', content_hash: created.body.content_hash, updated_at: created.body.updated_at });
      expect(same.body.chunks).toBeUndefined();

      const changed = await sync('PUT', '/v1/sync/pages/retour', { ...body, body: 'Retourneren kan binnen 60 dagen.' });
      expect(changed.status).toBe(200);
      expect(changed.body.result).toBe('updated');
      expect(changed.body.content_hash).not.toBe(created.body.content_hash);
    });

    it('what is synced is what the AI finds', async () => {
      const result = await service.knowledge.search(ws.workspaceId, 'hoe lang kan ik retourneren', 'nl');
      expect(result.passages[0]).toMatchObject({ source: 'page', externalId: 'retour', title: 'Retourneren', url: 'https://shop.example/p' });
      expect(result.passages[0]!.text).toBe('Retourneren kan binnen 60 dagen.');
    });

    it('accepts HTML with format html and stores its text', async () => {
      const res = await sync('PUT', '/v1/sync/pages/html', { title: 'Over ons', format: 'html', body: '<p>Wij zijn <em>De Trapper</em>.</p><script>x()</script>' });
      expect(res.status).toBe(201);
      const found = await service.knowledge.search(ws.workspaceId, 'Trapper', 'nl');
      expect(found.passages[0]!.text).toBe('Wij zijn De Trapper.');
    });

    it('a product with its price, listed with the sync or the widget key', async () => {
      const res = await sync('PUT', '/v1/sync/products/sku-1', {
        title: 'Ringslot',
        description: 'Goedgekeurd slot.',
        price: 39.95,
        currency: 'eur',
        sku: 'TR-1',
        availability: 'in_stock',
        language: 'nl',
        url: null,
      });
      expect(res.status).toBe(201);
      const listed = await read('/v1/sync/products');
      expect(listed.body).toEqual({
        items: [expect.objectContaining({ external_id: 'sku-1', title: 'Ringslot', price: 39.95, currency: 'EUR', sku: 'TR-1', availability: 'in_stock', chunks: 1, url: null })],
        next_cursor: null,
      });
      const found = await service.knowledge.search(ws.workspaceId, 'ringslot prijs', 'nl');
      expect(found.passages[0]!.text).toContain('Prijs: € 39,95. Op voorraad.');
    });

    it('an external_id with a slash is sent as %2F', async () => {
      expect((await sync('PUT', '/v1/sync/pages/blog%2Fpost-1', page('Blog', 'Een bericht.'))).status).toBe(201);
      const listed = await sync('GET', '/v1/sync/pages');
      expect(listed.body.items.map((i: { external_id: string }) => i.external_id)).toContain('blog/post-1');
      expect((await sync('DELETE', '/v1/sync/pages/blog%2Fpost-1')).status).toBe(204);
    });

    it('DELETE removes the page and its passages (204); again: 404', async () => {
      expect((await sync('PUT', '/v1/sync/pages/tijdelijk', page('Uitverkoop', 'Regenjassen in de uitverkoop.'))).status).toBe(201);
      expect((await service.knowledge.search(ws.workspaceId, 'regenjassen', 'nl')).passages).toHaveLength(1);
      expect((await sync('DELETE', '/v1/sync/pages/tijdelijk')).status).toBe(204);
      expect((await service.knowledge.search(ws.workspaceId, 'regenjassen', 'nl')).passages).toHaveLength(0);
      const chunks = await get().db.selectFrom('knowledge_chunks').select('text').where('workspace_id', '=', ws.workspaceId).execute();
      expect(chunks.map((c) => c.text).join(' ')).not.toContain('Regenjassen');
      const again = await sync('DELETE', '/v1/sync/pages/tijdelijk');
      expect(again.status).toBe(404);
      expect(again.body.error.code).toBe('not_found');
    });

    it('lists with a limit and a cursor', async () => {
      for (const id of ['l1', 'l2', 'l3']) await sync('PUT', `/v1/sync/pages/list-${id}`, page(id, 'tekst'));
      const first = await sync('GET', '/v1/sync/pages?limit=2');
      expect(first.body.items).toHaveLength(2);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const rest = await read(`/v1/sync/pages?limit=200&cursor=${first.body.next_cursor}`);
      expect(rest.body.next_cursor).toBeNull();
      const all = [...first.body.items, ...rest.body.items].map((i: { external_id: string }) => i.external_id);
      expect(all).toEqual([...all].sort());
      expect(new Set(all).size).toBe(all.length);
      expect((await read('/v1/sync/pages?limit=0')).body.error.details[0].field).toBe('limit');
      expect((await read('/v1/sync/pages?cursor=!!')).body.error.details[0].field).toBe('cursor');
    });
  });

  describe('refusals name the field', () => {
    it.each([
      ['a title over 300 characters', { title: 't'.repeat(301), body: 'x' }, 'title'],
      ['a missing body', { title: 'T' }, 'body'],
      ['an unknown field', { title: 'T', body: 'x', colour: 'red' }, 'colour'],
      ['a url that is not http(s)', { title: 'T', body: 'x', url: 'javascript:alert(1)' }, 'url'],
      ['a bad format', { title: 'T', body: 'x', format: 'markdown' }, 'format'],
      ['a blank title', { title: '   ', body: 'x' }, 'title'],
    ])('%s: 400', async (_what, body, field) => {
      const res = await sync('PUT', '/v1/sync/pages/p', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it('an external_id outside the pattern: 400 naming external_id', async () => {
      const res = await sync('PUT', '/v1/sync/pages/has%20space', page('T', 'x'));
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe('external_id');
      expect((await sync('PUT', `/v1/sync/pages/${'x'.repeat(201)}`, page('T', 'x'))).status).toBe(400);
      // `.` and `..` could be made by a batch but never reached by a path (URL libraries drop them): refused.
      const dots = await sync('POST', '/v1/sync/batch', { upserts: [{ kind: 'page', external_id: '..', ...page('T', 'x') }] });
      expect(dots.status).toBe(400);
    });

    it('a product price below zero or a bad currency: 400', async () => {
      const res = await sync('PUT', '/v1/sync/products/p', { title: 'T', price: -1, currency: 'EURO' });
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['currency', 'price']);
    });

    it(`a body over ${MAX_DOCUMENT_BODY_BYTES} bytes: 413 naming body`, async () => {
      const res = await sync('PUT', '/v1/sync/pages/big', page('Groot', 'é'.repeat(MAX_DOCUMENT_BODY_BYTES / 2 + 1)));
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('payload_too_large');
      expect(res.body.error.details[0].field).toBe('body');
      expect((await sync('PUT', '/v1/sync/pages/big', page('Groot', 'a'.repeat(MAX_DOCUMENT_BODY_BYTES)))).status).toBe(201);
    });

    it('a request over 1 MB: 413', async () => {
      const res = await sync('POST', '/v1/sync/batch', { upserts: [{ kind: 'page', external_id: 'x', title: 'x', body: 'a'.repeat(1_100_000) }] });
      expect(res.status).toBe(413);
    });
  });

  describe('POST /v1/sync/batch: all or nothing', () => {
    const listIds = async () => (await sync('GET', '/v1/sync/pages?limit=200')).body.items.map((i: { external_id: string }) => i.external_id) as string[];

    it('applies upserts and deletes in one go and answers item by item', async () => {
      await sync('PUT', '/v1/sync/pages/b-old', page('Oud', 'weg ermee'));
      const res = await sync('POST', '/v1/sync/batch', {
        upserts: [
          { kind: 'page', external_id: 'b-1', ...page('Een', 'eerste') },
          { kind: 'product', external_id: 'b-2', title: 'Twee', price: 2 },
          { kind: 'page', external_id: 'retour', ...page('Retourneren', 'Retourneren kan binnen 90 dagen.') },
        ],
        deletes: [
          { kind: 'page', external_id: 'b-old' },
          { kind: 'page', external_id: 'never-was' },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body.upserts.map((r: { result: string }) => r.result)).toEqual(['created', 'created', 'updated']);
      expect(res.body.deletes).toEqual([
        { kind: 'page', external_id: 'b-old', result: 'deleted' },
        { kind: 'page', external_id: 'never-was', result: 'not_found' },
      ]);
      const ids = await listIds();
      expect(ids).toContain('b-1');
      expect(ids).not.toContain('b-old');
    });

    it('a bad item refuses the whole batch: 400 naming upserts[3].external_id, nothing applied', async () => {
      const before = await listIds();
      const res = await sync('POST', '/v1/sync/batch', {
        upserts: [
          { kind: 'page', external_id: 'n-0', title: 'a', body: 'a' },
          { kind: 'page', external_id: 'n-1', title: 'b', body: 'b' },
          { kind: 'product', external_id: 'n-2', title: 'c' },
          { kind: 'page', external_id: 'bad id!', title: 'd', body: 'd' },
          { kind: 'video', external_id: 'n-4' },
        ],
        deletes: [{ kind: 'page', external_id: 'b-1' }, { kind: 'page' }],
      });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('upserts[3].external_id');
      expect(res.body.error.details).toEqual([
        { field: 'upserts[3].external_id', message: expect.stringContaining('must match pattern') },
        { field: 'upserts[4].kind', message: 'must be one of "page", "product"' },
        { field: 'deletes[1].external_id', message: 'is required' },
      ]);
      expect(await listIds()).toEqual(before);
    });

    it('the same page twice in one batch: 400 naming the repeat', async () => {
      const res = await sync('POST', '/v1/sync/batch', {
        upserts: [{ kind: 'page', external_id: 'dup', title: 'a', body: 'a' }],
        deletes: [{ kind: 'page', external_id: 'dup' }],
      });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0]).toEqual({ field: 'deletes[0].external_id', message: expect.stringContaining('repeats upserts[0]') });
      expect(await listIds()).not.toContain('dup');
    });

    it('an item over the size limit: 413 naming it, nothing applied', async () => {
      const res = await sync('POST', '/v1/sync/batch', {
        upserts: [
          { kind: 'page', external_id: 's-0', title: 'a', body: 'a' },
          { kind: 'page', external_id: 's-1', title: 'b', body: 'x'.repeat(MAX_DOCUMENT_BODY_BYTES + 1) },
        ],
      });
      expect(res.status).toBe(413);
      expect(res.body.error.details[0].field).toBe('upserts[1].body');
      expect(await listIds()).not.toContain('s-0');
    });

    it(`more than ${MAX_BATCH_ITEMS} items: 400`, async () => {
      const item = (i: number) => ({ kind: 'page', external_id: `m-${i}` });
      const tooMany = await sync('POST', '/v1/sync/batch', { deletes: Array.from({ length: MAX_BATCH_ITEMS + 1 }, (_, i) => item(i)) });
      expect(tooMany.status).toBe(400);
      const together = await sync('POST', '/v1/sync/batch', {
        upserts: Array.from({ length: 60 }, (_, i) => ({ ...item(i), title: 't', body: 'b' })),
        deletes: Array.from({ length: 41 }, (_, i) => item(100 + i)),
      });
      expect(together.status).toBe(400);
      expect(await listIds()).not.toContain('m-0');
    });
  });

  describe('workspaces never see each other', () => {
    it("another workspace's sync key lists only its own pages and cannot delete ours", async () => {
      const other = await seedWorkspace(service, 'Other');
      const otherKey = (await service.api('POST', '/v1/keys/sync', { token: other.owner })).body.key as string;
      expect((await sync('GET', '/v1/sync/pages', undefined, otherKey)).body.items).toEqual([]);
      expect((await sync('DELETE', '/v1/sync/pages/retour', undefined, otherKey)).status).toBe(404);
      expect((await sync('PUT', '/v1/sync/pages/retour', page('Van hen', 'zeppelin'), otherKey)).status).toBe(201);
      expect((await service.knowledge.search(ws.workspaceId, 'zeppelin', 'nl')).passages).toEqual([]);
      expect((await service.knowledge.search(ws.workspaceId, 'retourneren', 'nl')).passages[0]!.title).toBe('Retourneren');
    });
  });

  it('/openapi.json describes the sync routes with their keys', async () => {
    const doc = (await service.api('GET', '/openapi.json')).body;
    expect(doc.components.securitySchemes.syncKey).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Sync-Key' }));
    expect(doc.components.securitySchemes.widgetKey).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Widget-Key' }));
    expect(doc.paths['/v1/sync/pages/{external_id}'].put.security).toEqual([{ syncKey: [] }]);
    expect(doc.paths['/v1/sync/pages/{external_id}'].put.responses['403']).toBeDefined();
    expect(doc.paths['/v1/sync/pages'].get.security).toEqual([{ syncKey: [] }, { widgetKey: [] }]);
    expect(doc.paths['/v1/sync/batch'].post).toBeDefined();
    expect(doc.paths['/v1/keys/sync'].post.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/v1/keys/widget'].get).toBeDefined();
  });
});
