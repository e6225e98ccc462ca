/**
 * One sync of a website or sitemap source (docs/knowledge.md, "Websites and files"):
 * - robots.txt first: our agent's group or `*`'s is obeyed; a robots.txt the site cannot serve (5xx, no answer) fails
 *   the sync and keeps what was kept, as RFC 9309 says to assume everything is disallowed meanwhile.
 * - A website: its start URL, then the links of each page on the same host. A sitemap: its URLs (and those of the
 *   sitemaps an index or robots.txt's Sitemap lines name), on the same host.
 * - Every request and every redirect goes through the guarded client (the outbound rules: public addresses only), at
 *   most REQUESTS_PER_SITE at a time, with a user agent that names Botlink. A page is HTML or it is skipped; past
 *   MAX_PAGE_BYTES it is cut there (and noted).
 * - A page known from the last sync is asked for with If-None-Match / If-Modified-Since; a 304, or the same text (its
 *   hash), rewrites nothing. A page that is gone (404, 410, no longer linked or listed, now disallowed) is removed
 *   once the sync has seen the whole site; a page the site failed to serve this time (5xx, time-out) is kept.
 * - Progress (found, fetched, skipped with the reason in words) is written while it runs, which also renews the claim;
 *   a claim another engine took over stops this sync.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KnowledgeSourcesRepository, SyncProgress } from '../../../db/repositories/knowledge-sources.repository.ts';
import type { KnowledgeSource, KnowledgeSourcePage, SkippedUrl } from '../../../db/schema.ts';
import type { Metrics } from '../../metrics.ts';
import { OutboundError, type GuardedClient, type GuardedResponse } from '../../net/index.ts';
import { primaryLanguage } from '../../text/language.ts';
import { chunkText, searchConfigFor } from '../chunking.ts';
import { cutText, type ExtractedText } from '../extract/index.ts';
import { MAX_DOCUMENT_BODY_BYTES, MAX_PAGE_BYTES } from '../limits.ts';
import { cleanLine } from '../text.ts';
import { ExtractionFailed, type ExtractionPool } from './extraction-pool.ts';
import {
  MAX_CRAWL_DELAY_MS,
  MAX_REDIRECTS,
  MAX_ROBOTS_BYTES,
  MAX_SITEMAP_BYTES,
  MAX_SITEMAP_DEPTH,
  MAX_SKIPPED_LISTED,
  PAGE_TIMEOUT_MS,
  PROGRESS_EVERY_MS,
  REQUESTS_PER_SITE,
  SCHEDULE_MS,
} from './limits.ts';
import { headerDirectives, pageUrl, sitemapEntries, sitemapText } from './page-links.ts';
import { ALLOW_ALL, parseRobots, type Robots } from './robots.ts';

const HTML = 'text/html,application/xhtml+xml';

/** Raise when what a page's document holds changes: the next sync rewrites every page instead of keeping it. */
const PAGE_INDEX_VERSION = 1;

export interface WebsiteSyncDeps {
  http: Pick<GuardedClient, 'request' | 'validateUrl'>;
  sources: KnowledgeSourcesRepository;
  /** The knowledge service's `writing`: the next search looks again whether the workspace has knowledge. */
  writing: <T>(workspaceId: string, work: () => Promise<T>) => Promise<T>;
  /** `Botlink/1.0 (+PUBLIC_URL)`. */
  userAgent: string;
  /** Pages a workspace's websites keep together (KNOWLEDGE_MAX_PAGES). */
  maxPages: number;
  /** This engine's name on the claim, and the claim's length (renewed every third of it while the sync runs). */
  engine: string;
  leaseMs: number;
  /** Where pages are read: a worker thread, off the engine's loop. */
  extraction: Pick<ExtractionPool, 'readPage'>;
  /** Counts for GET /metrics (src/metrics.ts): pages by outcome, skipped ones by cause, syncs' durations. */
  metrics?: Pick<Metrics, 'knowledgeSyncPages' | 'knowledgeSyncSkipped' | 'knowledgeSyncDuration'>;
  now?: () => Date;
}

/** Why a URL is in a sync's skipped list, for the metrics (its reason in words is for the owner). */
export type SkipCause =
  | 'robots'
  | 'noindex'
  | 'not_found'
  | 'refused_by_site'
  | 'site_error'
  | 'not_fetched'
  | 'not_html'
  | 'same_page'
  | 'other_site'
  | 'page_limit'
  | 'sitemap'
  | 'cut'
  | 'unreadable';


export interface SyncOutcome extends SyncProgress {
  status: 'done' | 'failed';
  error: string | null;
  pages: number;
  /** Pages written (new or changed), kept as they were, removed. */
  written: number;
  unchanged: number;
  removed: number;
  ms: number;
}

/** A URL's answer after its redirects: a page, or why not. */
type Fetched =
  | { kind: 'response'; url: URL; response: GuardedResponse }
  | { kind: 'refused'; reason: string; keep: boolean };

/** The validators of a page's answer, kept for the next sync's conditional request. */
interface Conditions {
  etag: string | null;
  lastModified: string | null;
}

interface FetchOptions {
  accept: string;
  maxBytes: number;
  /** If-None-Match and If-Modified-Since of the page kept, sent on every hop: they are about where the chain ends. */
  conditions?: Record<string, string>;
}

export type WebsiteSync = ReturnType<typeof createWebsiteSync>;

export function createWebsiteSync(deps: WebsiteSyncDeps) {
  const { http, sources, userAgent } = deps;
  const now = deps.now ?? (() => new Date());

  /** Runs the sync of a source this engine claimed; the claim is given back when it ends, whatever the outcome. */
  async function run(source: KnowledgeSource, signal?: AbortSignal): Promise<SyncOutcome> {
    const started = performance.now();
    const run = new SyncRun(deps, source, signal);
    const heartbeat = setInterval(() => void run.writeProgress(), Math.min(Math.round(deps.leaseMs / 3), PROGRESS_EVERY_MS));
    let failure: string | null = null;
    try {
      await run.crawl();
    } catch (err) {
      failure = err instanceof SyncFailed ? err.message : err instanceof OutboundError ? err.message : `The sync stopped: ${(err as Error).message}`;
    } finally {
      clearInterval(heartbeat);
    }
    if (signal?.aborted) {
      // The engine is stopping: not a failure of the site. Still due, for whoever runs it next.
      await sources.release(source.id, deps.engine);
      throw signal.reason;
    }
    const at = now();
    const nextSyncAt = source.schedule === 'manual' ? null : new Date(at.getTime() + SCHEDULE_MS[source.schedule]);
    const progress = run.progress();
    if (run.removed) deps.metrics?.knowledgeSyncPages.inc({ outcome: 'removed' }, run.removed);
    deps.metrics?.knowledgeSyncDuration.observe({ kind: source.kind, status: failure ? 'failed' : 'done' }, (performance.now() - started) / 1000);
    await sources.finish(source.id, deps.engine, { ...progress, status: failure ? 'failed' : 'done', error: failure, claimedAt: new Date(source.updated_at), at, nextSyncAt });
    return {
      ...progress,
      status: failure ? 'failed' : 'done',
      error: failure,
      pages: (await sources.pages(source.id)).length,
      written: run.written,
      unchanged: run.unchanged,
      removed: run.removed,
      ms: Math.round(performance.now() - started),
    };
  }

  return { run, userAgent, http };
}

/** A sync that cannot go on (robots.txt or the start unreadable, the claim lost); its message is shown to the owner. */
class SyncFailed extends Error {}

/** One sync's state: the queue, what was seen, the counts. */
class SyncRun {
  readonly #deps: WebsiteSyncDeps;
  readonly #source: KnowledgeSource;
  readonly #signal: AbortSignal | undefined;
  #host: string;
  #robots: Robots = ALLOW_ALL;
  #known = new Map<string, KnowledgeSourcePage>();
  /** URLs queued or skipped this sync (found), and the final URLs of the pages taken (a redirect's target once). */
  #found = new Set<string>();
  #taken = new Set<string>();
  /** Known pages still there (fetched, unchanged, or kept because the site failed to serve them this time). */
  #kept = new Set<string>();
  #queue: string[] = [];
  #budget = 0;
  /** URLs queued for fetching (skipped ones aside), against the budget. */
  #queuedCount = 0;
  #budgetNoted = false;
  #fetched = 0;
  #skipped: SkippedUrl[] = [];
  #claimLost = false;
  #knownQueued = false;
  /** When the next request to the site may start (performance.now()), under a Crawl-delay. */
  #nextRequestAt = 0;
  written = 0;
  unchanged = 0;
  removed = 0;

  constructor(deps: WebsiteSyncDeps, source: KnowledgeSource, signal: AbortSignal | undefined) {
    this.#deps = deps;
    this.#source = source;
    this.#signal = signal;
    this.#host = new URL(source.url!).host;
  }

  progress(): SyncProgress {
    return { found: this.#found.size, fetched: this.#fetched, skipped: this.#skipped.slice(0, MAX_SKIPPED_LISTED) };
  }

  async writeProgress(): Promise<void> {
    const until = new Date(Date.now() + this.#deps.leaseMs);
    try {
      if (!(await this.#deps.sources.progress(this.#source.id, this.#deps.engine, this.progress(), until))) this.#claimLost = true;
    } catch {
      // The next beat tries again; the claim lasts three of them.
    }
  }

  async crawl(): Promise<void> {
    const source = this.#source;
    this.#known = new Map((await this.#deps.sources.pages(source.id)).map((p) => [p.url, p]));
    this.#budget = Math.max(0, this.#deps.maxPages - (await this.#deps.sources.pagesElsewhere(source.workspace_id, source.id)));
    const start = new URL(source.url!);
    await this.#readRobots(start);
    if (source.kind === 'website') {
      if (!this.#robots.allows(`${start.pathname}${start.search}`)) throw new SyncFailed(`robots.txt does not allow the start page ${start.href}; nothing was changed.`);
      this.#found.add(start.href);
      this.#queuedCount++;
      // The start URL may move the site (http → https, shop.example → www.shop.example): its host is the site's. It is
      // asked for without conditions: a 304 would not give its links, and a page only it links to (one the site failed
      // to serve last time, or a page limit since raised) would never be found while it does not change.
      const first = await this.#fetch(start, { accept: HTML, maxBytes: MAX_PAGE_BYTES }, true);
      if (first.kind === 'refused') throw new SyncFailed(`The start page ${start.href} could not be fetched: ${first.reason}; nothing was changed.`);
      if (first.url.host !== this.#host) {
        this.#host = first.url.host;
        await this.#readRobots(first.url);
      }
      await this.#take(start.href, first);
    } else {
      await this.#readSitemaps([start.href, ...this.#robots.sitemaps], 0);
    }
    await this.#work();
    this.#check();
    // The whole site was seen: the pages it no longer has go, with their passages.
    const gone = [...this.#known.keys()].filter((url) => !this.#kept.has(url));
    this.removed = await this.#deps.writing(source.workspace_id, () => this.#deps.sources.removePages(source.id, gone));
  }

  #check(): void {
    this.#signal?.throwIfAborted();
    if (this.#claimLost) throw new SyncFailed('Another engine took this sync over.');
  }

  async #readRobots(site: URL): Promise<void> {
    const robotsUrl = new URL('/robots.txt', site);
    const fetched = await this.#fetch(robotsUrl, { accept: 'text/plain', maxBytes: MAX_ROBOTS_BYTES });
    if (fetched.kind === 'refused') throw new SyncFailed(`robots.txt could not be read (${fetched.reason}); nothing was changed.`);
    const { status } = fetched.response;
    if (status >= 500 || status === 429) throw new SyncFailed(`robots.txt could not be read (the site answered ${status}); nothing was changed.`);
    this.#robots = status >= 200 && status < 300 ? parseRobots(fetched.response.body.toString('utf8')) : ALLOW_ALL;
  }

  async #readSitemaps(urls: string[], depth: number): Promise<void> {
    for (const url of new Set(urls)) {
      this.#check();
      const at = pageUrl(url, `https://${this.#host}/`);
      if (!at || at.host !== this.#host) {
        this.#skip(url, 'the sitemap is on another site', 'other_site');
        continue;
      }
      const fetched = await this.#fetch(at, { accept: 'application/xml,text/xml', maxBytes: MAX_SITEMAP_BYTES });
      if (fetched.kind === 'refused' || fetched.response.status !== 200) {
        const reason = fetched.kind === 'refused' ? fetched.reason : statusReason(fetched.response.status);
        // The sitemap the owner gave must be read, or nothing is known of the site.
        if (depth === 0 && url === this.#source.url) throw new SyncFailed(`The sitemap could not be read: ${reason}; nothing was changed.`);
        this.#skip(url, `the sitemap could not be read: ${reason}`, 'sitemap');
        continue;
      }
      let entries;
      try {
        entries = sitemapEntries(sitemapText(fetched.response.body, MAX_SITEMAP_BYTES));
      } catch {
        this.#skip(url, 'the sitemap could not be read: it is compressed and damaged, or too large unpacked', 'sitemap');
        continue;
      }
      for (const page of entries.pages) {
        const pageAt = pageUrl(page, at);
        if (!pageAt) continue;
        if (pageAt.host !== this.#host) this.#skip(page, `it is on another site (${pageAt.host})`, 'other_site');
        else this.#enqueue(pageAt.href);
      }
      if (entries.sitemaps.length) {
        if (depth + 1 >= MAX_SITEMAP_DEPTH) this.#skip(url, `sitemap indexes are followed ${MAX_SITEMAP_DEPTH} deep`, 'sitemap');
        else await this.#readSitemaps(entries.sitemaps, depth + 1);
      }
    }
  }

  /** Queues a URL of the site once, if robots.txt allows it and the workspace's page limit has room. */
  #enqueue(url: string): void {
    if (this.#found.has(url)) return;
    const at = new URL(url);
    if (!this.#robots.allows(`${at.pathname}${at.search}`)) {
      this.#found.add(url);
      this.#skip(url, 'robots.txt does not allow it', 'robots');
      return;
    }
    if (this.#queued() >= this.#budget) {
      if (!this.#budgetNoted) {
        this.#budgetNoted = true;
        this.#skip(url, `the workspace's limit of ${this.#deps.maxPages} pages from websites was reached; this page and any further ones were not fetched`, 'page_limit');
      }
      return;
    }
    this.#found.add(url);
    this.#queuedCount++;
    this.#queue.push(url);
  }

  #queued(): number {
    return this.#queuedCount;
  }

  /** What a re-sync sends for a page it kept: its ETag and Last-Modified. */
  #conditions(url: string): Record<string, string> {
    const known = this.#known.get(url);
    const conditions: Record<string, string> = {};
    if (known?.etag) conditions['if-none-match'] = known.etag;
    if (known?.last_modified) conditions['if-modified-since'] = known.last_modified;
    return conditions;
  }

  async #work(): Promise<void> {
    const worker = async () => {
      for (let url = this.#queue.shift(); url !== undefined; url = this.#queue.shift()) {
        this.#check();
        await this.#visit(url);
      }
    };
    await Promise.all(Array.from({ length: REQUESTS_PER_SITE }, worker));
  }

  async #visit(url: string): Promise<void> {
    const fetched = await this.#fetch(new URL(url), { accept: HTML, maxBytes: MAX_PAGE_BYTES, conditions: this.#conditions(url) });
    await this.#take(url, fetched);
  }

  /** What to do with a page's answer: write it, keep it, or skip it with the reason. */
  async #take(url: string, fetched: Fetched): Promise<void> {
    const known = this.#known.get(url);
    if (fetched.kind === 'refused') {
      this.#skip(url, fetched.reason, 'not_fetched');
      if (fetched.keep && known) this.#kept.add(url);
      return;
    }
    const { response } = fetched;
    const etag = header(response, 'etag');
    const lastModified = header(response, 'last-modified');
    if (response.status === 304 && known) {
      this.#fetched++;
      this.#kept.add(url);
      this.unchanged++;
      this.#deps.metrics?.knowledgeSyncPages.inc({ outcome: 'unchanged' });
      await this.#deps.sources.touchPage(this.#source.id, url, etag ?? known.etag, lastModified ?? known.last_modified, new Date());
      // An unchanged page's links are not read again: the pages the last sync kept are asked for (each with its
      // conditions) in their place, so a site that did not change answers 304 throughout.
      if (this.#source.kind === 'website' && !this.#knownQueued) {
        this.#knownQueued = true;
        for (const page of this.#known.keys()) this.#enqueue(page);
      }
      return;
    }
    if (response.status < 200 || response.status >= 300) {
      this.#skip(url, statusReason(response.status), statusCause(response.status));
      // The site failing now is not the page gone: kept until it answers 404 or 410, or is no longer linked.
      if (known && (response.status >= 500 || response.status === 429)) this.#kept.add(url);
      return;
    }
    const type = (header(response, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'text/html' && type !== 'application/xhtml+xml') {
      this.#skip(url, `it is not a web page (${type || 'no content type'})`, 'not_html');
      return;
    }
    if (this.#taken.has(fetched.url.href) && fetched.url.href !== url) {
      this.#skip(url, `it is the same page as ${fetched.url.href}`, 'same_page');
      return;
    }
    this.#taken.add(fetched.url.href);
    this.#fetched++;
    const sent = headerDirectives(headerValues(response, 'x-robots-tag'));
    if (sent.noindex) {
      // Not read at all: its links too are the site's business (a noindex page is rarely a hub).
      this.#skip(url, 'the site asks robots not to index it (X-Robots-Tag: noindex)', 'noindex');
      return;
    }
    if (response.truncated) this.#skip(url, `it is larger than ${MAX_PAGE_BYTES / 1024 / 1024} MB: only its first ${MAX_PAGE_BYTES / 1024 / 1024} MB were read`, 'cut');
    let read;
    try {
      read = await this.#deps.extraction.readPage({
        bytes: response.body,
        contentType: header(response, 'content-type'),
        url: fetched.url.href,
        links: this.#source.kind === 'website' && !sent.nofollow,
      });
    } catch (err) {
      if (!(err instanceof ExtractionFailed)) throw err;
      this.#skip(url, `it ${err.message}`, 'unreadable');
      return;
    }
    // A noindex page's links are still followed (unless it also says nofollow), as search engines do.
    for (const link of read.links) this.#enqueue(link);
    if (read.directives.noindex) {
      this.#skip(url, 'the page asks robots not to index it (<meta name="robots" content="noindex">)', 'noindex');
      return;
    }
    await this.#write(url, fetched.url.href, read.extracted, { etag, lastModified }, known);
  }

  async #write(url: string, finalUrl: string, extracted: ExtractedText, conditions: Conditions, known: KnowledgeSourcePage | undefined): Promise<void> {
    const source = this.#source;
    const language = primaryLanguage(source.language ?? extracted.language) || null;
    const title = cleanLine(extracted.title) || finalUrl;
    // A page keeps as much text as a synced page may have (MAX_DOCUMENT_BODY_BYTES): the rest of a catalogue-sized
    // page would be thousands of passages nobody asks about.
    const body = cutText(extracted.text, MAX_DOCUMENT_BODY_BYTES);
    if (body.length < extracted.text.length) this.#skip(url, `its text is longer than ${MAX_DOCUMENT_BODY_BYTES / 1024} KB: only its first ${MAX_DOCUMENT_BODY_BYTES / 1024} KB are kept`, 'cut');
    const contentHash = createHash('sha256').update(JSON.stringify([PAGE_INDEX_VERSION, title, finalUrl, language, body])).digest('hex');
    this.#kept.add(url);
    if (known && known.content_hash === contentHash && known.document_id) {
      this.unchanged++;
      this.#deps.metrics?.knowledgeSyncPages.inc({ outcome: 'unchanged' });
      await this.#deps.sources.touchPage(source.id, url, conditions.etag, conditions.lastModified, new Date());
      return;
    }
    const chunks = chunkText(body);
    const at = new Date();
    await this.#deps.writing(source.workspace_id, () =>
      this.#deps.sources.writePage(
        {
          id: randomUUID(),
          workspaceId: source.workspace_id,
          sourceId: source.id,
          origin: 'website',
          externalId: `${source.id}:${createHash('sha256').update(url).digest('hex').slice(0, 32)}`,
          title,
          url: finalUrl,
          language,
          body,
          contentHash,
          config: searchConfigFor(language),
          chunks: (chunks.length ? chunks : [title]).map((text, ordinal) => ({ id: randomUUID(), ordinal, text })),
          at,
        },
        { url, etag: conditions.etag, lastModified: conditions.lastModified },
      ),
    );
    this.written++;
    this.#deps.metrics?.knowledgeSyncPages.inc({ outcome: 'written' });
  }

  #skip(url: string, reason: string, cause: SkipCause): void {
    this.#deps.metrics?.knowledgeSyncSkipped.inc({ cause });
    if (this.#skipped.length < MAX_SKIPPED_LISTED) this.#skipped.push({ url, reason });
  }

  /**
   * Waits for the site's turn when its robots.txt sets a Crawl-delay (at most MAX_CRAWL_DELAY_MS): requests to the site
   * start that far apart, whichever of the REQUESTS_PER_SITE workers makes them.
   */
  async #pace(): Promise<void> {
    const delay = Math.min(this.#robots.crawlDelayMs, MAX_CRAWL_DELAY_MS);
    if (delay <= 0) return;
    const now = performance.now();
    const at = Math.max(now, this.#nextRequestAt);
    this.#nextRequestAt = at + delay;
    if (at > now) await sleep(at - now, undefined, this.#signal ? { signal: this.#signal } : {});
  }

  /**
   * GET with our user agent, following redirects on the site's host (each hop through the guarded client, so a hop to
   * a refused address is refused). `moveHost`: the start URL may land on another host, which becomes the site's.
   */
  async #fetch(url: URL, options: FetchOptions, moveHost = false): Promise<Fetched> {
    const { http, userAgent } = this.#deps;
    let current = url;
    for (let hop = 0; ; hop++) {
      let response: GuardedResponse;
      await this.#pace();
      try {
        response = await http.request({
          method: 'GET',
          url: current.href,
          headers: { 'user-agent': userAgent, accept: options.accept, ...options.conditions },
          timeoutMs: PAGE_TIMEOUT_MS,
          maxBytes: options.maxBytes,
          ...(this.#signal ? { signal: this.#signal } : {}),
        });
      } catch (err) {
        if (!(err instanceof OutboundError)) throw err;
        if (err.reason === 'aborted') throw err;
        const where = hop === 0 ? '' : `it redirects to ${current.href}, which failed: `;
        // A page the site could not serve this time is kept; one at an address the rules refuse is not.
        const keep = err.reason !== 'refused_address' && err.reason !== 'invalid_url';
        return { kind: 'refused', reason: `${where}${lowerFirst(trimPeriod(err.message))}`, keep };
      }
      const location = header(response, 'location');
      if (![301, 302, 303, 307, 308].includes(response.status) || !location) return { kind: 'response', url: current, response };
      const next = pageUrl(location, current);
      if (!next) return { kind: 'refused', reason: `it redirects to ${location.slice(0, 200)}, which is not a web address`, keep: false };
      if (hop + 1 > MAX_REDIRECTS) return { kind: 'refused', reason: `it redirects more than ${MAX_REDIRECTS} times`, keep: false };
      if (next.host !== this.#host && !(moveHost && hop === 0)) {
        const checked = await http.validateUrl(next.href);
        const why = checked.ok ? `another site (${next.host}), which is not followed` : `${next.href}, which is refused: ${checked.reason}`;
        return { kind: 'refused', reason: `it redirects to ${why}`, keep: false };
      }
      current = next;
    }
  }
}

function header(response: GuardedResponse, name: string): string | null {
  const value = response.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

function headerValues(response: GuardedResponse, name: string): string[] {
  const value = response.headers[name];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

function statusCause(status: number): SkipCause {
  if (status === 404 || status === 410) return 'not_found';
  if (status === 401 || status === 403) return 'refused_by_site';
  return 'site_error';
}

/** A status as an owner reads it. */
function statusReason(status: number): string {
  if (status === 404) return 'the page was not found (404)';
  if (status === 410) return 'the page is gone (410)';
  if (status === 401 || status === 403) return `the site refused it (${status})`;
  if (status === 429) return 'the site asked us to slow down (429)';
  if (status >= 500) return `the site failed to serve it (${status})`;
  return `the site answered ${status}`;
}

function trimPeriod(text: string): string {
  return text.replace(/\.+$/, '');
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
