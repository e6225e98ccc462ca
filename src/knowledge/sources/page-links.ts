/**
 * What a website's sync reads besides a page's text: the links of a page (to crawl the same site) and the URLs of a
 * sitemap or sitemap index (sitemaps.org). Both are read with plain patterns, not a DOM: only the attributes and
 * elements named here matter, and a page's text is read by ../extract.
 */

import { gunzipSync } from 'node:zlib';

/**
 * A page's bytes as text, in the charset its Content-Type names (a `<meta charset>` in its first 1024 bytes when the
 * header names none), else UTF-8; a charset nobody knows is read as UTF-8.
 */
export function decodePage(bytes: Uint8Array, contentType: string | null): string {
  const fromHeader = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '')?.[1];
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  const fromMeta = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
  try {
    return new TextDecoder(fromHeader ?? fromMeta ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** A sitemap's text; a gzipped one (`sitemap.xml.gz`) is unpacked up to `maxBytes`. */
export function sitemapText(bytes: Uint8Array, maxBytes: number): string {
  const gzipped = bytes[0] === 0x1f && bytes[1] === 0x8b;
  return (gzipped ? gunzipSync(bytes, { maxOutputLength: maxBytes }) : Buffer.from(bytes)).toString('utf8');
}

/** The page's links as absolute URLs on `base`'s host, without their fragment; each once. */
export function sameSiteLinks(html: string, base: string): string[] {
  const baseUrl = new URL(base);
  const own = baseHref(html, baseUrl);
  const found = new Set<string>();
  for (const match of html.matchAll(/<a\b[^>]*?\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi)) {
    const href = decodeEntities((match[1] ?? match[2] ?? match[3] ?? '').trim());
    if (!href || /^(mailto|tel|javascript|data):/i.test(href)) continue;
    const url = pageUrl(href, own);
    if (url && url.host === baseUrl.host) found.add(url.href);
  }
  return [...found];
}

export interface SitemapEntries {
  /** A sitemap index's sitemaps. */
  sitemaps: string[];
  /** A sitemap's pages. */
  pages: string[];
}

/** The `<loc>`s of a sitemap (`<urlset>`) or a sitemap index (`<sitemapindex>`). */
export function sitemapEntries(xml: string): SitemapEntries {
  const locs = [...xml.matchAll(/<(?:[a-z0-9]+:)?loc>\s*(?:<!\[CDATA\[)?([\s\S]*?)(?:\]\]>)?\s*<\/(?:[a-z0-9]+:)?loc>/gi)].map((m) => decodeEntities(m[1]!.trim()));
  return /<(?:[a-z0-9]+:)?sitemapindex[\s>]/i.test(xml) ? { sitemaps: locs, pages: [] } : { sitemaps: [], pages: locs };
}

/** An http(s) URL without its fragment, or null. */
export function pageUrl(href: string, base: URL | string): URL | null {
  try {
    const url = new URL(href, base);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
    url.hash = '';
    return url;
  } catch {
    return null;
  }
}

function baseHref(html: string, pageUrlValue: URL): URL {
  const match = /<base\b[^>]*?\shref\s*=\s*(?:"([^"]*)"|'([^']*)')/i.exec(html);
  const href = match?.[1] ?? match?.[2];
  return (href && pageUrl(decodeEntities(href), pageUrlValue)) || pageUrlValue;
}

function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|apos|#39|#x27);/gi, (_m, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'", '#x27': "'" })[name.toLowerCase()] ?? _m);
}
