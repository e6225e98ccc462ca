/**
 * What a website's sync obeys and survives (docs/knowledge.md, "Websites and files"), against local HTTPS sites, on
 * both databases: robots.txt's Crawl-delay spaces the requests; a page that asks not to be indexed (meta robots or
 * X-Robots-Tag) is skipped with the reason, and nofollow is honoured; the start page's links are read again on every
 * sync, so a page only it links to is found once the site serves it; a page the extraction worker cannot read in its
 * time or memory is skipped with the reason while the sync goes on; the counts reach the metrics.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { knowledgeSourcesRepository } from '../../../db/repositories/knowledge-sources.repository.ts';
import { createLogger } from '../../../src/log.ts';
import { createMetrics } from '../../../src/metrics.ts';
import { GuardedClient } from '../../../src/net/index.ts';
import { ExtractionPool, type ExtractionPoolOptions } from '../../../src/knowledge/sources/extraction-pool.ts';
import { createSourceScheduler } from '../../../src/knowledge/sources/source-scheduler.ts';
import { createWebsiteSync } from '../../../src/knowledge/sources/website-sync.ts';
import { describeEachDatabase } from '../../helpers/db.ts';
import { startHttpsServer, testCa, type TestHttpsServer } from '../../helpers/https-server.ts';

const misbehaving = new URL('./fixtures/misbehaving-worker.ts', import.meta.url);

/** A page of the umbrella shop: its text, links, and anything for its <head>. */
function page(title: string, links: string[] = [], head = ''): string {
  return `<!doctype html><html lang="en"><head><title>${title}</title>${head}</head><body><main><h1>${title}</h1>` +
    `<p>The ${title} page of the umbrella shop: umbrellas are returned within 30 days, folded and dry.</p>` +
    `${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</main></body></html>`;
}

/** Answers from a table of path → [status, headers, body]; an ETag of the body, and 304 to a matching If-None-Match. */
function serve(table: () => Record<string, [number, Record<string, string>, string]>) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    const answer = table()[path];
    if (!answer) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    const [status, headers, body] = answer;
    const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
    if (status === 200 && req.headers['if-none-match'] === etag) return void res.writeHead(304, { etag }).end();
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...(status === 200 ? { etag } : {}), ...headers });
    res.end(body);
  };
}

describeEachDatabase('a website sync obeys the site and survives its pages', (getDb) => {
  const closing: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closing.reverse()) await close();
  });

  /** A sync on this database for a website at `site`, with its own workspace, extraction pool and metrics. */
  async function website(site: TestHttpsServer, pool: ExtractionPoolOptions = {}) {
    const sources = knowledgeSourcesRepository(getDb().db);
    const http = new GuardedClient({ allow: ['127.0.0.1/32'], ca: testCa });
    const metrics = createMetrics({ defaultMetrics: false });
    const extraction = new ExtractionPool({ ...pool, onRestart: (reason) => metrics.knowledgeExtractionRestarts.inc({ reason }) });
    const sync = createWebsiteSync({ http, sources, writing: (_w, work) => work(), userAgent: 'Botlink/test', maxPages: 500, engine: 'rules', leaseMs: 15_000, extraction, metrics });
    const scheduler = createSourceScheduler({ sources, sync, logger: createLogger('silent'), engine: 'rules', leaseMs: 15_000, intervalMs: 0, extraction });
    closing.push(() => scheduler.stop(), () => http.close());
    const { rows } = await sql<{ id: string }>`insert into workspaces (id, name) values (gen_random_uuid(), 'Umbrellas') returning id`.execute(getDb().db);
    const workspaceId = rows[0]!.id;
    const source = await sources.create({
      id: crypto.randomUUID(), workspaceId, kind: 'website', url: `${site.origin}/`, name: '127.0.0.1', schedule: 'manual', language: null, status: 'queued', nextSyncAt: new Date(),
    });
    return {
      metrics,
      /** Runs the source's sync now; the source after it, and the URLs of the pages it keeps. */
      async sync() {
        await sources.requestSync(workspaceId, source.id, new Date());
        const [outcome] = await scheduler.runDue();
        const after = (await sources.get(workspaceId, source.id))!;
        const pages = (await sources.pages(source.id)).map((p) => new URL(p.url).pathname).sort();
        return { outcome: outcome!, source: after, pages, reason: (path: string) => after.skipped.find((s) => s.url === `${site.origin}${path}`)?.reason };
      },
    };
  }

  async function siteOf(handler: Parameters<typeof startHttpsServer>[0]) {
    const site = await startHttpsServer(handler);
    closing.push(() => site.close());
    return site;
  }

  describe("robots.txt's Crawl-delay", () => {
    it('spaces the requests to the site by it, whichever of the two at a time makes them', async () => {
      const arrived: number[] = [];
      const pages = { '/': [200, {}, page('Home', ['/a', '/b', '/c'])], '/a': [200, {}, page('A')], '/b': [200, {}, page('B')], '/c': [200, {}, page('C')] } as const;
      const site = await siteOf((req, res) => {
        if (req.url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nCrawl-delay: 0.5\nDisallow: /private\n');
        arrived.push(performance.now());
        serve(() => pages as unknown as Record<string, [number, Record<string, string>, string]>)(req, res);
      });
      const { outcome, pages: kept } = await (await website(site)).sync();
      expect(outcome).toMatchObject({ status: 'done', written: 4 });
      expect(kept).toEqual(['/', '/a', '/b', '/c']);
      const gaps = arrived.slice(1).map((at, i) => at - arrived[i]!);
      // 500 ms apart, less when the server sees one request late (this process's event loop also runs the embedded
      // database: on a loaded machine it sees a request up to about 150 ms after it was sent, which shortens the gap
      // before it). Without the delay the four requests come within a few milliseconds of each other.
      for (const gap of gaps) expect(gap).toBeGreaterThan(300);
      expect(arrived.at(-1)! - arrived[0]!).toBeGreaterThan(3 * 500 - 150);
    }, 30_000);
  });

  describe('a page that asks not to be indexed', () => {
    it('is skipped with the reason; its links are followed unless it says nofollow; another robot’s noindex is not ours', async () => {
      const table: Record<string, [number, Record<string, string>, string]> = {
        '/': [200, {}, page('Home', ['/meta-noindex', '/header-noindex', '/googlebot-only', '/nofollow', '/botlink-none'])],
        '/meta-noindex': [200, {}, page('Draft', ['/deep'], '<meta content="noindex, follow" name="Robots">')],
        '/header-noindex': [200, { 'x-robots-tag': 'noindex' }, page('Staff')],
        '/googlebot-only': [200, { 'x-robots-tag': 'googlebot: noindex' }, page('Sizes')],
        '/nofollow': [200, {}, page('Care', ['/hidden'], '<meta name="robots" content="nofollow">')],
        '/botlink-none': [200, {}, page('Internal', ['/hidden'], '<meta name="botlink" content="none">')],
        '/deep': [200, {}, page('Deep')],
        '/hidden': [200, {}, page('Hidden')],
      };
      const site = await siteOf((req, res) => (req.url === '/robots.txt' ? void res.writeHead(404).end() : serve(() => table)(req, res)));
      const run = await website(site);
      const { outcome, pages, reason } = await run.sync();
      expect(outcome.status).toBe('done');
      expect(pages).toEqual(['/', '/deep', '/googlebot-only', '/nofollow']);
      expect(reason('/meta-noindex')).toBe('the page asks robots not to index it (<meta name="robots" content="noindex">)');
      expect(reason('/botlink-none')).toBe('the page asks robots not to index it (<meta name="robots" content="noindex">)');
      expect(reason('/header-noindex')).toBe('the site asks robots not to index it (X-Robots-Tag: noindex)');
      expect(site.requests.some((r) => r.url === '/hidden')).toBe(false);
      expect(await run.metrics.registry.getSingleMetricAsString('botlink_knowledge_sync_skipped_total')).toContain('botlink_knowledge_sync_skipped_total{cause="noindex"} 3');
    }, 30_000);
  });

  describe("the start page's links", () => {
    it('are read on every sync, so a page only it links to is found once the site serves it, though the start page did not change', async () => {
      let downNow = true;
      const table = (): Record<string, [number, Record<string, string>, string]> => ({
        '/': [200, {}, page('Home', ['/a', '/b'])],
        '/a': [200, {}, page('A')],
        '/b': downNow ? [503, {}, 'down for maintenance'] : [200, {}, page('Bike umbrellas')],
      });
      const site = await siteOf((req, res) => (req.url === '/robots.txt' ? void res.writeHead(404).end() : serve(table)(req, res)));
      const run = await website(site);
      const first = await run.sync();
      expect(first.pages).toEqual(['/', '/a']);
      expect(first.reason('/b')).toBe('the site failed to serve it (503)');
      downNow = false;
      const from = site.requests.length;
      const second = await run.sync();
      expect(second.outcome).toMatchObject({ status: 'done', written: 1, unchanged: 2 });
      expect(second.pages).toEqual(['/', '/a', '/b']);
      const again = site.requests.slice(from);
      // The start page without conditions (its links are wanted), the others with them.
      expect(again.find((r) => r.url === '/')?.headers['if-none-match']).toBeUndefined();
      expect(again.find((r) => r.url === '/a')?.headers['if-none-match']).toMatch(/^"[0-9a-f]{16}"$/);
    }, 30_000);
  });

  describe('a page the extraction worker cannot read', () => {
    it('is skipped with the reason in words, and the sync goes on with the rest of the site', async () => {
      const table: Record<string, [number, Record<string, string>, string]> = {
        '/': [200, {}, page('Home', ['/spin', '/hog', '/a', '/b'])],
        '/spin': [200, {}, page('Endless')],
        '/hog': [200, {}, page('Greedy')],
        '/a': [200, {}, page('A')],
        '/b': [200, {}, page('B')],
      };
      const site = await siteOf((req, res) => (req.url === '/robots.txt' ? void res.writeHead(404).end() : serve(() => table)(req, res)));
      const run = await website(site, { workerUrl: misbehaving, pageMs: 3_000, heapMb: 64 });
      const { outcome, pages, reason } = await run.sync();
      expect(outcome).toMatchObject({ status: 'done', written: 3 });
      expect(pages).toEqual(['/', '/a', '/b']);
      expect(reason('/spin')).toBe('it took too long to read (more than 3 seconds)');
      expect(reason('/hog')).toBe('it needed more memory to read than the 64 MB it may take');
      const restarts = await run.metrics.registry.getSingleMetricAsString('botlink_knowledge_extraction_restarts_total');
      expect(restarts).toContain('botlink_knowledge_extraction_restarts_total{reason="time_limit"} 1');
      expect(restarts).toContain('botlink_knowledge_extraction_restarts_total{reason="out_of_memory"} 1');
      const durations = await run.metrics.registry.getSingleMetricAsString('botlink_knowledge_sync_duration_seconds');
      expect(durations).toContain('botlink_knowledge_sync_duration_seconds_count{kind="website",status="done"} 1');
      expect(await run.metrics.registry.getSingleMetricAsString('botlink_knowledge_sync_pages_total')).toContain('botlink_knowledge_sync_pages_total{outcome="written"} 3');
    }, 60_000);
  });
});
