/**
 * "Answers that changed after your last edit" in Chromium (docs/scenarios.md, "Answers a knowledge change moved"): an
 * owner saves a tried question; after the page behind it is edited and the checks ran again, the Knowledge screen
 * lists the question with its answer before and now, and "Keep the new answer" keeps it. A page's words are shown as
 * text, never markup; axe-core finds no serious or critical violation, wide and 375 px wide; the page keeps its CSP
 * and asks no other origin.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECHECK_QUIET_MS } from '../../src/scenarios/limits.ts';
import { axeViolations, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const QUESTION = 'How fast do you ship?';
const BEFORE = 'We ship within two working days.';
const AFTER = 'We ship the same day <img src=x onerror="window.__pwned=1"> when you order before 3 pm.';

describe('the Knowledge screen lists the answers a change moved, in Chromium', () => {
  let database: TestDatabase;
  let service: TestService;
  let browser: Browser;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let entryId = '';
  let ahead = 0;
  const requested: string[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    [database, browser] = await Promise.all([openTestDatabase('pglite'), launchBrowser()]);
    service = await startTestService(database, {}, { knowledgeRechecks: { intervalMs: 0, now: () => new Date(Date.now() + ahead) } });
    ws = await seedWorkspace(service);
    const entry = await service.api('POST', '/v1/knowledge/entries', { token: ws.owner, body: { type: 'qa', title: QUESTION, text: BEFORE, language: 'en' } });
    entryId = entry.body.id as string;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await database?.close();
  });

  async function open(viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
    const { context, page } = await openBrowserPage(browser, { viewport, timeoutMs: 10_000, requested, cspViolations });
    await signInWithToken(page, service.url, ws.owner);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Knowledge', exact: true }).click();
    await page.getByRole('heading', { name: 'Knowledge', level: 1 }).waitFor();
    return { context, page };
  }
  async function recheck() {
    ahead = RECHECK_QUIET_MS + 1_000;
    try {
      await service.knowledgeRechecks.runDue();
    } finally {
      ahead = 0;
    }
  }
  const changes = (page: Page) => page.getByRole('region', { name: 'Answers that changed after your last edit' });

  it('an owner saves a question tried on the screen', async () => {
    const { context, page } = await open();
    try {
      const tryBox = page.getByRole('region', { name: 'Try a question' });
      await tryBox.getByLabel('Question').fill(QUESTION);
      await tryBox.getByRole('button', { name: 'Try' }).click();
      await tryBox.getByRole('button', { name: 'Save this question' }).click();
      await tryBox.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
      await changes(page).getByRole('listitem').filter({ hasText: QUESTION }).getByText(BEFORE).waitFor();
      expect(await axeViolations(page)).toEqual([]);
    } finally {
      await context.close();
    }
    const saved = (await service.api('GET', '/v1/knowledge/checks', { token: ws.owner })).body.checks;
    expect(saved).toEqual([expect.objectContaining({ question: QUESTION, answer: expect.objectContaining({ text: expect.stringContaining('two working days') }) })]);
  });

  it('after the page is edited, the question is listed with its answer before and now; "Keep the new answer" keeps it', async () => {
    await recheck(); // the entry written before the check
    expect((await service.api('PUT', `/v1/knowledge/entries/${entryId}`, { token: ws.owner, body: { type: 'qa', title: QUESTION, text: AFTER, language: 'en' } })).status).toBe(200);
    await recheck();
    const { context, page } = await open();
    try {
      const region = changes(page);
      const item = region.getByRole('list').first().getByRole('listitem').filter({ hasText: QUESTION });
      await item.locator('p', { hasText: /^Now: .*same day/ }).waitFor();
      expect(await item.locator('p', { hasText: /^Before: / }).textContent()).toContain('two working days');
      // The page's markup is text on the screen, never an element.
      expect(await item.locator('p', { hasText: /^Now: / }).textContent()).toContain('<img src=x onerror="window.__pwned=1">');
      expect(await region.locator('img').count()).toBe(0);
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      expect(await axeViolations(page)).toEqual([]);

      const keep = item.getByRole('button', { name: `Keep the new answer to ${QUESTION}` });
      await keep.focus();
      await page.keyboard.press('Enter');
      await item.getByText('Kept as the expected answer.').waitFor();
      expect(await page.evaluate('document.activeElement?.id')).toBe('changes');
    } finally {
      await context.close();
    }
    const check = (await service.api('GET', '/v1/knowledge/checks', { token: ws.owner })).body.checks[0];
    expect(check.answer.text).toContain('same day');
  });

  it('fits a phone-sized screen and stays accessible', async () => {
    const { context, page } = await open({ width: 375, height: 800 });
    try {
      await changes(page).getByText('Kept as the expected answer.').waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      expect(await axeViolations(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('kept its CSP and asked no other origin', () => {
    expect(cspViolations).toEqual([]);
    const origins = new Set(requested.map((u) => new URL(u).origin));
    expect([...origins]).toEqual([new URL(service.url).origin]);
  });
});
