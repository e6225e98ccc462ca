/**
 * Limits of a website's sync, in one place (docs/knowledge.md, "Websites and files"). The page and file sizes are the
 * knowledge base's own (../limits.ts: MAX_PAGE_BYTES, MAX_FILE_BYTES); the pages per workspace are a setting
 * (KNOWLEDGE_MAX_PAGES, src/config.ts).
 */

/** Requests at a time to one site: a shop's server is not a CDN. */
export const REQUESTS_PER_SITE = 2;
/** One request's deadline over connect, headers and body, in ms. */
export const PAGE_TIMEOUT_MS = 15_000;
/** Redirects followed from one URL (each hop checked by the outbound rules). */
export const MAX_REDIRECTS = 5;
/** robots.txt is read up to this many bytes (Google reads 500 KiB). */
export const MAX_ROBOTS_BYTES = 500 * 1024;
/** A sitemap is read up to this many bytes (the sitemaps protocol allows 50 MB uncompressed). */
export const MAX_SITEMAP_BYTES = 50 * 1024 * 1024;
/** Sitemap indexes are followed this deep. */
export const MAX_SITEMAP_DEPTH = 3;
/** The skipped URLs a source lists (with their reasons); the count beyond is still in `found`. */
export const MAX_SKIPPED_LISTED = 200;
/** How long after a sync the next one is due, by schedule, in ms. */
export const SCHEDULE_MS = { daily: 24 * 3_600_000, weekly: 7 * 24 * 3_600_000 } as const;
/** How often an engine looks for a due sync, in ms (an owner's "Sync now" starts one at once on the engine asked). */
export const SOURCE_POLL_MS = 60_000;
/** The robots.txt token we obey (besides `*`), and the product our user agent names. */
export const ROBOTS_AGENT = 'botlink';
/** A running sync writes its progress (and renews its claim) this often, in ms, so the screen follows it. */
export const PROGRESS_EVERY_MS = 250;
/**
 * A robots.txt `Crawl-delay` is obeyed up to this many ms between two requests to the site; a longer one is taken as
 * this (a site asking 60 s between pages would take eight hours for 500 of them).
 */
export const MAX_CRAWL_DELAY_MS = 10_000;
/**
 * Text of an uploaded file kept, in UTF-8 bytes: 2 MB (about 300,000 words, a thick manual). The rest is cut, at a
 * paragraph's end where one is near, and the upload says so.
 */
export const MAX_FILE_TEXT_BYTES = 2 * 1024 * 1024;

/*
 * Reading text (HTML, PDF, Word) runs in a worker thread (./extraction-pool.ts), off the engine's event loop: a phone
 * turn on the same engine never waits for a catalogue page's DOM or a PDF's fonts. One worker per engine, so one of
 * two cores stays the engine's; documents wait their turn.
 */
/** The extraction worker's old-generation heap, in MB: a document that needs more is skipped, not the engine's. */
export const EXTRACTION_HEAP_MB = 256;
/** A web page's text is read within this many ms, or the page is skipped ("took too long to read"). */
export const PAGE_READ_MS = 10_000;
/** An uploaded file's text is read within this many ms (a 20 MB PDF of text takes a few seconds), or it is refused. */
export const FILE_READ_MS = 60_000;
/** A worker without work this long is stopped (its heap is freed, for the engine to reuse); the next document starts another. */
export const EXTRACTION_IDLE_MS = 30_000;
