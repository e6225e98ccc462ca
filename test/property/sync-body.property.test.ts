/**
 * The content-sync API's bodies, paths and queries (protocol §1.6; src/http/routes/sync.ts), as properties over the real
 * service: whatever a plugin sends, the answer is a success or a clear 4xx, never a 5xx; a page or product that was
 * accepted is stored and listed with its text by the outside-text rule (src/text/outside-text.ts, applied where
 * src/http/app.ts parses JSON, queries and paths), then the knowledge base's own line cleaning (src/knowledge/text.ts).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cleanLine } from '../../src/knowledge/text.ts';
import { cleanText } from '../../src/text/outside-text.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type ApiResponse, type TestService } from '../helpers/service.ts';
import { dirtyText, expectAllClean, nestedJsonText, outsideJson, outsideText, OVER_HTTP } from './outside.ts';


function expectClear(what: string, res: ApiResponse): void {
  expect(res.status < 300 || (res.status >= 400 && res.status < 500), `${what}: ${res.status} ${res.text.slice(0, 300)}`).toBe(true);
  if (res.status >= 400) expect(typeof res.body?.error?.code).toBe('string');
}

describeEachDatabase('content-sync bodies, paths and queries, whatever a plugin sends', (get) => {
  let service: TestService;
  let syncKey = '';
  let n = 0;

  beforeAll(async () => {
    service = await startTestService(get());
    const ws = await seedWorkspace(service);
    syncKey = (await service.api('POST', '/v1/keys/sync', { token: ws.owner })).body.key as string;
  });
  afterAll(async () => {
    await service.stop();
  });

  const sync = (method: string, path: string, body?: unknown, raw?: string) =>
    service.api(method, path, { headers: { 'x-sync-key': syncKey, ...(raw === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body }), ...(raw === undefined ? {} : { raw }) });
  /** The listed item of that kind and id (the list is in external_id order; the ids here sort after nothing else). */
  const listed = async (plural: 'pages' | 'products', externalId: string) => {
    for (let cursor: string | null | undefined; ; ) {
      const page = await sync('GET', `/v1/sync/${plural}?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      const item = (page.body.items as { external_id: string }[]).find((i) => i.external_id === externalId);
      if (item || !page.body.next_cursor) return item as Record<string, unknown> | undefined;
      cursor = page.body.next_cursor as string;
    }
  };

  const title = fc.oneof(dirtyText, outsideText({ minLength: 1, maxLength: 300 }));
  const language = fc.oneof(fc.constantFrom('nl', 'en', 'nl-BE', null), dirtyText);
  const url = fc.oneof(fc.constant('https://shop.example/p'), fc.webUrl(), dirtyText.map((d) => `https://shop.example/${d}`), fc.constant(null));

  it('property: a page holding any text is stored and listed with it, cleaned', async () => {
    const page = fc.record({ title, body: fc.oneof(outsideText(), dirtyText), language, url, format: fc.constantFrom('text', 'html') }, { requiredKeys: ['title', 'body'] });
    await fc.assert(
      fc.asyncProperty(page, async (body) => {
        const id = `page-${n++}`;
        const res = await sync('PUT', `/v1/sync/pages/${id}`, body);
        expectClear('PUT /v1/sync/pages/{id}', res);
        expectAllClean(res.body);
        if (res.status >= 300) return;
        const item = await listed('pages', id);
        expect(item?.title).toBe(cleanLine(cleanText(body.title)));
        expectAllClean(item);
      }),
      { numRuns: 30, ...OVER_HTTP },
    );
  });

  it('property: a product holding any text is stored and listed with it, cleaned', async () => {
    const product = fc.record(
      { title, description: fc.oneof(outsideText(), dirtyText), sku: fc.oneof(outsideText({ maxLength: 100 }), dirtyText, fc.constant(null)), currency: fc.oneof(fc.constantFrom('EUR', 'usd', null), dirtyText), price: fc.oneof(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.constant(null)), language, url },
      { requiredKeys: ['title'] },
    );
    await fc.assert(
      fc.asyncProperty(product, async (body) => {
        const id = `product-${n++}`;
        const res = await sync('PUT', `/v1/sync/products/${id}`, body);
        expectClear('PUT /v1/sync/products/{id}', res);
        if (res.status >= 300) return;
        const item = await listed('products', id);
        expect(item?.title).toBe(cleanLine(cleanText(body.title)));
        if (typeof body.sku === 'string') expect(item?.sku).toBe(cleanLine(cleanText(body.sku)) || null);
        expectAllClean(item);
      }),
      { numRuns: 30, ...OVER_HTTP },
    );
  });

  it('property: any external_id in the path, percent-encoded or not, valid UTF-8 or not: a success or a clear 4xx', async () => {
    const rawPercent = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 6 }).map((bytes) => bytes.map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''));
    const id = fc.oneof(outsideText({ minLength: 1 }).map((t) => encodeURIComponent(t.toWellFormed())), dirtyText.map((t) => encodeURIComponent(t.toWellFormed())), rawPercent, fc.constantFrom('%00', '%ED%A0%80', '%C0%80', '%FF', 'a%', '%zz'));
    await fc.assert(
      fc.asyncProperty(id, fc.constantFrom('PUT', 'DELETE'), async (externalId, method) => {
        const res = await sync(method, `/v1/sync/pages/${externalId}`, method === 'PUT' ? { title: 'T', body: 'B' } : undefined);
        expectClear(`${method} /v1/sync/pages/${externalId}`, res);
        expectAllClean(res.body);
      }),
      { numRuns: 40, ...OVER_HTTP },
    );
  });

  it('property: any cursor and limit in the query: a list or a clear 4xx', async () => {
    const cursor = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 30 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
      outsideText().map((t) => encodeURIComponent(t.toWellFormed())),
      fc.constantFrom('AA', 'AAAA', '7aCA', '%00', '%ED%A0%80'),
    );
    const limit = fc.oneof(fc.integer({ min: -5, max: 300 }).map(String), outsideText().map((t) => encodeURIComponent(t.toWellFormed())));
    await fc.assert(
      fc.asyncProperty(cursor, limit, fc.constantFrom('pages', 'products'), async (c, l, plural) => {
        const res = await sync('GET', `/v1/sync/${plural}?cursor=${c}&limit=${l}`);
        expectClear(`GET /v1/sync/${plural}?cursor=${c}&limit=${l}`, res);
        expectAllClean(res.body);
      }),
      // "AA" is the base64url of one 0x00 byte: a cursor this API never gave out, that decodes to U+0000.
      { numRuns: 40, ...OVER_HTTP, examples: [['AA', '1', 'pages']] },
    );
  });

  it('property: a batch of items holding any text is applied whole or refused whole, and what it applied is listed', async () => {
    const item = fc.oneof(
      fc.record({ kind: fc.constant('page'), title, body: outsideText(), language }, { requiredKeys: ['kind', 'title', 'body'] }),
      fc.record({ kind: fc.constant('product'), title, description: outsideText(), sku: fc.oneof(outsideText({ maxLength: 100 }), dirtyText) }, { requiredKeys: ['kind', 'title'] }),
      fc.record({ kind: fc.oneof(fc.constantFrom('page', 'product'), outsideText()), title: outsideJson(1), body: outsideJson(1) }, { requiredKeys: [] }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(item, { maxLength: 5 }), async (items) => {
        const upserts = items.map((i) => ({ ...i, external_id: `batch-${n++}` }));
        const res = await sync('POST', '/v1/sync/batch', { upserts });
        expectClear('POST /v1/sync/batch', res);
        expectAllClean(res.body);
        if (res.status !== 200) return;
        for (const u of upserts) {
          const listedItem = await listed(u.kind === 'product' ? 'products' : 'pages', u.external_id);
          expect(listedItem?.title).toBe(cleanLine(cleanText(u.title as string)));
        }
      }),
      { numRuns: 25, ...OVER_HTTP },
    );
  });

  it('property: any JSON body, and bodies nested thousands of levels deep, get a success or a clear 4xx', async () => {
    const body = fc.oneof(
      outsideJson().map((v) => JSON.stringify(v)),
      fc.integer({ min: 1, max: 100_000 }).map((depth) => nestedJsonText(depth, '"\\u0000"')),
      fc.integer({ min: 1, max: 100_000 }).map((depth) => `{"upserts":[${nestedJsonText(depth, '"\\ud800"')}]}`),
      fc.integer({ min: 1, max: 100_000 }).map((depth) => `{"title":"T","body":${nestedJsonText(depth, '1')}}`),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('PUT /v1/sync/pages/deep', 'PUT /v1/sync/products/deep', 'POST /v1/sync/batch'), body, async (route, raw) => {
        const [method, path] = route.split(' ') as [string, string];
        const res = await sync(method, path, undefined, raw);
        expectClear(route, res);
        expectAllClean(res.body);
      }),
      { numRuns: 30, ...OVER_HTTP },
    );
  });
});
