/**
 * The knowledge editor in Chromium (docs/knowledge.md): an owner adds a question-and-answer pair on the Knowledge
 * screen, and the next question is answered from it: in "Try a question" (with and without the integrator) and in a
 * real website-chat message through the widget API. The screen is checked with axe-core (WCAG 2.1 A and AA: no serious
 * or critical violation) wide and 375 px wide, keeps its CSP and asks no other origin; an agent reads it only.
 * Screenshots go to docs/screenshots/dashboard-knowledge-*.png with `npm run screenshots`.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, docScreenshot, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { refuseUnsigned, sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const QUESTION = 'Do you ship to Belgium?';
const ANSWER = 'Yes. Parcels to Belgium arrive within three working days.';

describe('the knowledge editor in Chromium', () => {
  let database: TestDatabase;
  let service: TestService;
  let integrator: TestHttpsServer;
  let browser: Browser;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let integratorKey = '';
  const requested: string[] = [];
  const cspViolations: string[] = [];
  const channelMessages: string[] = [];

  beforeAll(async () => {
    [database, integrator, browser] = await Promise.all([openTestDatabase('pglite'), startHttpsServer(), launchBrowser()]);
    service = await startTestService(database);
    ws = await seedWorkspace(service);
    // The integrator knows orders only: anything else it answers with handled false, so the built-in AI answers.
    integrator.handle((req, res, body) => {
      if (refuseUnsigned(integratorKey, req, res, body)) return;
      const message = String((JSON.parse(body.toString()) as { message?: unknown }).message ?? '');
      channelMessages.push(message);
      if (/order/i.test(message)) sendJson(res, 200, { reply: 'Order 1234 ships tomorrow.', handled: true });
      else sendJson(res, 200, { reply: 'I only know about orders.', handled: false });
    });
    integratorKey = (await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: `${integrator.origin}/botlink/channel` } })).body.key;
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await integrator?.close();
    await database?.close();
  });

  async function open(token: string, viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
    const { context, page } = await openBrowserPage(browser, { viewport, requested, cspViolations });
    await signInWithToken(page, service.url, token);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Knowledge', exact: true }).click();
    await page.getByRole('heading', { name: 'Knowledge', level: 1 }).waitFor();
    return { context, page };
  }

  async function shot(page: Page, name: string): Promise<void> {
    await docScreenshot(page, `dashboard-${name}.png`, { fullPage: true });
  }

  describe('an owner', () => {
    let context: BrowserContext;
    let page: Page;
    beforeAll(async () => {
      ({ context, page } = await open(ws.owner));
    });
    afterAll(async () => {
      await context?.close();
    });

    it('sees an empty knowledge base, with no accessibility violation', async () => {
      await page.getByText('Nothing written here yet.').waitFor();
      await page.getByText('Nothing synced yet.').waitFor();
      await page.getByLabel('Line for your website', { exact: true }).waitFor();
      expect(await axeViolations(page)).toEqual([]);
    });

    it('is told beside the field what is missing (the API answers 422 naming it)', async () => {
      const form = page.getByRole('form', { name: 'Add a question and answer' });
      await form.getByLabel('Question', { exact: true }).fill(QUESTION);
      await form.getByRole('button', { name: 'Save' }).click();
      const answer = form.getByLabel('Answer', { exact: true });
      await form.getByText('Answer is required.').waitFor();
      await expect(answer.getAttribute('aria-invalid')).resolves.toBe('true');
      // Focus goes to the field that is wrong, and the message is part of its description.
      expect(await page.evaluate('document.activeElement.getAttribute("name")')).toBe('text');
      await expect(answer.getAttribute('aria-describedby')).resolves.toMatch(/err-/);
      expect(await axeViolations(page)).toEqual([]);
    });

    it('adds a Q&A pair from the keyboard; it is listed at once', async () => {
      const form = page.getByRole('form', { name: 'Add a question and answer' });
      const answer = form.getByLabel('Answer', { exact: true });
      await answer.fill(ANSWER);
      await form.getByLabel('Language').selectOption('en');
      await answer.focus();
      // Tab from the answer reaches the language, then Save, which Enter presses.
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Save');
      await page.keyboard.press('Enter');
      await page.getByText(`Saved the question "${QUESTION}". Customers get answers from it now.`).waitFor();
      const mine = page.getByRole('region', { name: 'Your pages and questions' });
      await mine.getByText(QUESTION, { exact: true }).waitFor();
      await mine.getByText(ANSWER).waitFor();
      await mine.getByText(/^Question and answer · English · changed /).waitFor();
      await expect(form.getByLabel('Answer', { exact: true }).getAttribute('aria-invalid')).resolves.toBeNull();
      const stored = (await service.api('GET', '/v1/knowledge/entries', { token: ws.agent })).body.entries;
      expect(stored).toEqual([expect.objectContaining({ type: 'qa', title: QUESTION, text: ANSWER, origin: 'dashboard', language: 'en' })]);
    });

    it('Try a question: the next question is answered from the pair, with and without the integrator', async () => {
      const tryBox = page.getByRole('region', { name: 'Try a question' });
      channelMessages.length = 0;
      await tryBox.getByLabel('Question').fill('How long does shipping to Belgium take?');
      await tryBox.getByRole('button', { name: 'Try' }).click();
      await tryBox.getByText('What the knowledge base found').waitFor();
      const passages = tryBox.getByRole('list');
      await expect(passages.getByRole('listitem').first().getByText(QUESTION, { exact: true }).count()).resolves.toBe(1);
      await expect(passages.getByRole('listitem').first().getByText(/^(Strong|Fair) match \(score [01]\.\d\d\) · written by your team · Question and answer$/).count()).resolves.toBe(1);
      // With the integrator (handled false here), the customer gets the built-in AI's answer from the pair.
      const withSystem = tryBox.locator('.answer').filter({ hasText: 'With your own system' });
      await expect(withSystem.locator('.reply').textContent()).resolves.toContain('three working days');
      await withSystem.getByText(/replied "I only know about orders\." in \d+ ms but said it does not handle this question/).waitFor();
      const without = tryBox.locator('.answer').filter({ hasText: 'Without your own system' });
      await expect(without.locator('.reply').textContent()).resolves.toContain('three working days');
      await without.getByText('Answered from the knowledge base').waitFor();
      expect(channelMessages).toEqual(['How long does shipping to Belgium take?']);
      // Nothing of it is a conversation.
      expect((await service.api('GET', '/v1/sessions', { token: ws.owner })).body.sessions).toEqual([]);
      await shot(page, 'knowledge-editor');
      expect(await axeViolations(page)).toEqual([]);
    });

    it('a handled answer of the integrator is what the customer gets', async () => {
      const tryBox = page.getByRole('region', { name: 'Try a question' });
      await tryBox.getByLabel('Question').fill('Where is my order 1234?');
      await tryBox.getByRole('button', { name: 'Try' }).click();
      const withSystem = tryBox.locator('.answer').filter({ hasText: 'With your own system' });
      await withSystem.getByText('Order 1234 ships tomorrow.').waitFor();
      await withSystem.getByText('Answered by your own system').waitFor();
    });

    it('a real website-chat message is answered from the pair', async () => {
      expect((await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: ['https://shop.example'] } })).status).toBe(200);
      const widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
      const chat = await service.api('POST', '/v1/webchat/conversations', {
        headers: { 'x-widget-key': widgetKey, origin: 'https://shop.example' },
        body: { visitor_message: 'How long does shipping to Belgium take?', page_url: 'https://shop.example/' },
      });
      expect(chat.status).toBe(201);
      expect(chat.body.reply).toContain('three working days');
    });

    it('changes the pair, and the next try gets the new answer; customer text is never markup', async () => {
      await page.getByRole('button', { name: `Edit ${QUESTION}` }).click();
      const form = page.getByRole('form', { name: `Change "${QUESTION}"` });
      const answer = form.getByLabel('Answer', { exact: true });
      await expect(answer.inputValue()).resolves.toBe(ANSWER);
      expect(await page.evaluate('document.activeElement.getAttribute("name")')).toBe('title');
      await answer.fill(`Parcels to Belgium now arrive within two working days. ${HOSTILE}`);
      await form.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText(`Saved the question "${QUESTION}".`, { exact: false }).waitFor();
      const tryBox = page.getByRole('region', { name: 'Try a question' });
      await tryBox.getByLabel('Question').fill('How long does shipping to Belgium take?');
      await tryBox.getByRole('button', { name: 'Try' }).click();
      await tryBox.locator('.answer').filter({ hasText: 'Without your own system' }).getByText(/two working days/).waitFor();
      await page.getByRole('region', { name: 'Your pages and questions' }).getByText(HOSTILE, { exact: false }).first().waitFor();
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
    });

    it('is usable 375 px wide: nothing scrolls sideways, still no accessibility violation', async () => {
      await page.setViewportSize({ width: 375, height: 800 });
      await page.getByRole('heading', { name: 'Knowledge', level: 1 }).waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      await shot(page, 'mobile-knowledge');
      expect(await axeViolations(page)).toEqual([]);
      await page.setViewportSize({ width: 1100, height: 900 });
    });

    it('deletes the pair while changing it: it is gone from the list, the form and the answers', async () => {
      await page.getByRole('button', { name: `Edit ${QUESTION}` }).click();
      await page.getByRole('form', { name: `Change "${QUESTION}"` }).waitFor();
      page.once('dialog', (d) => void d.accept());
      await page.getByRole('button', { name: `Delete ${QUESTION}` }).click();
      await page.getByText('Nothing written here yet.').waitFor();
      const form = page.getByRole('form', { name: 'Add a question and answer' });
      await expect(form.getByLabel('Answer', { exact: true }).inputValue()).resolves.toBe('');
      const tried = await service.api('POST', '/v1/knowledge/try', { token: ws.owner, body: { question: 'How long does shipping to Belgium take?', language: 'en' } });
      expect(tried.body.passages).toEqual([]);
      expect(tried.body.answer.source).toBe('fallback');
    });
  });

  describe('an agent', () => {
    it('reads the knowledge base but gets no editor, no Try box and no keys', async () => {
      const entry = await service.api('POST', '/v1/knowledge/entries', { token: ws.owner, body: { type: 'qa', title: 'Can I pay by invoice?', text: 'Yes, for business customers.', language: 'en' } });
      expect(entry.status).toBe(201);
      const before = requested.length;
      const { context, page } = await open(ws.agent);
      const nav = page.getByRole('navigation', { name: 'Dashboard' });
      expect(await nav.getByRole('link').allTextContents()).toEqual(['Overview', 'Inbox', 'Conversations', 'Team', 'Saved replies', 'Knowledge']);
      await page.getByText('Can I pay by invoice?', { exact: true }).waitFor();
      expect(await page.getByRole('button', { name: /^(Save|Try|Edit|Delete)/ }).count()).toBe(0);
      expect(await page.getByLabel('Line for your website', { exact: true }).count()).toBe(0);
      expect(requested.slice(before).map((u) => new URL(u).pathname).filter((p) => p.startsWith('/v1/keys') || p === '/v1/knowledge/try')).toEqual([]);
      expect(await axeViolations(page)).toEqual([]);
      await context.close();
    });
  });

  it('asked no other origin and broke no CSP rule', () => {
    expect(requested.filter((u) => new URL(u).origin !== service.url)).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
