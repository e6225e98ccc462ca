/**
 * The Privacy screen (docs/privacy.md) in a real browser: an owner sets how long conversations are kept, downloads a
 * customer's data and erases it, and reads the audit log that recorded all of it; an admin sees the audit log only.
 * axe-core (WCAG 2.1 A and AA: no serious or critical violation), wide and 375 px wide, no CSP violation.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, docScreenshot, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';

describe('the Privacy screen', () => {
  let database: TestDatabase;
  let service: TestService;
  let browser: Browser;
  let page: Page;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  const cspViolations: string[] = [];

  beforeAll(async () => {
    [database, browser] = await Promise.all([openTestDatabase('pglite'), launchBrowser()]);
    service = await startTestService(database, {}, { retention: { intervalMs: 0 } });
    ws = await seedWorkspace(service, 'Privacy');
    // A customer who chatted and left their email.
    expect((await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } })).status).toBe(200);
    const widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
    const headers = { 'x-widget-key': widgetKey, origin: SHOP };
    const chat = await service.api('POST', '/v1/webchat/conversations', { headers, body: { visitor_message: 'Do you sell tents?', page_url: SHOP } });
    await service.api('POST', `/v1/webchat/conversations/${chat.body.conversation_id as string}/lead`, { headers: { ...headers, 'x-visitor-token': chat.body.visitor_token as string }, body: { name: 'Kim', email: 'kim@example.org' } });
    await service.runtime.settled();
    ({ page } = await openBrowserPage(browser, { cspViolations }));
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await database?.close();
  });

  async function signIn(token: string) {
    await page.goto(`${service.url}/dashboard`);
    await page.evaluate('localStorage.clear()');
    await signInWithToken(page, service.url, token);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Privacy', exact: true }).click();
    await page.getByRole('heading', { name: 'Privacy', level: 1 }).waitFor();
  }

  it('an owner keeps conversations 90 days, downloads and erases a customer, and the audit log says so', async () => {
    await signIn(ws.owner);
    await page.getByLabel('Days to keep conversations').fill('90');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved: conversations are kept 90 days.').waitFor();
    expect((await service.api('GET', '/v1/workspace/retention', { token: ws.owner })).body).toEqual({ days: 90 });

    await page.getByLabel('Find them by').selectOption('email');
    await page.getByLabel('Their phone number, email or WhatsApp id').fill('kim@example.org');
    await page.getByRole('button', { name: 'Download everything about them' }).click();
    await page.getByRole('link', { name: 'Save the file' }).waitFor();
    // Counted in an owner's words, not the tables' names.
    const foundLine = await page.getByText(/^Found /).textContent();
    expect(foundLine).toMatch(/\b1 conversation\b/);
    expect(foundLine).not.toMatch(/session|webchat|_/);

    await page.getByRole('button', { name: 'Erase everything about them' }).click();
    await page.getByText('Tick the box first').waitFor();
    await page.getByLabel('I understand erasing cannot be undone').check();
    await page.getByRole('button', { name: 'Erase everything about them' }).click();
    await page.getByText(/Erased .*\b1 conversation\b/).waitFor();
    const found = await service.api('POST', '/v1/privacy/export', { token: ws.owner, body: { email: 'kim@example.org' } });
    expect(found.body.found.sessions).toBe(0);

    // The log as it is now: reload the screen.
    await page.reload();
    await page.getByText('Erased a customer’s data').first().waitFor();
    const audit = await service.api('GET', '/v1/audit', { token: ws.owner });
    expect((audit.body.entries as { action: string }[]).filter((e) => e.action === 'customer_erased')).toHaveLength(1);
    for (const words of ['Downloaded a customer’s data', 'Changed how long conversations are kept', 'Changed the website chat settings']) {
      await expect(page.getByText(words).count()).resolves.toBeGreaterThan(0);
    }
    expect(await axeViolations(page)).toEqual([]);
    await docScreenshot(page, 'dashboard-privacy.png', { fullPage: true });
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    expect(await axeViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1100, height: 900 });
    expect(cspViolations).toEqual([]);
  });
});
