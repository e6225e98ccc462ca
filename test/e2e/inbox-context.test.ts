/**
 * The customer beside the conversation, in a real browser (Debian's Chromium, headless) against the real service
 * (docs/api-tour.md, "The team's side"): the waiting row says the customer's own words, not the bot's sentence after
 * them; the open conversation shows the customer panel (the page the chat started on, the language, the local time in
 * the visitor's browser time zone) and the same customer's earlier conversation, which opens. The selected inbox view
 * is readable (its text at least 4.5:1 on its own background, computed by the browser, 1280 and 375 px wide), and
 * every inbox screen is clean under axe-core (WCAG 2.1 A and AA).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, collectConsoleErrors, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';
const WORDS = 'Habt ihr das Zelt Trail 4 auch in Grün?';
const EARLIER = 'Wo bleibt meine Bestellung 7781?';

// The browser's globals, typed just enough for the function this file runs in the page (the Node program has no DOM).
declare const document: { querySelector(selector: string): unknown };
declare function getComputedStyle(el: unknown): { color: string; backgroundColor: string };

/** WCAG 2.1's contrast ratio of two `rgb(…)`/`rgba(…)` colours (opaque). */
function contrast(a: string, b: string): number {
  const luminance = (css: string) => {
    const [r, g, bl] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

describe('the customer beside the conversation, in the Inbox', () => {
  let database: TestDatabase;
  let service: TestService;
  let browser: Browser;
  let page: Page;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let waitingId = '';
  let earlierId = '';
  const problems: string[] = [];

  async function chat(text: string, email: string, extra: Record<string, unknown>, escalate: boolean): Promise<string> {
    const widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
    const headers = { 'x-widget-key': widgetKey, origin: SHOP };
    const started = await service.api('POST', '/v1/webchat/conversations', { headers, body: { visitor_message: 'Hallo', page_url: `${SHOP}/zelte/trail-4?utm_source=news`, ...extra } });
    expect(started.status).toBe(201);
    const id = started.body.conversation_id as string;
    const visitor = { ...headers, 'x-visitor-token': started.body.visitor_token as string };
    expect((await service.api('POST', `/v1/webchat/conversations/${id}/messages`, { headers: visitor, body: { message: text } })).status).toBe(200);
    expect((await service.api('POST', `/v1/webchat/conversations/${id}/lead`, { headers: visitor, body: { name: 'Kim', email } })).status).toBeLessThan(300);
    if (escalate) expect((await service.api('POST', `/v1/webchat/conversations/${id}/escalate`, { headers: visitor, body: {} })).status).toBe(200);
    await service.runtime.settled();
    return (await database.db.selectFrom('sessions').select('id').where('external_id', '=', id).executeTakeFirstOrThrow()).id;
  }

  beforeAll(async () => {
    [database, browser] = await Promise.all([openTestDatabase('pglite'), launchBrowser()]);
    service = await startTestService(database);
    ws = await seedWorkspace(service, 'Zelte');
    expect((await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } })).status).toBe(200);
    earlierId = await chat(EARLIER, 'kim@example.org', { language: 'de' }, false);
    waitingId = await chat(WORDS, 'Kim@Example.org', { language: 'de', time_zone: 'Asia/Tokyo' }, true);
    ({ page } = await openBrowserPage(browser, { viewport: { width: 1280, height: 900 }, timeoutMs: 10_000 }));
    collectConsoleErrors(page, problems, 'console: ');
    await signInWithToken(page, service.url, ws.agent);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await database?.close();
  });

  /** The selected view's text on its own background, as the browser computed them. */
  async function selectedViewContrast(): Promise<{ text: string; ratio: number }> {
    const colours = (await page.evaluate(() => {
      const el = document.querySelector('nav.views a[aria-current="page"]');
      const style = getComputedStyle(el);
      return { color: style.color, background: style.backgroundColor, text: (el as { textContent: string }).textContent };
    })) as { color: string; background: string; text: string };
    // A transparent background would be the page's: the rule that broke it painted one, so the check wants one too.
    expect(colours.background).not.toMatch(/rgba\(.*,\s*0\)$/);
    return { text: colours.text, ratio: contrast(colours.color, colours.background) };
  }

  it("the waiting row says the customer's own words, and the selected view is readable at 1280 and 375 px", async () => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: /^Inbox/ }).click();
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    const row = page.getByTestId('inbox-row').filter({ hasText: WORDS });
    await row.waitFor();
    expect(await row.getByTestId('customer-words').textContent()).toBe(`Customer: ${WORDS}`);
    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: 900 });
      const selected = await selectedViewContrast();
      expect(selected.text).toBe('Waiting');
      expect(selected.ratio, `the selected view at ${width} px`).toBeGreaterThanOrEqual(4.5);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
      expect(await axeViolations(page)).toEqual([]);
    }
    // Another view selected: the same.
    await page.getByRole('navigation', { name: 'Inbox views' }).getByRole('link', { name: 'All open' }).click();
    await page.getByTestId('inbox-row').filter({ hasText: WORDS }).waitFor();
    expect((await selectedViewContrast()).ratio).toBeGreaterThanOrEqual(4.5);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('the open conversation shows the page it started on, the language and the local time in the browser\'s zone', async () => {
    await page.getByRole('navigation', { name: 'Inbox views' }).getByRole('link', { name: 'Waiting' }).click();
    await page.getByTestId('inbox-row').filter({ hasText: WORDS }).click();
    await page.getByRole('heading', { name: 'Conversation', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/inbox/${waitingId}`);
    const panel = page.getByRole('region', { name: 'Customer' });
    await panel.getByTestId('customer-page-url').waitFor();
    // Without its query string: it may carry tokens and ids.
    expect(await panel.getByTestId('customer-page-url').textContent()).toBe(`${SHOP}/zelte/trail-4`);
    expect(await panel.getByRole('link', { name: `${SHOP}/zelte/trail-4` }).getAttribute('rel')).toBe('noopener noreferrer');
    expect(await panel.getByTestId('customer-language').textContent()).toBe('German (de)');
    expect(await panel.getByTestId('customer-email').textContent()).toBe('Kim@Example.org');
    const local = (await panel.getByTestId('customer-local-time').textContent()) ?? '';
    expect(local).toContain('(Asia/Tokyo, from their browser)');
    // The time in Tokyo now (or a minute on, should the minute turn meanwhile), as the browser writes it.
    const tokyo = (offsetMs: number) => page.evaluate(`new Intl.DateTimeFormat(undefined, { timeZone: 'Asia/Tokyo', hour: '2-digit', minute: '2-digit', weekday: 'long' }).format(new Date(Date.now() + ${offsetMs}))`);
    expect([await tokyo(-60_000), await tokyo(0), await tokyo(60_000)]).toContain(local.replace(' (Asia/Tokyo, from their browser)', ''));
    expect(await axeViolations(page)).toEqual([]);
  });

  it('lists the earlier conversation of the same customer (by email), which opens', async () => {
    const earlier = page.getByRole('region', { name: 'Customer' }).getByTestId('earlier-conversation');
    await earlier.waitFor();
    expect(await earlier.count()).toBe(1);
    expect(await page.getByRole('region', { name: 'Customer' }).textContent()).toContain('Website chat');
    await earlier.click();
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/dashboard/inbox/${earlierId}`);
    await page.getByRole('list', { name: 'Messages' }).getByText(EARLIER).waitFor();
    // And back: the one waiting is listed there in turn.
    await page.getByRole('region', { name: 'Customer' }).getByTestId('earlier-conversation').waitFor();
    await page.setViewportSize({ width: 375, height: 900 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    expect(await axeViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(problems).toEqual([]);
  });

  it("a chat's follow-up says it in a chat's words, never the phone's; the Conversations list never says \"not connected\"", async () => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Team', exact: true }).click();
    const notes = page.getByRole('region', { name: 'Notifications' });
    const note = notes.getByRole('listitem').filter({ hasText: 'The customer asked for a person.' }).first();
    await note.waitFor();
    expect(await note.textContent()).toContain('Asked for a person');
    expect(await notes.textContent()).not.toContain('Call back');
    // A chat is answered in the Inbox.
    expect(await note.getByRole('link', { name: 'Open the conversation' }).getAttribute('href')).toBe(`/dashboard/inbox/${waitingId}`);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Conversations', exact: true }).click();
    await page.getByRole('heading', { name: 'Conversations', level: 1 }).waitFor();
    await page.getByText('Asked for a person', { exact: true }).first().waitFor();
    expect(await page.locator('main').textContent()).not.toContain('not connected');
    expect(await axeViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
  });
});
