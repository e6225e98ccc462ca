/**
 * The website and files on the Knowledge screen, in Chromium (docs/knowledge.md, "Websites and files" and "On the
 * screen"): an owner adds a shop's website by its sitemap (a local HTTPS site signed by the test CA, with robots.txt,
 * a few pages, one of them gone), watches it being read and sees "Up to date" with its page count and the skipped page
 * with its reason, uploads a PDF made here, and asks "Try a question" about the site, which answers from it. The screen
 * is checked with axe-core (WCAG 2.1 A and AA: no serious or critical violation), 375 px wide nothing is wider than the
 * screen, and an agent sees the list without the forms. On both databases; the page asks no other origin.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, docScreenshot, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

/** Each page waits this long, so the screen has a sync in progress to show. */
const PAGE_DELAY_MS = 700;
const RETURNS = 'Shoes that have been worn outside cannot be returned.';

const PAGES: Record<string, { title: string; body: string[] }> = {
  '/': { title: 'Trailhead Shoes', body: ['Trailhead Shoes sells walking and running shoes from our shop in Utrecht.', 'Read about returns, shipping and our story on the pages below.'] },
  '/returns': {
    title: 'Returns policy',
    body: [
      `You can return unworn shoes within 30 days of delivery for a full refund. ${RETURNS} Socks and insoles cannot be returned for hygiene reasons.`,
      'To return a pair, pack it in its original box and send it to our warehouse with the return form from your order email.',
    ],
  },
  '/shipping': {
    title: 'Shipping',
    body: ['We ship to the Netherlands, Belgium and Germany. Parcels arrive within two working days and shipping is free above 50 euros.'],
  },
  '/about': { title: 'Our story', body: ['Trailhead Shoes was started in 2012 by two hikers who could not find shoes that fit after a long day on the trail.'] },
};

function page(path: string): string {
  const p = PAGES[path]!;
  const links = Object.keys(PAGES).map((href) => `<a href="${href}">${PAGES[href]!.title}</a>`).join(' ');
  return `<!doctype html><html lang="en"><head><title>${p.title} · Trailhead Shoes</title></head><body>
<header><nav>${links}</nav><div class="cookie-banner">We use cookies. <button>Accept</button></div></header>
<main><article><h1>${p.title}</h1>${p.body.map((t) => `<p>${t}</p>`).join('\n')}</article></main>
<footer>© Trailhead Shoes · Stationsplein 1, Utrecht · ${links}</footer></body></html>`;
}

/** The shop's site: robots.txt, a sitemap that lists the pages and one that is gone, each page a little slow. */
function shopSite(origin: () => string) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    if (path === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`User-agent: *\nDisallow: /private/\nSitemap: ${origin()}/sitemap.xml\n`);
      return;
    }
    if (path === '/sitemap.xml') {
      const urls = [...Object.keys(PAGES), '/gone'].map((p) => `<url><loc>${origin()}${p}</loc></url>`).join('');
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls}</urlset>`);
      return;
    }
    await new Promise((r) => setTimeout(r, PAGE_DELAY_MS));
    if (!PAGES[path]) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>Not found</title><p>Not found</p>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page(path));
  };
}

/** A one-page PDF made here: the gift-card rules. */
async function giftCardsPdf(): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const sheet = pdf.addPage([595, 842]);
  const lines = ['Gift cards', '', 'Gift cards are valid for two years from the day of purchase.', 'They can be used in the shop and online, and cannot be exchanged for cash.'];
  lines.forEach((line, i) => sheet.drawText(line, { x: 50, y: 780 - i * 20, size: 12, font }));
  return Buffer.from(await pdf.save());
}

describe('the website and files on the Knowledge screen in Chromium', () => {
  let browser: Browser;
  let site: TestHttpsServer;
  const requested: string[] = [];
  const cspViolations: string[] = [];
  let pdf: Buffer;

  beforeAll(async () => {
    [browser, site, pdf] = await Promise.all([launchBrowser(), startHttpsServer(), giftCardsPdf()]);
    site.handle(shopSite(() => site.origin));
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  describeEachDatabase('an owner and an agent', (get) => {
    let service: TestService;
    let ws: Awaited<ReturnType<typeof seedWorkspace>>;
    let context: BrowserContext;
    let page: Page;

    beforeAll(async () => {
      service = await startTestService(get());
      ws = await seedWorkspace(service);
      // Times on the screen are the workspace's.
      expect((await service.api('PATCH', '/v1/workspace', { token: ws.owner, body: { time_zone: 'Pacific/Auckland' } })).status).toBe(200);
      ({ context, page } = await open(ws.owner));
    });
    afterAll(async () => {
      await context?.close();
      await service?.stop();
    });

    async function open(token: string, viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
      const opened = await openBrowserPage(browser, { viewport, requested, cspViolations, timeoutMs: 15_000 });
      await signInWithToken(opened.page, service.url, token);
      await opened.page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Knowledge', exact: true }).click();
      await opened.page.getByRole('heading', { name: 'Knowledge', level: 1 }).waitFor();
      return opened;
    }

    const sources = () => page.getByRole('region', { name: 'Your website and files' });
    const sourceItem = (text: string) => sources().getByRole('listitem').filter({ hasText: text });

    it('sees where to add the website and a file, and no word of a plugin that does not exist', async () => {
      await sources().getByText('No website or file yet.', { exact: false }).waitFor();
      await page.getByRole('form', { name: 'Add your website' }).getByLabel('Web address').waitFor();
      await page.getByRole('form', { name: 'Upload a file' }).getByLabel('File', { exact: true }).waitFor();
      expect(await page.locator('main').textContent()).not.toMatch(/plugin/i);
      expect(await axeViolations(page)).toEqual([]);
    });

    it('adds the website by its sitemap, watches it being read, and sees it up to date with its pages and the one skipped', { timeout: 60_000 }, async () => {
      const form = page.getByRole('form', { name: 'Add your website' });
      await form.getByLabel('Web address').fill(`${site.origin}/sitemap.xml`);
      // An address ending in .xml is taken for a sitemap.
      await expect(form.getByLabel('The pages this sitemap lists').isChecked()).resolves.toBe(true);
      await expect(form.getByLabel('Update it').inputValue()).resolves.toBe('daily');
      await form.getByRole('button', { name: 'Add the website' }).click();
      await page.getByText(/^Added .*sitemap\.xml\. Its pages are being read/).waitFor();
      const item = sourceItem(`${site.origin}/sitemap.xml`);
      await item.getByText('Sitemap', { exact: true }).waitFor();
      // The progress, then the end of it, without reloading the page.
      await item.getByText(/^(Waiting to start|Reading your pages…)$/).waitFor();
      await item.getByText('Up to date', { exact: true }).waitFor({ timeout: 45_000 });
      await item.getByText(/\b4 read\b/).waitFor();
      await item.getByText(/1 skipped/).waitFor();
      await item.getByText('1 page skipped, and why').click();
      await item.getByText(`${site.origin}/gone`).waitFor();
      // In the workspace's time zone (Pacific/Auckland), named.
      await expect(item.getByText(/^Last updated: /).textContent()).resolves.toMatch(/GMT\+1[23]/);
      await page.getByText(/sitemap\.xml is up to date/).waitFor();
      // The form is ready for the next address.
      await expect(form.getByLabel('From this start page, following its links').isChecked()).resolves.toBe(true);
      await expect(form.getByLabel('Web address').inputValue()).resolves.toBe('');
      if (get().kind === 'pglite') await docScreenshot(sources(), 'dashboard-knowledge-sources.png');
      const stored = (await service.api('GET', '/v1/knowledge/sources', { token: ws.owner })).body.sources;
      expect(stored).toEqual([expect.objectContaining({ kind: 'sitemap', url: `${site.origin}/sitemap.xml`, status: 'done', pages: 4 })]);
      expect(await axeViolations(page)).toEqual([]);
    });

    it('Update now reads the website again, the progress shown, focus kept on the button', { timeout: 60_000 }, async () => {
      const item = sourceItem(`${site.origin}/sitemap.xml`);
      const button = item.getByRole('button', { name: `Update now: ${site.origin}/sitemap.xml` });
      await button.focus();
      await page.keyboard.press('Enter');
      await item.getByText(/^(Waiting to start|Reading your pages…)$/).waitFor();
      await item.getByText('Up to date', { exact: true }).waitFor({ timeout: 45_000 });
      await page.getByText(/sitemap\.xml is up to date/).waitFor();
      // Refreshed in place: the button pressed still has the focus.
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Update now');
    });

    it('a private address is refused beside the field, naming the rule', async () => {
      const form = page.getByRole('form', { name: 'Add your website' });
      const address = form.getByLabel('Web address');
      await address.fill('https://10.0.0.7/');
      await expect(form.getByLabel('From this start page, following its links').isChecked()).resolves.toBe(true);
      await form.getByRole('button', { name: 'Add the website' }).click();
      await expect.poll(() => address.getAttribute('aria-invalid')).toBe('true');
      expect(await page.evaluate('document.activeElement.getAttribute("name")')).toBe('url');
      const describedBy = (await address.getAttribute('aria-describedby'))!.split(' ');
      const said = await Promise.all(describedBy.map((id) => page.locator(`[id="${id}"]`).textContent()));
      expect(said.join(' ')).toMatch(/private|OUTBOUND_ALLOW|not allowed|refused/i);
      expect((await service.api('GET', '/v1/knowledge/sources', { token: ws.owner })).body.sources).toHaveLength(1);
      await address.fill('');
    });

    it('uploads a PDF made here and sees it read', { timeout: 30_000 }, async () => {
      const form = page.getByRole('form', { name: 'Upload a file' });
      await form.getByLabel('File', { exact: true }).setInputFiles({ name: 'gift-cards.pdf', mimeType: 'application/pdf', buffer: pdf });
      await form.getByRole('button', { name: 'Upload' }).click();
      await page.getByText('Uploaded gift-cards.pdf.', { exact: false }).waitFor();
      const item = sourceItem('gift-cards.pdf');
      await item.getByText('File', { exact: true }).waitFor();
      await item.getByText('Up to date', { exact: true }).waitFor({ timeout: 20_000 });
      expect(await item.getByRole('button', { name: /^Update/ }).count()).toBe(0);
    });

    it('Try a question is answered from the website', { timeout: 30_000 }, async () => {
      const tryBox = page.getByRole('region', { name: 'Try a question' });
      await tryBox.getByLabel('Question').fill('Can I return shoes I have worn outside?');
      await tryBox.getByRole('button', { name: 'Try' }).click();
      await tryBox.getByText('What the knowledge base found').waitFor();
      await expect(tryBox.locator('.answer .reply').first().textContent()).resolves.toContain('worn outside cannot be returned');
      await tryBox.getByRole('listitem').first().getByText(/from your website/).waitFor();
      // And the file: asked through the API, as the same search answers it.
      const tried = await service.api('POST', '/v1/knowledge/try', { token: ws.owner, body: { question: 'How long is a gift card valid?', language: 'en' } });
      expect(tried.body.answer.text).toContain('two years');
    });

    it('is usable 375 px wide: nothing is wider than the screen, still no accessibility violation', async () => {
      await page.setViewportSize({ width: 375, height: 800 });
      await page.getByRole('heading', { name: 'Knowledge', level: 1 }).waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      expect(await axeViolations(page)).toEqual([]);
      await page.setViewportSize({ width: 1100, height: 900 });
    });

    it('an agent sees the list without the forms or the buttons', async () => {
      const agent = await open(ws.agent);
      try {
        const region = agent.page.getByRole('region', { name: 'Your website and files' });
        await region.getByText(`${site.origin}/sitemap.xml`).waitFor();
        await region.getByText('gift-cards.pdf').waitFor();
        expect(await agent.page.getByRole('form', { name: 'Add your website' }).count()).toBe(0);
        expect(await agent.page.locator('input[type="file"]').count()).toBe(0);
        expect(await region.getByRole('button', { name: /^(Update|Remove)/ }).count()).toBe(0);
        expect(await axeViolations(agent.page)).toEqual([]);
      } finally {
        await agent.context.close();
      }
    });

    it('removes the file after confirming: it is gone from the list and the answers', { timeout: 20_000 }, async () => {
      page.once('dialog', (d) => void d.accept());
      await sourceItem('gift-cards.pdf').getByRole('button', { name: 'Remove gift-cards.pdf' }).click();
      await page.getByText('Removed gift-cards.pdf.').waitFor();
      await expect.poll(() => sourceItem('gift-cards.pdf').count()).toBe(0);
      const tried = await service.api('POST', '/v1/knowledge/try', { token: ws.owner, body: { question: 'How long is a gift card valid?', language: 'en' } });
      expect(tried.body.answer.text).not.toContain('two years');
    });
  });

  it('asked no other origin and broke no CSP rule', () => {
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((u) => !u.startsWith('http://127.0.0.1:'))).toEqual([]);
    expect(requested.filter((u) => u.startsWith(site.origin))).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
