/**
 * A website's sync (docs/knowledge.md, "Websites and files"), against a local HTTPS site signed by the test CA, through
 * the real service and its API, on both databases: a sitemap index and robots.txt (a disallowed page is never asked
 * for), a redirect chain followed, a 404, an oversized page cut, a redirect to 169.254.169.254 refused, a page that
 * changes between syncs and one that vanishes, a re-sync with nothing changed, and two engines on one database.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knowledgeSourcesRepository } from '../../../db/repositories/knowledge-sources.repository.ts';
import { createLogger } from '../../../src/log.ts';
import { GuardedClient } from '../../../src/net/index.ts';
import { ExtractionPool } from '../../../src/knowledge/sources/extraction-pool.ts';
import { createSourceScheduler } from '../../../src/knowledge/sources/source-scheduler.ts';
import { createWebsiteSync } from '../../../src/knowledge/sources/website-sync.ts';
import { describeEachDatabase } from '../../helpers/db.ts';
import { startHttpsServer, testCa, type TestHttpsServer } from '../../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../../helpers/service.ts';

const LAST_MODIFIED = 'Wed, 01 Jan 2025 10:00:00 GMT';

/** The shop's site: pages by path; each answered with an ETag of its body and a 304 to a matching If-None-Match. */
function shopSite() {
  const pages = new Map<string, string>();
  const page = (title: string, text: string) =>
    `<!doctype html><html lang="en"><head><title>${title}</title></head><body><nav><a href="/">Home</a></nav>` +
    `<main><article><h1>${title}</h1><p>${text}</p><p>${text}</p></article></main><footer>Cookie settings</footer></body></html>`;
  pages.set('/returns', page('Returns', 'You can return shoes within 45 days when they have not been worn outside. Refunds reach your card within a week.'));
  pages.set('/shipping', page('Shipping', 'We ship to Belgium and Germany with a courier; parcels arrive within three working days.'));
  pages.set('/gift-cards', page('Gift cards', 'Gift cards never expire and can be spent on anything in the shop, also in the sale.'));
  pages.set('/private/secret', page('Secret', 'Staff discount codes live here.'));
  pages.set('/changing', page('Opening hours', 'The shop opens at nine on weekdays, including the first Monday of the month.'));
  pages.set('/vanishing', page('Old promotion', 'The zeppelin promotion gives a free umbrella with every order.'));
  // Past 2 MB: the start of the page is read.
  pages.set('/big', page('Catalogue', `The aardvark collection is our oldest line. ${'Filler words about the catalogue. '.repeat(70_000)}`));
  const listed = new Set(['/returns', '/shipping', '/old-a', '/private/secret', '/missing', '/big', '/meta', '/brochure.pdf', '/changing', '/vanishing']);
  const etag = (body: string) => `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    const origin = `https://${req.headers.host}`;
    if (path === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`User-agent: *\nDisallow: /private\n\nUser-agent: otherbot\nDisallow: /\n\nSitemap: ${origin}/sitemap.xml\n`);
      return;
    }
    if (path === '/sitemap.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${origin}/sitemap-pages.xml</loc></sitemap></sitemapindex>`);
      return;
    }
    if (path === '/sitemap-pages.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${[...listed].map((p) => `<url><loc>${origin}${p}</loc></url>`).join('')}</urlset>`);
      return;
    }
    if (path === '/old-a') return void res.writeHead(301, { location: '/old-b' }).end();
    if (path === '/old-b') return void res.writeHead(302, { location: `${origin}/gift-cards` }).end();
    if (path === '/meta') return void res.writeHead(302, { location: 'https://169.254.169.254/latest/meta-data/' }).end();
    if (path === '/brochure.pdf') return void res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.4 not really');
    const body = pages.get(path);
    if (body === undefined) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    const tag = etag(body);
    if (req.headers['if-none-match'] === tag) return void res.writeHead(304, { etag: tag }).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', etag: tag, 'last-modified': LAST_MODIFIED });
    res.end(body);
  }
  return { pages, listed, handle, page };
}

describeEachDatabase('a website synced as knowledge', (getDb) => {
  let service: TestService;
  let site: TestHttpsServer;
  let shop: ReturnType<typeof shopSite>;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let sourceId: string;

  beforeAll(async () => {
    shop = shopSite();
    site = await startHttpsServer((req, res) => shop.handle(req, res));
    // The scheduler looks only when asked (an add or "Sync now" wakes it).
    service = await startTestService(getDb(), { PUBLIC_URL: 'https://botlink.example' }, { knowledgeSources: { intervalMs: 0 } });
    ws = await seedWorkspace(service);
  });
  afterAll(async () => {
    await service?.stop();
    await site?.close();
  });

  /** Polls the source until a sync after `after` is done (or failed). */
  async function synced(after: string | null) {
    const started = performance.now();
    for (;;) {
      const got = await service.api('GET', `/v1/knowledge/sources/${sourceId}`, { token: ws.agent });
      expect(got.status).toBe(200);
      if ((got.body.status === 'done' || got.body.status === 'failed') && got.body.last_synced_at !== after) {
        return { source: got.body, ms: Math.round(performance.now() - started) };
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const search = async (q: string) => (await service.knowledge.search(ws.workspaceId, q, 'en')).passages;
  const reasonFor = (skipped: { url: string; reason: string }[], path: string) => skipped.find((s) => s.url === `${site.origin}${path}`)?.reason;

  describe('the first sync', () => {
    let first: { source: { skipped: { url: string; reason: string }[]; [k: string]: unknown }; ms: number };

    beforeAll(async () => {
      const added = await service.api('POST', '/v1/knowledge/sources', { token: ws.owner, body: { kind: 'sitemap', url: `${site.origin}/sitemap.xml`, schedule: 'manual' } });
      expect(added.status).toBe(201);
      expect(added.body.source).toMatchObject({ kind: 'sitemap', url: `${site.origin}/sitemap.xml`, status: 'queued' });
      sourceId = added.body.source.id;
      first = await synced(null);
      console.info(`[${getDb().kind}] first sync of the test site: ${first.ms} ms`);
    }, 60_000);

    it('is done, with what it found, fetched and kept', () => {
      // Found: the ten URLs listed. Fetched: the six HTML pages (the PDF, the 404 and the refused redirect are not).
      expect(first.source).toMatchObject({ status: 'done', error: null, found: 10, fetched: 6, pages: 6 });
    });

    it('names Botlink in its user agent and obeys robots.txt: a disallowed page is skipped and never asked for', () => {
      expect(site.requests.find((r) => r.url === '/robots.txt')?.headers['user-agent']).toBe('Botlink/0.1.0 (+https://botlink.example)');
      expect(reasonFor(first.source.skipped, '/private/secret')).toBe('robots.txt does not allow it');
      expect(site.requests.some((r) => r.url.startsWith('/private'))).toBe(false);
    });

    it('follows a redirect chain to the page it ends on', async () => {
      expect(site.requests.map((r) => r.url)).toEqual(expect.arrayContaining(['/old-a', '/old-b', '/gift-cards']));
      const found = await search('Do gift cards expire?');
      expect(found[0]?.title).toBe('Gift cards');
      expect(found[0]?.url).toBe(`${site.origin}/gift-cards`);
    });

    it('skips a page that is not there, and one that is not a web page, with the reason in words', () => {
      expect(reasonFor(first.source.skipped, '/missing')).toBe('the page was not found (404)');
      expect(reasonFor(first.source.skipped, '/brochure.pdf')).toBe('it is not a web page (application/pdf)');
    });

    it('refuses a redirect to 169.254.169.254 and says why', () => {
      expect(reasonFor(first.source.skipped, '/meta')).toMatch(/^it redirects to https:\/\/169\.254\.169\.254\/latest\/meta-data\/, which is refused: .*link-local address/);
    });

    it('cuts an oversized page at 2 MB, keeps its start, and notes it', async () => {
      expect(reasonFor(first.source.skipped, '/big')).toBe('it is larger than 2 MB: only its first 2 MB were read');
      expect((await search('aardvark collection'))[0]?.title).toBe('Catalogue');
    });

    it('is counted on GET /metrics: pages written, skipped by cause, its duration', async () => {
      const res = await service.api('GET', '/metrics');
      expect(res.status).toBe(200);
      expect(res.text).toContain('botlink_knowledge_sync_pages_total{outcome="written"} 6');
      expect(res.text).toContain('botlink_knowledge_sync_skipped_total{cause="robots"} 1');
      expect(res.text).toContain('botlink_knowledge_sync_skipped_total{cause="not_found"} 1');
      expect(res.text).toContain('botlink_knowledge_sync_duration_seconds_count{kind="sitemap",status="done"} 1');
      expect(res.text).toContain('# TYPE botlink_knowledge_extraction_restarts_total counter');
    });

    it('answers "Try a question" from what is only on the site', async () => {
      const tried = await service.api('POST', '/v1/knowledge/try', { token: ws.owner, body: { question: 'How many days do I have to return shoes?' } });
      expect(tried.status).toBe(200);
      expect(tried.body.passages[0]).toMatchObject({ title: 'Returns', origin: 'website' });
      expect(tried.body.answer.source).toBe('knowledge_base');
      expect(tried.body.answer.text).toContain('45 days');
    });
  });

  describe('a re-sync', () => {
    it('updates a page that changed and removes one that vanished', async () => {
      const before = (await service.api('GET', `/v1/knowledge/sources/${sourceId}`, { token: ws.agent })).body;
      shop.pages.set('/changing', shop.page('Opening hours', 'The shop now opens at ten on weekdays, and stays closed on the first Monday.'));
      shop.pages.delete('/vanishing');
      shop.listed.delete('/vanishing');
      const asked = await service.api('POST', `/v1/knowledge/sources/${sourceId}/sync`, { token: ws.admin });
      expect(asked.status).toBe(202);
      const { source, ms } = await synced(before.last_synced_at);
      console.info(`[${getDb().kind}] re-sync with one page changed and one gone: ${ms} ms`);
      expect(source).toMatchObject({ status: 'done', pages: 5 });
      expect((await search('When does the shop open?'))[0]?.text).toContain('opens at ten');
      expect((await search('zeppelin umbrella promotion')).length).toBe(0);
    }, 60_000);

    it('with nothing changed sends conditional requests and rewrites nothing', async () => {
      const before = (await service.api('GET', `/v1/knowledge/sources/${sourceId}`, { token: ws.agent })).body;
      const written = await sql<{ at: Date; n: string }>`select max(updated_at) as at, count(*) as n from knowledge_documents where source_id = ${sourceId}`.execute(getDb().db);
      const from = site.requests.length;
      expect((await service.api('POST', `/v1/knowledge/sources/${sourceId}/sync`, { token: ws.owner })).status).toBe(202);
      const { source, ms } = await synced(before.last_synced_at);
      console.info(`[${getDb().kind}] re-sync with nothing changed: ${ms} ms`);
      expect(source).toMatchObject({ status: 'done', pages: 5 });
      const pageRequests = site.requests.slice(from).filter((r) => ['/returns', '/shipping', '/gift-cards', '/changing'].includes(r.url));
      expect(pageRequests).toHaveLength(4);
      for (const r of pageRequests) {
        expect(r.headers['if-none-match']).toMatch(/^"[0-9a-f]{16}"$/);
        expect(r.headers['if-modified-since']).toBe(LAST_MODIFIED);
      }
      const after = await sql<{ at: Date; n: string }>`select max(updated_at) as at, count(*) as n from knowledge_documents where source_id = ${sourceId}`.execute(getDb().db);
      expect(new Date(after.rows[0]!.at).getTime()).toBe(new Date(written.rows[0]!.at).getTime());
      expect(Number(after.rows[0]!.n)).toBe(5);
    }, 60_000);
  });

  describe('deleting the source', () => {
    it('deletes its passages', async () => {
      expect((await search('Do gift cards expire?')).length).toBeGreaterThan(0);
      expect((await service.api('DELETE', `/v1/knowledge/sources/${sourceId}`, { token: ws.owner })).status).toBe(204);
      expect((await search('Do gift cards expire?')).length).toBe(0);
      expect((await service.api('GET', `/v1/knowledge/sources/${sourceId}`, { token: ws.owner })).status).toBe(404);
      const left = await sql<{ n: string }>`select count(*) as n from knowledge_documents where origin = 'website'`.execute(getDb().db);
      expect(Number(left.rows[0]!.n)).toBe(0);
    });
  });
});

describeEachDatabase('two engines on one database', (getDb) => {
  let site: TestHttpsServer;

  beforeAll(async () => {
    const shop = shopSite();
    site = await startHttpsServer((req, res) => shop.handle(req, res));
  });
  afterAll(async () => {
    await site?.close();
  });

  function engine(name: string) {
    const sources = knowledgeSourcesRepository(getDb().db);
    const http = new GuardedClient({ allow: ['127.0.0.1/32'], ca: testCa });
    const extraction = new ExtractionPool();
    const sync = createWebsiteSync({ http, sources, writing: (_w, work) => work(), userAgent: 'Botlink/test', maxPages: 500, engine: name, leaseMs: 15_000, extraction });
    return { sources, http, scheduler: createSourceScheduler({ sources, sync, logger: createLogger('silent'), engine: name, leaseMs: 15_000, intervalMs: 0, extraction }) };
  }

  it('only one of them syncs a source at a time', async () => {
    const a = engine('engine-a');
    const b = engine('engine-b');
    const { rows } = await sql<{ id: string }>`insert into workspaces (id, name) values (gen_random_uuid(), 'Two engines') returning id`.execute(getDb().db);
    const source = await a.sources.create({
      id: crypto.randomUUID(),
      workspaceId: rows[0]!.id,
      kind: 'sitemap',
      url: `${site.origin}/sitemap.xml`,
      name: '127.0.0.1',
      schedule: 'daily',
      language: null,
      status: 'queued',
      nextSyncAt: new Date(),
    });
    const [ranA, ranB] = await Promise.all([a.scheduler.runDue(), b.scheduler.runDue()]);
    expect(ranA.length + ranB.length).toBe(1);
    expect(site.requests.filter((r) => r.url === '/robots.txt')).toHaveLength(1);
    expect(site.requests.filter((r) => r.url === '/returns')).toHaveLength(1);
    const after = await a.sources.get(rows[0]!.id, source.id);
    expect(after).toMatchObject({ status: 'done', lease_owner: null, pages: 6 });
    // Due again tomorrow, by its schedule.
    expect(new Date(after!.next_sync_at!).getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    await Promise.all([a.http.close(), b.http.close(), a.scheduler.stop(), b.scheduler.stop()]);
  }, 60_000);

  it('a claim holds another engine off until it runs out', async () => {
    const a = engine('engine-c');
    const { rows } = await sql<{ id: string }>`insert into workspaces (id, name) values (gen_random_uuid(), 'Claims') returning id`.execute(getDb().db);
    await a.sources.create({ id: crypto.randomUUID(), workspaceId: rows[0]!.id, kind: 'website', url: `${site.origin}/`, name: 'x', schedule: 'daily', language: null, status: 'queued', nextSyncAt: new Date() });
    const at = new Date();
    const claimed = await a.sources.claimDue('engine-c', at, new Date(at.getTime() + 60_000));
    expect(claimed?.lease_owner).toBe('engine-c');
    expect(await a.sources.claimDue('engine-d', new Date(), new Date(Date.now() + 60_000))).toBeUndefined();
    expect((await a.sources.claimDue('engine-d', new Date(at.getTime() + 61_000), new Date(at.getTime() + 120_000)))?.id).toBe(claimed!.id);
    await a.http.close();
    await a.scheduler.stop();
  });
});

describeEachDatabase('a website read from its start page', (getDb) => {
  let service: TestService;
  let site: TestHttpsServer;
  let inFlight = 0;
  let mostInFlight = 0;
  const links: Record<string, string[]> = { '/': ['/a', '/b', '/c'], '/a': ['/d', '/e', 'https://other.example/x'], '/b': ['/a', '/'], '/c': [], '/d': [], '/e': [] };

  beforeAll(async () => {
    site = await startHttpsServer(async (req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      const out = links[req.url ?? ''];
      if (!out) return void res.writeHead(404).end();
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      // Slow pages, so the sync is seen in progress.
      await new Promise((r) => setTimeout(r, 250));
      inFlight--;
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body><main><h1>Page ${req.url}</h1><p>The ${req.url} page of the umbrella shop.</p>${out.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</main></body></html>`);
    });
    service = await startTestService(getDb(), { KNOWLEDGE_MAX_PAGES: '4' }, { knowledgeSources: { intervalMs: 0 } });
  });
  afterAll(async () => {
    await service?.stop();
    await site?.close();
  });

  it('follows links on the same host, two requests at a time, shows its progress, and stops at the page limit', async () => {
    const ws = await seedWorkspace(service, 'Umbrellas');
    const added = await service.api('POST', '/v1/knowledge/sources', { token: ws.owner, body: { kind: 'website', url: `${site.origin}/` } });
    expect(added.status).toBe(201);
    const id = added.body.source.id;
    let seenInProgress = false;
    let source;
    for (;;) {
      source = (await service.api('GET', `/v1/knowledge/sources/${id}`, { token: ws.agent })).body;
      if (source.status === 'syncing' && source.fetched > 0 && source.fetched < 4) seenInProgress = true;
      if (source.status === 'done' || source.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(seenInProgress).toBe(true);
    expect(mostInFlight).toBe(2);
    expect(source).toMatchObject({ status: 'done', kind: 'website', schedule: 'daily', found: 4, fetched: 4, pages: 4 });
    expect(source.skipped).toEqual([{ url: `${site.origin}/d`, reason: "the workspace's limit of 4 pages from websites was reached; this page and any further ones were not fetched" }]);
    expect(site.requests.map((r) => r.url).sort()).toEqual(['/', '/a', '/b', '/c', '/robots.txt']);
    expect(new Date(source.next_sync_at).getTime() - new Date(source.last_synced_at).getTime()).toBe(24 * 3_600_000);
  }, 30_000);
});

describeEachDatabase('the scheduler', (getDb) => {
  let site: TestHttpsServer;
  let delayMs = 0;

  beforeAll(async () => {
    const shop = shopSite();
    site = await startHttpsServer(async (req, res) => {
      if (delayMs && req.url !== '/robots.txt' && !req.url?.startsWith('/sitemap')) await new Promise((r) => setTimeout(r, delayMs));
      shop.handle(req, res);
    });
  });
  afterAll(async () => {
    await site?.close();
  });

  async function sourceOn(name: string, intervalMs: number) {
    const sources = knowledgeSourcesRepository(getDb().db);
    const http = new GuardedClient({ allow: ['127.0.0.1/32'], ca: testCa });
    const extraction = new ExtractionPool();
    const sync = createWebsiteSync({ http, sources, writing: (_w, work) => work(), userAgent: 'Botlink/test', maxPages: 500, engine: name, leaseMs: 15_000, extraction });
    const scheduler = createSourceScheduler({ sources, sync, logger: createLogger('silent'), engine: name, leaseMs: 15_000, intervalMs, extraction });
    const { rows } = await sql<{ id: string }>`insert into workspaces (id, name) values (gen_random_uuid(), ${name}) returning id`.execute(getDb().db);
    const workspaceId = rows[0]!.id;
    const source = await sources.create({
      id: crypto.randomUUID(), workspaceId, kind: 'sitemap', url: `${site.origin}/sitemap.xml`, name: '127.0.0.1', schedule: 'daily', language: null, status: 'queued', nextSyncAt: new Date(),
    });
    const read = async () => (await sources.get(workspaceId, source.id))!;
    const until = async (done: (s: Awaited<ReturnType<typeof read>>) => boolean) => {
      const deadline = Date.now() + 10_000;
      for (let s = await read(); ; s = await read()) {
        if (done(s)) return s;
        if (Date.now() > deadline) throw new Error(`gave up waiting; the source is ${s.status}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    return { scheduler, http, read, until, id: source.id, extraction };
  }

  it('runs a sync when it falls due, on its own interval', async () => {
    delayMs = 0;
    const { scheduler, http, until, id } = await sourceOn('interval', 100);
    scheduler.start();
    const first = await until((s) => s.status === 'done');
    // Due again (as if a day had passed): the next look runs it without being woken.
    await sql`update knowledge_sources set next_sync_at = now() - interval '1 second' where id = ${id}`.execute(getDb().db);
    const again = await until((s) => s.status === 'done' && new Date(s.last_synced_at!).getTime() > new Date(first.last_synced_at!).getTime());
    expect(again.pages).toBe(6);
    await scheduler.stop();
    await http.close();
  });

  it('gives a sync in flight back, still due, and stops the extraction worker, when the engine stops', async () => {
    delayMs = 400;
    const { scheduler, http, until, extraction } = await sourceOn('stopping', 0);
    scheduler.start();
    await until((s) => s.status === 'syncing');
    await scheduler.stop();
    // The extraction worker is stopped with it: nothing more is read.
    const html = new TextEncoder().encode('<p>After the stop.</p>');
    await expect(extraction.readPage({ bytes: html, contentType: 'text/html', url: `${site.origin}/late`, links: false })).rejects.toThrow('could not be read: the engine is stopping');
    const after = await until(() => true);
    expect(after).toMatchObject({ status: 'queued', lease_owner: null, last_synced_at: null });
    expect(new Date(after.next_sync_at!).getTime()).toBeLessThanOrEqual(Date.now());
    await http.close();
  });
});
