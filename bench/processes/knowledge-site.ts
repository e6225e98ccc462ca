/**
 * A shop's website for the knowledge-sites benchmark: a loopback HTTPS server with the test certificate, in a child
 * process of its own so that serving the pages does not share the engine's event loop. It serves SITE_PAGES pages,
 * each a few paragraphs of a bike shop's guides and products inside what a shop's CMS puts around them: a mega-menu
 * of 150 links, a cookie banner, an inline script and its JSON-LD, a grid of 24 related products, a footer (about
 * 60 KB of HTML a page, as a theme's pages weigh), a sitemap listing every page, and robots.txt naming it. Every page has a strong
 * ETag and a Last-Modified date and answers a matching If-None-Match or If-Modified-Since with 304, as a CMS behind a
 * cache does: that is what a re-sync with nothing changed meets.
 *
 * IPC: sends `{ type: 'listening', port }` once listening; answers `{ type: 'stats' }` with what it served since the
 * last `stats` (pages in full, 304s, other requests); `{ type: 'conditional', on }` turns ETag, Last-Modified and 304
 * on or off (off: a server that sends every page in full, each time, as many shops' do). It exits when the parent
 * goes away.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { shopItem } from '../lib/shop-corpus.ts';

const tlsDir = new URL('../../test/fixtures/tls/', import.meta.url);
const tls = { cert: readFileSync(new URL('server.pem', tlsDir), 'utf8'), key: readFileSync(new URL('server-key.pem', tlsDir), 'utf8') };

export interface SiteStats {
  type: 'stats';
  /** Pages answered 200 with their body. */
  full: number;
  /** Pages answered 304 Not Modified. */
  notModified: number;
  /** robots.txt, the sitemap and anything else. */
  other: number;
  /** Bytes of page bodies sent. */
  bytes: number;
}

const pages = Number(process.env.SITE_PAGES ?? 200);
const LAST_MODIFIED = new Date(Date.UTC(2026, 10, 1, 9, 0, 0)).toUTCString();

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Page `i` (1-based), the same in every run. */
function html(i: number): Buffer {
  const item = shopItem(i);
  const title = item.title;
  // A page's paragraphs as they are; a product's description as one paragraph, with its price.
  const paragraphs = item.kind === 'product'
    ? [item.description ?? '', `Price: € ${item.price ?? ''}. Article number ${item.sku ?? ''}.`]
    : (item.body ?? '').split(/\n\s*\n/);
  const link = (k: number) => ((i + k * 17) % pages) + 1;
  const menu = Array.from({ length: 10 }, (_, g) => `<li class="menu-group"><span>Group ${g + 1}</span><ul>${
    Array.from({ length: 15 }, (_, k) => `<li class="menu-item"><a class="menu-link" href="/p/${link(g * 15 + k)}" data-track="menu-${g}-${k}">${escape(shopItem(link(g * 15 + k)).title)}</a></li>`).join('')
  }</ul></li>`).join('\n');
  const related = Array.from({ length: 24 }, (_, k) => {
    const other = shopItem(link(k + 3));
    return `<div class="card product-card"><a href="/p/${link(k + 3)}"><img src="/img/${link(k + 3)}.webp" alt="" width="240" height="180" loading="lazy">` +
      `<span class="card-title">${escape(other.title)}</span></a><span class="price">€ ${other.kind === 'product' ? other.price ?? '' : ''}</span>` +
      '<button class="add-to-cart" type="button">Add to cart</button></div>';
  }).join('\n');
  const script = `window.dataLayer=window.dataLayer||[];${Array.from({ length: 120 }, (_, k) => `dataLayer.push({event:"impression",item:"${link(k)}",list:"related",position:${k}});`).join('')}`;
  const jsonLd = JSON.stringify({ '@context': 'https://schema.org', '@type': item.kind === 'product' ? 'Product' : 'Article', name: title, description: paragraphs[0] });
  return Buffer.from(`<!doctype html><html lang="${item.language ?? 'en'}"><head><meta charset="utf-8"><title>${escape(title)} · Bench Bikes</title>
<link rel="stylesheet" href="/style.css"><script type="application/ld+json">${jsonLd}</script><script>${script}</script></head><body>
<div id="cookie-consent" class="cookie-banner">We use cookies to improve your visit. <button>Accept all</button> <button>Settings</button></div>
<header><a href="/">Bench Bikes</a><nav class="mega-menu"><ul>${menu}</ul></nav><form class="search"><input name="q"><button>Search</button></form></header>
<main><nav class="breadcrumbs"><a href="/">Home</a> › <span>${escape(title)}</span></nav>
<article><h1>${escape(title)}</h1>${paragraphs.map((p) => `<p>${escape(p)}</p>`).join('\n')}</article>
<section class="related"><h2>You may also like</h2><div class="grid">${related}</div></section></main>
<footer><p>Bench Bikes · Fietsstraat 1 · 3511 AB Utrecht · KvK 12345678</p><ul>${menu}</ul></footer>
</body></html>`);
}

const bodies = Array.from({ length: pages }, (_, k) => html(k + 1));
const etags = bodies.map((b) => `"${createHash('sha256').update(b).digest('base64url').slice(0, 22)}"`);
let stats = { full: 0, notModified: 0, other: 0, bytes: 0 };
let conditional = true;

const server = createServer(tls, (req, res) => {
  req.resume();
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'https://site.invalid');
    const origin = `https://${req.headers.host ?? '127.0.0.1'}`;
    if (url.pathname === '/robots.txt') {
      stats.other++;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`User-agent: *\nDisallow: /cart\nSitemap: ${origin}/sitemap.xml\n`);
      return;
    }
    if (url.pathname === '/sitemap.xml') {
      stats.other++;
      const urls = bodies.map((_, k) => `<url><loc>${origin}/p/${k + 1}</loc><lastmod>2026-11-01</lastmod></url>`).join('\n');
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls}\n</urlset>\n`);
      return;
    }
    const match = /^\/p\/(\d+)$/.exec(url.pathname);
    const k = match ? Number(match[1]) - 1 : -1;
    if (k < 0 || k >= pages) {
      stats.other++;
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Not found');
      return;
    }
    const headers = conditional ? { etag: etags[k]!, 'last-modified': LAST_MODIFIED, 'cache-control': 'no-cache' } : { 'cache-control': 'no-store' };
    if (conditional && req.headers['if-none-match'] === etags[k] || (!req.headers['if-none-match'] && req.headers['if-modified-since'] === LAST_MODIFIED)) {
      stats.notModified++;
      res.writeHead(304, headers);
      res.end();
      return;
    }
    stats.full++;
    stats.bytes += bodies[k]!.length;
    res.writeHead(200, { ...headers, 'content-type': 'text/html; charset=utf-8', 'content-length': String(bodies[k]!.length) });
    res.end(bodies[k]);
  });
});

server.listen(0, '127.0.0.1', () => {
  process.send!({ type: 'listening', port: (server.address() as AddressInfo).port });
});
process.on('message', (message: { type: string; on?: boolean }) => {
  if (message.type === 'conditional') {
    conditional = message.on === true;
    return;
  }
  if (message.type !== 'stats') return;
  process.send!({ type: 'stats', ...stats } satisfies SiteStats);
  stats = { full: 0, notModified: 0, other: 0, bytes: 0 };
});
process.on('disconnect', () => {
  server.close();
  process.exit(0);
});
