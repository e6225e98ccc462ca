/**
 * The team teaches the bot in Chromium (docs/knowledge.md, "The team teaches the bot"): from the Overview's questions
 * the bot could not answer, an owner adds an answer (and the next website-chat visitor who asks gets it) and says which
 * page answers another question; in a held conversation an owner adds the agent's reply as the answer, prefilled.
 * Customers' words are shown as text, never markup; axe-core finds no serious or critical violation, wide and 375 px
 * wide; the page keeps its CSP and asks no other origin.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phrase } from '../../src/ai/phrases.ts';
import { axeViolations, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';
const GIFT_CARDS = '<img src=x onerror="window.__pwned=1"> Do you sell gift cards?';
const GIFT_ANSWER = 'Yes: gift cards of 25, 50 and 100 euro, in the shop and on the website.';
const BORROW = 'Can I borrow a bicycle with a motor?';
const PARKING = 'Is there parking near the shop?';
const PARKING_REPLY = 'Yes, free parking behind the shop for an hour.';

describe('the team teaches the bot, in Chromium', () => {
  let database: TestDatabase;
  let service: TestService;
  let browser: Browser;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';
  let pageId = '';
  const requested: string[] = [];
  const cspViolations: string[] = [];

  async function visitorAsks(text: string): Promise<{ reply: string | null; sessionId: string }> {
    const res = await service.api('POST', '/v1/webchat/conversations', { headers: { 'x-widget-key': widgetKey, origin: SHOP }, body: { visitor_message: text, page_url: `${SHOP}/` } });
    expect(res.status, res.text).toBe(201);
    await service.runtime.settled();
    const session = await database.db.selectFrom('sessions').select('id').where('external_id', '=', res.body.conversation_id as string).executeTakeFirstOrThrow();
    return { reply: res.body.reply as string | null, sessionId: session.id };
  }

  beforeAll(async () => {
    [database, browser] = await Promise.all([openTestDatabase('pglite'), launchBrowser()]);
    service = await startTestService(database);
    ws = await seedWorkspace(service);
    expect((await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } })).status).toBe(200);
    widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
    expect((await visitorAsks(GIFT_CARDS)).reply).toBe(phrase('dont_know', 'en'));
    expect((await visitorAsks(BORROW)).reply).toBe(phrase('dont_know', 'en'));
    const page = await service.api('POST', '/v1/knowledge/entries', { token: ws.owner, body: { type: 'page', title: 'Bike rental', text: 'You can rent an e-bike for 29 euro per day, helmet included.', language: 'en' } });
    pageId = page.body.id as string;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await database?.close();
  });

  async function open(token: string, viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
    const { context, page } = await openBrowserPage(browser, { viewport, timeoutMs: 10_000, requested, cspViolations });
    await signInWithToken(page, service.url, token);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Overview', exact: true }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    return { context, page };
  }
  const questionItem = (page: Page, text: string) =>
    page.getByRole('region', { name: 'Questions the bot could not answer' }).getByRole('listitem').filter({ hasText: text }).first();

  describe('an owner on the Overview', () => {
    let context: BrowserContext;
    let page: Page;
    beforeAll(async () => {
      ({ context, page } = await open(ws.owner));
    });
    afterAll(async () => {
      await context?.close();
    });

    it('adds an answer from the keyboard; the next visitor who asks gets it', async () => {
      const item = questionItem(page, 'Do you sell gift cards?');
      await item.waitFor();
      await item.getByText(GIFT_CARDS, { exact: true }).waitFor();
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      const add = item.getByRole('button', { name: /^Add as an answer/ });
      await add.focus();
      await page.keyboard.press('Enter');
      expect(await add.getAttribute('aria-expanded')).toBe('true');
      const form = item.getByRole('form', { name: 'Add as an answer' });
      await form.getByText(GIFT_CARDS, { exact: true }).waitFor();
      // The answer's field has the focus.
      await page.keyboard.type(GIFT_ANSWER);
      expect(await form.getByLabel('Answer').inputValue()).toBe(GIFT_ANSWER);
      expect(await axeViolations(page)).toEqual([]);
      await form.getByRole('button', { name: 'Save' }).click();
      await form.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
      expect(await page.evaluate('window.__pwned')).toBeUndefined();

      const next = await visitorAsks(GIFT_CARDS);
      expect(next.reply).toContain('25, 50 and 100 euro');
    });

    it('says which page answers another question: the page is chosen from the search, and can be taken back', async () => {
      const item = questionItem(page, BORROW);
      await item.getByRole('button', { name: /^This page answers it/ }).click();
      const form = item.getByRole('form', { name: 'This page answers it' });
      const choice = form.getByRole('radio', { name: 'Bike rental' });
      await choice.waitFor();
      expect(await choice.isChecked()).toBe(true);
      await form.getByText('29 euro per day').waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await form.getByRole('button', { name: 'This page answers it' }).click();
      await form.getByRole('status').filter({ hasText: '“Bike rental” now answers this question' }).waitFor();
      const listed = await service.api('GET', `/v1/knowledge/entries/${pageId}/phrasings`, { token: ws.owner });
      expect(listed.body.phrasings).toEqual([expect.objectContaining({ text: BORROW, origin: 'team', passage: 0 })]);
      const tried = await service.api('POST', '/v1/knowledge/try', { token: ws.owner, body: { question: BORROW, language: 'en' } });
      expect(tried.body.passages[0].entry_id).toBe(pageId);

      await form.getByRole('button', { name: 'Take it back' }).click();
      await form.getByRole('status').filter({ hasText: 'Taken back' }).waitFor();
      expect((await service.api('GET', `/v1/knowledge/entries/${pageId}/phrasings`, { token: ws.owner })).body.phrasings).toEqual([]);
    });
  });

  it('on a phone-sized screen the forms fit and stay accessible', async () => {
    const { context, page } = await open(ws.owner, { width: 375, height: 800 });
    try {
      const item = questionItem(page, BORROW);
      await item.getByRole('button', { name: /^Add as an answer/ }).click();
      await item.getByRole('form', { name: 'Add as an answer' }).waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      expect(await axeViolations(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('an agent sees the questions without the buttons', async () => {
    const { context, page } = await open(ws.agent);
    try {
      await questionItem(page, BORROW).waitFor();
      expect(await page.getByRole('button', { name: /^Add as an answer/ }).count()).toBe(0);
      expect(await page.getByRole('button', { name: /^This page answers it/ }).count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it("in a held conversation, the agent's reply is added as the answer, prefilled with the customer's question", async () => {
    const chat = await visitorAsks(PARKING);
    expect((await service.api('POST', `/v1/sessions/${chat.sessionId}/takeover`, { token: ws.owner })).status).toBe(200);
    expect((await service.api('POST', `/v1/sessions/${chat.sessionId}/messages`, { token: ws.owner, body: { text: PARKING_REPLY } })).status).toBe(201);
    const { context, page } = await open(ws.owner);
    try {
      await page.goto(`${service.url}/dashboard/inbox/${chat.sessionId}`);
      const reply = page.locator('li.msg.from-agent').filter({ hasText: PARKING_REPLY });
      await reply.getByRole('button', { name: 'Add as an answer: this reply, to the customer’s question before it' }).click();
      const form = page.getByRole('form', { name: 'Add as an answer' });
      await form.getByText(PARKING, { exact: true }).waitFor();
      expect(await form.getByLabel('Answer').inputValue()).toBe(PARKING_REPLY);
      expect(await axeViolations(page)).toEqual([]);
      await form.getByRole('button', { name: 'Save' }).click();
      await form.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
      expect((await visitorAsks(PARKING)).reply).toContain('free parking behind the shop');
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
