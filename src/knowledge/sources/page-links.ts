/**
 * What a website's sync reads besides a page's text: the links of a page (to crawl the same site), what the page asks
 * of robots (noindex, nofollow), and the URLs of a sitemap or sitemap index (sitemaps.org). Both are read with plain patterns, not a DOM: only the attributes and
 * elements named here matter, and a page's text is read by ../extract.
 */

import { gunzipSync } from 'node:zlib';
import { ROBOTS_AGENT } from './limits.ts';

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

/** What a page asks of robots (`noindex`: do not keep it; `nofollow`: do not follow its links). */
export interface PageDirectives {
  noindex: boolean;
  nofollow: boolean;
}

/** Directives of the X-Robots-Tag header that take a value, so their colon names no user agent. */
const VALUED_DIRECTIVES = new Set(['unavailable_after', 'max-snippet', 'max-image-preview', 'max-video-preview']);

/**
 * The page's `<meta name="robots">` and `<meta name="botlink">` directives (`none` is both). Other robots' own meta
 * tags (`googlebot`) are not ours.
 */
export function metaDirectives(html: string): PageDirectives {
  const out = { noindex: false, nofollow: false };
  for (const [tag] of html.matchAll(/<meta\b[^>]*>/gi)) {
    const name = attribute(tag, 'name')?.toLowerCase();
    if (name !== 'robots' && name !== ROBOTS_AGENT) continue;
    addDirectives(out, attribute(tag, 'content') ?? '');
  }
  return out;
}

/**
 * X-Robots-Tag header values: directives for every robot, or after `botlink:` for ours (`googlebot: noindex` is not).
 * An agent's name applies to the directives after it in the same value.
 */
export function headerDirectives(values: readonly string[]): PageDirectives {
  const out = { noindex: false, nofollow: false };
  for (const value of values) {
    let agent: string | null = null;
    for (const part of value.split(',')) {
      const named = /^\s*([\w-]+)\s*:\s*(.*)$/.exec(part);
      let directive = part;
      if (named && !VALUED_DIRECTIVES.has(named[1]!.toLowerCase())) {
        agent = named[1]!.toLowerCase();
        directive = named[2]!;
      }
      if (agent === null || agent === ROBOTS_AGENT) addDirectives(out, directive);
    }
  }
  return out;
}

function addDirectives(out: PageDirectives, content: string): void {
  for (const word of content.toLowerCase().split(/[\s,]+/)) {
    if (word === 'noindex' || word === 'none') out.noindex = true;
    if (word === 'nofollow' || word === 'none') out.nofollow = true;
  }
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  const value = match?.[1] ?? match?.[2] ?? match?.[3];
  return value === undefined ? undefined : decodeEntities(value.trim());
}
