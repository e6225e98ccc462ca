/**
 * Reading off the engine's loop (docs/knowledge.md, "Websites and files" → "Reading, off the engine's loop"): the
 * extraction worker gives what the pure functions give in-process; a document that runs out of time or memory fails
 * with its reason in words and the next one is read by a new worker; the engine's event loop keeps its timers while a
 * large PDF is read; an idle worker goes, and closing refuses what is left.
 */
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.ts';
import { extractFile } from '../../../src/knowledge/extract/index.ts';
import { readPage } from '../../../src/knowledge/sources/extraction-jobs.ts';
import { ExtractionFailed, ExtractionPool, type ExtractionFailure } from '../../../src/knowledge/sources/extraction-pool.ts';

const misbehaving = new URL('./fixtures/misbehaving-worker.ts', import.meta.url);
const page = (path: string, body = '<main><h1>Returns</h1><p>Shoes can be returned within 45 days when they were not worn outside.</p><a href="/shipping">Shipping</a></main>') => ({
  bytes: new TextEncoder().encode(`<!doctype html><html lang="en"><head><title>Returns</title></head><body>${body}</body></html>`),
  contentType: 'text/html; charset=utf-8',
  url: `https://shop.example${path}`,
  links: true,
});

/** A PDF of `pages` pages of running text, made here. */
async function bigPdf(pages: number): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (let p = 0; p < pages; p++) {
    const sheet = pdf.addPage([595, 842]);
    for (let l = 0; l < 50; l++) sheet.drawText(`Line ${l} of page ${p}: shoes, socks and boots are returned within 45 days of delivery`, { x: 40, y: 800 - l * 15, size: 10, font });
  }
  return pdf.save();
}

let pool: ExtractionPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

describe('the extraction worker', () => {
  it('reads a page as the pure function does in-process: text, links, robots directives', async () => {
    pool = new ExtractionPool();
    const job = page('/returns');
    const read = await pool.readPage(job);
    expect(read).toEqual(readPage(job));
    expect(read.extracted.text).toContain('returned within 45 days');
    expect(read.links).toEqual(['https://shop.example/shipping']);
  });

  it('reads a file as extractFile does, and refuses an unreadable one with the same sentence (422)', async () => {
    pool = new ExtractionPool();
    const bytes = new TextEncoder().encode('Returns\n\nShoes that have been worn\noutside cannot be returned.');
    expect(await pool.readFile({ bytes, name: 'returns.txt', contentType: 'text/plain' })).toEqual(await extractFile(bytes, { name: 'returns.txt', contentType: 'text/plain' }));
    const refused = await pool.readFile({ bytes: new Uint8Array([1, 0, 2, 0]), name: 'tool.exe', contentType: null }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('unprocessable');
    expect((refused as AppError).message).toMatch(/^"tool\.exe" is not a document Botlink can read/);
  });

  it('gives up on a page that takes too long, says so in words, and reads the next one with a new worker', async () => {
    const restarts: ExtractionFailure[] = [];
    pool = new ExtractionPool({ workerUrl: misbehaving, pageMs: 3_000, onRestart: (r) => restarts.push(r) });
    const [slow, next] = await Promise.allSettled([pool.readPage(page('/spin')), pool.readPage(page('/returns'))]);
    expect(slow.status).toBe('rejected');
    const failure = (slow as PromiseRejectedResult).reason as ExtractionFailed;
    expect(failure).toBeInstanceOf(ExtractionFailed);
    expect(failure.reason).toBe('time_limit');
    expect(failure.message).toBe('took too long to read (more than 3 seconds)');
    expect(next.status).toBe('fulfilled');
    expect((next as PromiseFulfilledResult<Awaited<ReturnType<ExtractionPool['readPage']>>>).value.extracted.title).toBe('Returns');
    expect(restarts).toEqual(['time_limit']);
    expect(pool.started).toBe(2);
  });

  it('survives a document that runs the worker out of memory: that one fails, the engine and the next one do not', async () => {
    const restarts: ExtractionFailure[] = [];
    pool = new ExtractionPool({ workerUrl: misbehaving, heapMb: 64, pageMs: 30_000, onRestart: (r) => restarts.push(r) });
    const hog = await pool.readPage(page('/hog')).catch((e: unknown) => e);
    expect(hog).toBeInstanceOf(ExtractionFailed);
    expect((hog as ExtractionFailed).reason).toBe('out_of_memory');
    expect((hog as ExtractionFailed).message).toBe('needed more memory to read than the 64 MB it may take');
    expect((await pool.readPage(page('/returns'))).extracted.title).toBe('Returns');
    expect(restarts).toEqual(['out_of_memory']);
  }, 30_000);

  it('turns a file that takes too long into a 422 that names it', async () => {
    pool = new ExtractionPool({ fileMs: 1 });
    const refused = await pool.readFile({ bytes: await bigPdf(20), name: 'catalogue.pdf', contentType: 'application/pdf' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('unprocessable');
    expect((refused as AppError).message).toBe('"catalogue.pdf" took too long to read (more than 0.001 seconds).');
  });

  it("keeps the engine's event loop free while a large PDF is read", async () => {
    pool = new ExtractionPool();
    const pdf = await bigPdf(300);
    // Warm: the worker's start (loading pdf.js) is not what is measured.
    await pool.readPage(page('/warm'));
    let last = performance.now();
    let longestGap = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 5);
    const started = performance.now();
    const read = await pool.readFile({ bytes: pdf, name: 'catalogue.pdf', contentType: 'application/pdf' });
    const took = performance.now() - started;
    clearInterval(ticker);
    console.info(`a ${Math.round(pdf.byteLength / 1024)} KiB PDF of 300 pages read in ${Math.round(took)} ms; the loop's longest gap ${Math.round(longestGap)} ms`);
    // (Lines 0, 1, 48 and 49 of each page repeat with another number: a running header and footer, dropped.)
    expect(read.text.includes('Line 47 of page 299: shoes')).toBe(true);
    // Generous: a shared CI machine; in-process, pdf.js holds the loop for the whole read.
    expect(longestGap).toBeLessThan(200);
  }, 60_000);

  it('lets an idle worker go, starts another for the next document, and refuses documents once closed', async () => {
    pool = new ExtractionPool({ idleMs: 50 });
    await pool.readPage(page('/a'));
    await new Promise((r) => setTimeout(r, 200));
    await pool.readPage(page('/b'));
    expect(pool.started).toBe(2);
    expect(pool.restarts).toBe(0);
    const inFlight = Promise.allSettled([pool.readPage(page('/c')), pool.readPage(page('/d'))]);
    await pool.close();
    for (const result of [...(await inFlight), ...(await Promise.allSettled([pool.readPage(page('/e'))]))]) {
      expect(result.status).toBe('rejected');
      expect(((result as PromiseRejectedResult).reason as Error).message).toBe('could not be read: the engine is stopping');
    }
  });
});
