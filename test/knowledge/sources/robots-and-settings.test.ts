/**
 * What a website's sync obeys and reads besides a page's text (docs/knowledge.md, "What is fetched, and when"):
 * robots.txt (RFC 9309: our agent's group or `*`'s, the longest rule wins, Allow on a tie, `*` and `$`), the links of a
 * page on the same host, a sitemap and a sitemap index; and the KNOWLEDGE_MAX_PAGES setting.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { ConfigError } from '../../../src/errors.ts';
import { gzipSync } from 'node:zlib';
import { decodePage, headerDirectives, metaDirectives, sameSiteLinks, sitemapEntries, sitemapText } from '../../../src/knowledge/sources/page-links.ts';
import { parseRobots } from '../../../src/knowledge/sources/robots.ts';

describe('robots.txt', () => {
  const robots = parseRobots(
    ['User-agent: *', 'Disallow: /', '', 'User-agent: BotLink', 'User-agent: other', 'Disallow: /account', 'Allow: /account/help', 'Disallow: /*.json$', 'Disallow: /cart?', '', 'Sitemap: https://shop.example/sitemap.xml'].join('\n'),
  );

  it("follows the group that names botlink instead of *'s", () => {
    expect(robots.allows('/returns')).toBe(true);
    expect(robots.allows('/account/orders')).toBe(false);
  });

  it('lets the longest matching rule decide, and understands * and $', () => {
    expect(robots.allows('/account/help/returns')).toBe(true);
    expect(robots.allows('/feed.json')).toBe(false);
    expect(robots.allows('/feed.json?x=1')).toBe(true);
    expect(robots.allows('/cart?item=3')).toBe(false);
  });

  it("falls back to *'s group, and reads Sitemap lines wherever they stand", () => {
    const star = parseRobots('Sitemap: https://shop.example/a.xml\nUser-agent: *\nDisallow: /private\nAllow: /private/faq\n');
    expect(star.allows('/private/x')).toBe(false);
    expect(star.allows('/private/faq')).toBe(true);
    expect(star.allows('/')).toBe(true);
    expect(star.sitemaps).toEqual(['https://shop.example/a.xml']);
    expect(robots.sitemaps).toEqual(['https://shop.example/sitemap.xml']);
  });
});

describe("robots.txt's Crawl-delay", () => {
  it("is read from the group we follow, in seconds with fractions, and is 0 when that group sets none", () => {
    const text = 'User-agent: *\nCrawl-delay: 20\n\nUser-agent: botlink\nCrawl-delay: 1.5\nDisallow: /cart\n';
    expect(parseRobots(text).crawlDelayMs).toBe(1_500);
    expect(parseRobots('User-agent: *\nCrawl-delay: 20\n').crawlDelayMs).toBe(20_000);
    expect(parseRobots('User-agent: otherbot\nCrawl-delay: 20\n').crawlDelayMs).toBe(0);
    expect(parseRobots('User-agent: *\nCrawl-delay: soon\n').crawlDelayMs).toBe(0);
  });
});

describe('what a page asks of robots', () => {
  it('reads meta robots and meta botlink in any attribute order and case; none is noindex and nofollow', () => {
    expect(metaDirectives('<meta name="robots" content="noindex">')).toEqual({ noindex: true, nofollow: false });
    expect(metaDirectives("<META CONTENT='NOFOLLOW' NAME=robots>")).toEqual({ noindex: false, nofollow: true });
    expect(metaDirectives('<meta name="botlink" content="none">')).toEqual({ noindex: true, nofollow: true });
    expect(metaDirectives('<meta name="googlebot" content="noindex"><meta name="description" content="noindex sale">')).toEqual({ noindex: false, nofollow: false });
  });

  it('reads X-Robots-Tag for every robot or for botlink, not for another robot', () => {
    expect(headerDirectives(['noindex, nofollow'])).toEqual({ noindex: true, nofollow: true });
    expect(headerDirectives(['googlebot: noindex', 'botlink: nofollow'])).toEqual({ noindex: false, nofollow: true });
    expect(headerDirectives(['unavailable_after: 2030-01-01, noindex'])).toEqual({ noindex: true, nofollow: false });
    expect(headerDirectives(['googlebot: noindex, nofollow'])).toEqual({ noindex: false, nofollow: false });
  });
});

describe("a page's links and a sitemap", () => {
  it('keeps links to the same host, absolute and without their fragment', () => {
    const html = `<a href="/returns#top">R</a><a href='shipping'>S</a><a href="https://other.example/x">O</a><a href="mailto:a@b.c">M</a><a class=x href=/faq?a=1&amp;b=2>F</a>`;
    expect(sameSiteLinks(html, 'https://shop.example/help/')).toEqual(['https://shop.example/returns', 'https://shop.example/help/shipping', 'https://shop.example/faq?a=1&b=2']);
  });

  it('tells a sitemap index from a sitemap', () => {
    expect(sitemapEntries('<sitemapindex><sitemap><loc>https://s.example/a.xml</loc></sitemap></sitemapindex>')).toEqual({ sitemaps: ['https://s.example/a.xml'], pages: [] });
    expect(sitemapEntries('<urlset><url><loc> https://s.example/p?a=1&amp;b=2 </loc></url></urlset>')).toEqual({ sitemaps: [], pages: ['https://s.example/p?a=1&b=2'] });
  });
});

describe("a page's and a sitemap's bytes", () => {
  it('are read in the charset the page names', () => {
    const latin1 = Buffer.from('<p>Caf\u00e9 cr\u00e8me</p>', 'latin1');
    expect(decodePage(latin1, 'text/html; charset=ISO-8859-1')).toBe('<p>Café crème</p>');
    expect(decodePage(Buffer.concat([Buffer.from('<meta charset="windows-1252">'), latin1]), 'text/html')).toContain('Café crème');
    expect(decodePage(Buffer.from('<p>Café</p>', 'utf8'), 'text/html; charset=no-such-charset')).toBe('<p>Café</p>');
  });

  it('unpack a gzipped sitemap', () => {
    const xml = '<urlset><url><loc>https://s.example/a</loc></url></urlset>';
    expect(sitemapText(gzipSync(xml), 1024)).toBe(xml);
    expect(() => sitemapText(gzipSync('x'.repeat(5000)), 1024)).toThrow();
  });
});

describe('KNOWLEDGE_MAX_PAGES', () => {
  it('is 500 by default and takes a whole number from 1 to 100000', () => {
    expect(loadConfig({}).knowledgeMaxPages).toBe(500);
    expect(loadConfig({ KNOWLEDGE_MAX_PAGES: '2000' }).knowledgeMaxPages).toBe(2000);
    expect(() => loadConfig({ KNOWLEDGE_MAX_PAGES: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ KNOWLEDGE_MAX_PAGES: 'lots' })).toThrow('KNOWLEDGE_MAX_PAGES must be a whole number of pages from 1 to 100000 (got "lots").');
  });
});
