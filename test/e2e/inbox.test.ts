/**
 * The team answers customers from the dashboard, in a real browser (Debian's Chromium, headless) against the real
 * service with a Graph API and an integrator on loopback HTTPS (docs/api-tour.md, "The team's side"): an agent sees
 * the waiting badge, takes a WhatsApp conversation over, replies and sees Meta's "delivered"; two people press Take
 * over at once and the one who lost is told who has it; a visitor on the widget's demo page sees a colleague's reply
 * without reloading, and again after coming back. Every inbox page and the open widget are checked with axe-core
 * (WCAG 2.1 A and AA: no serious or critical violation), and a fresh workspace's dashboard writes no error to the
 * browser's console. The inbox's screenshot goes to docs/screenshots/inbox.png (`npm run screenshots`).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, collectConsoleErrors, docScreenshot, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace } from '../helpers/service.ts';
import { fixture, unixSeconds } from '../channels/whatsapp/fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from '../channels/whatsapp/fixtures/harness.ts';

const DAMAGED = 'My parcel arrived damaged, the box was open';
/** What the language model writes when it is asked for a summary. */
const AI_SUMMARY = 'The parcel arrived damaged and the customer wants a replacement; nothing was promised yet.';

// The browser's globals, typed just enough for the functions this file runs in the page (the Node program has no DOM).
declare const document: { title: string };

describe('the team answers customers from the dashboard', () => {
  let database: TestDatabase;
  let h: Harness;
  let browser: Browser;
  let llm: TestHttpsServer;
  let widgetKey = '';
  /** Every error any page wrote to its console, and every answer of 400 or more, per page. */
  const problems = new Map<Page, string[]>();

  beforeAll(async () => {
    [database, browser, llm] = await Promise.all([openTestDatabase('pglite'), launchBrowser(), startHttpsServer()]);
    // An OpenAI-compatible model: it writes the summary for the team, and answers the website chat's questions.
    llm.handle((_req, res, body) => {
      const system = String((JSON.parse(body.toString('utf8')) as { messages: { content: string }[] }).messages[0]?.content ?? '');
      const content = system.includes('Summarise the conversation') ? AI_SUMMARY : 'We have tents for four people: the Trail 4.';
      sendJson(res, 200, { choices: [{ index: 0, message: { role: 'assistant', content } }] });
    });
    h = await startHarness(database, {
      answer: (r) => (r.message.includes('damaged') ? { reply: 'Sorry to hear that.', handoff: 'human' } : undefined),
      env: { LLM_BASE_URL: `${llm.origin}/v1`, LLM_MODEL: 'test-model' },
    });
    // The demo page is the service's own: its origin is allowed like a shop's (docs/webchat.md, "The demo page").
    expect((await h.service.api('PUT', '/v1/webchat', { token: h.workspace.owner, body: { allowed_origins: [h.service.url] } })).status).toBe(200);
    widgetKey = (await h.service.api('GET', '/v1/keys/widget', { token: h.workspace.owner })).body.key as string;
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await llm?.close();
    await database?.close();
  });

  async function open(viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
    const { context, page } = await openBrowserPage(browser, { viewport, timeoutMs: 10_000 });
    const seen: string[] = [];
    problems.set(page, seen);
    collectConsoleErrors(page, seen, 'console: ');
    page.on('response', (r) => {
      if (r.status() >= 400) seen.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
    });
    return { context, page };
  }

  const signIn = (page: Page, token: string) => signInWithToken(page, h.service.url, token);

  const inboxLink = (page: Page) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: /^Inbox/ });

  async function customerWrites(waId: string, text: string): Promise<void> {
    const res = await h.post(fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(new Date()), BODY: text }));
    expect(res.status).toBe(200);
  }

  async function waitingSession(channel: string, known: string[] = []): Promise<string> {
    return until(async () => {
      const waiting = await h.service.api('GET', '/v1/inbox?view=waiting', { token: h.workspace.agent });
      return (waiting.body.conversations as { id: string; channel: string }[]).find((c) => c.channel === channel && !known.includes(c.id))?.id;
    }, 15_000);
  }

  describe('a fresh workspace', () => {
    it("writes no error to the browser's console on any screen (nothing that is not set up is asked for)", async () => {
      const fresh = await seedWorkspace(h.service, 'Fresh');
      const { context, page } = await open();
      try {
        await signIn(page, fresh.owner);
        const names = await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link').allTextContents();
        expect(names.length).toBeGreaterThan(6);
        for (const name of names) {
          await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true }).click();
          await page.getByRole('heading', { level: 1 }).first().waitFor();
          // Whatever each screen reads when it opens (the live streams never go idle, so a settled network is no sign).
          await expect.poll(async () => `${name}: ${(await page.locator('.loading:visible').allTextContents()).join(' ')}`, { timeout: 8_000 }).toBe(`${name}: `);
          await page.waitForTimeout(300);
        }
        expect(problems.get(page)).toEqual([]);
      } finally {
        await context.close();
      }
    }, 60_000);
  });

  describe('an agent answers a WhatsApp customer', () => {
    const waId = '31620001111';
    let context: BrowserContext;
    let page: Page;
    let sessionId = '';

    beforeAll(async () => {
      ({ context, page } = await open());
      // The browser's notifications, recorded instead of shown (a headless browser shows none): permission is asked
      // for only when the button is pressed.
      await context.addInitScript(`(() => {
        const shown = [];
        class RecordedNotification {
          static permission = 'default';
          static asked = 0;
          static async requestPermission() { RecordedNotification.asked++; RecordedNotification.permission = 'granted'; return 'granted'; }
          constructor(title, options) { shown.push({ title, body: options && options.body }); }
          addEventListener() {}
        }
        window.Notification = RecordedNotification;
        window.shownNotifications = shown;
      })();`);
      await signIn(page, h.workspace.agent);
    });
    afterAll(async () => {
      await context.close();
    });

    it('sees the waiting badge in the menu and the tab title as soon as a customer waits', async () => {
      await expect(inboxLink(page).textContent()).resolves.toBe('Inbox');
      await customerWrites(waId, DAMAGED);
      sessionId = await waitingSession('whatsapp');
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Inbox (1 waiting)' }).waitFor();
      await expect.poll(() => page.evaluate(() => document.title)).toBe('(1) Conversations · Botlink');
    });

    it('finds the customer in Waiting, the wait ticking, with a preview of the last message', async () => {
      await inboxLink(page).click();
      await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
      const row = page.getByTestId('inbox-row').filter({ hasText: `+${waId}` });
      await row.waitFor();
      expect(await row.textContent()).toContain('WhatsApp');
      expect(await row.textContent()).toMatch(/Waiting \d+ s/);
      expect(await row.textContent()).toContain('Bot: Sorry to hear that.');
      const before = await row.locator('[data-waiting-since]').textContent();
      await expect.poll(() => row.locator('[data-waiting-since]').textContent(), { timeout: 5_000 }).not.toBe(before);
      expect(await page.getByRole('button', { name: 'Notify me when a customer waits' }).isVisible()).toBe(true);
      expect(await axeViolations(page)).toEqual([]);
    });

    it('opens it: the summary and the transcript say who wrote what, the bot with where its answer came from', async () => {
      await page.getByTestId('inbox-row').filter({ hasText: `+${waId}` }).click();
      await page.getByRole('heading', { name: 'Conversation', level: 1 }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/dashboard/inbox/${sessionId}`);
      await page.getByRole('region', { name: 'So far' }).getByText(`Customer: ${DAMAGED}`).waitFor();
      // The language model's summary (GET /v1/sessions/{id}/summary) beside the last turns.
      await page.getByTestId('ai-summary').filter({ hasText: `Summary by the AI: ${AI_SUMMARY}` }).waitFor();
      await page.getByRole('list', { name: 'Messages' }).getByText(DAMAGED).waitFor();
      expect(await page.getByTestId('holder').textContent()).toBe('Waiting for a person');
      expect(await page.getByRole('list', { name: 'Messages' }).textContent()).toContain('Bot, answer from your system');
      expect(await axeViolations(page)).toEqual([]);
    });

    it('takes it over and replies; Shift+Enter is a new line, Enter sends; the Graph API gets exactly that text', async () => {
      await page.getByRole('button', { name: 'Take over' }).click();
      const box = page.getByLabel('Your reply');
      await box.waitFor();
      expect(await page.getByTestId('holder').textContent()).toBe('With Agent');
      await box.fill('Hello, this is Agent from the shop.');
      await box.press('Shift+Enter');
      await box.pressSequentially('We send you a new one today.');
      expect(await box.inputValue()).toBe('Hello, this is Agent from the shop.\nWe send you a new one today.');
      const before = h.sends().length;
      await box.press('Enter');
      await until(() => h.sends().length > before);
      expect(h.sends().slice(before).map((s) => (s.body.text as { body: string }).body)).toEqual(['Hello, this is Agent from the shop.\nWe send you a new one today.']);
      expect(await box.inputValue()).toBe('');
      await page.getByTestId('delivery').filter({ hasText: 'Sent' }).waitFor();
    });

    it("shows Meta's delivered beside the message, live", async () => {
      const outbound = await database.db
        .selectFrom('session_messages as m')
        .innerJoin('whatsapp_outbound_messages as o', 'o.id', 'm.outbound_id')
        .select('o.message_id')
        .where('m.session_id', '=', sessionId)
        .where('m.from', '=', 'agent')
        .executeTakeFirstOrThrow();
      const res = await h.post(fixture('status', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: outbound.message_id!, STATUS: 'delivered', TIMESTAMP: unixSeconds() }));
      expect(res.status).toBe(200);
      await page.getByTestId('delivery').filter({ hasText: 'Delivered' }).waitFor();
      // The customer writes again: shown live, and neither the integrator nor the AI answers it.
      const asked = h.channelRequests().length;
      await customerWrites(waId, 'Thank you, which colour will it be?');
      await page.getByRole('list', { name: 'Messages' }).getByText('Thank you, which colour will it be?').waitFor();
      expect(h.channelRequests().length).toBe(asked);
      expect(await axeViolations(page)).toEqual([]);
      await docScreenshot(page, 'inbox.png', { fullPage: true });
      // The badge went down: nobody waits any more.
      await page.getByRole('link', { name: 'Inbox', exact: true }).waitFor();
    });

    it('is usable 375 px wide', async () => {
      await page.setViewportSize({ width: 375, height: 800 });
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      expect(await axeViolations(page)).toEqual([]);
      await page.setViewportSize({ width: 1100, height: 900 });
    });

    it('hands it back to the bot, which answers again', async () => {
      await page.getByRole('button', { name: 'Hand back to the bot' }).click();
      await expect.poll(() => page.getByTestId('holder').textContent()).toBe('The bot answers');
      const asked = h.channelRequests().length;
      await customerWrites(waId, 'And when does it arrive?');
      await until(() => h.channelRequests().length > asked);
      expect(problems.get(page)).toEqual([]);
    });

    it('notifies, once allowed with the button (never asked on load), when the next customer starts waiting', async () => {
      expect(await page.evaluate('Notification.asked')).toBe(0);
      await inboxLink(page).click();
      await page.getByRole('button', { name: 'Notify me when a customer waits' }).click();
      await page.getByText('Done: this browser notifies you when a customer starts waiting.').waitFor();
      expect(await page.evaluate('Notification.asked')).toBe(1);
      await customerWrites('31620003333', DAMAGED);
      await expect.poll(() => page.evaluate('window.shownNotifications'), { timeout: 10_000 }).toEqual([{ title: 'A customer is waiting', body: `“${DAMAGED}”` }]);
      await page.getByTestId('inbox-row').filter({ hasText: '+31620003333' }).waitFor();
    });
  });

  describe('two people press Take over at once', () => {
    it('one gets it, the other is told who has it', async () => {
      await customerWrites('31620002222', `${DAMAGED} as well`);
      const sessionId = await waitingSession('whatsapp');
      const one = await open();
      const two = await open();
      try {
        await signIn(one.page, h.workspace.agent);
        await signIn(two.page, h.workspace.admin);
        for (const { page } of [one, two]) {
          // The live streams are held back (never answered), so that neither page learns of the other's press before
          // its own: both press a Take over that is still there.
          await page.route('**/events', () => undefined);
          await page.goto(`${h.service.url}/dashboard/inbox/${sessionId}`);
          await page.getByRole('button', { name: 'Take over' }).waitFor();
        }
        const press = (page: Page) => page.getByRole('button', { name: 'Take over' }).evaluate((b: { click(): void }) => b.click());
        await Promise.all([press(one.page), press(two.page)]);
        const holder = await until(async () => (await h.service.api('GET', `/v1/sessions/${sessionId}`, { token: h.workspace.owner })).body.agent?.email as string | undefined);
        const [winner, loser, loserSees] = holder === 'agent@acme.example' ? [one, two, 'Agent'] : [two, one, 'Admin'];
        await winner.page.getByLabel('Your reply').waitFor();
        await loser.page.getByRole('alert').filter({ hasText: `${loserSees} took this conversation over first.` }).waitFor();
        await loser.page.getByTestId('held-by').filter({ hasText: `${loserSees} holds this conversation` }).waitFor();
        expect(await loser.page.getByLabel('Your reply').count()).toBe(0);
        // The one who lost got a 409, which is the answer the page explains, not an error of the page.
        expect(problems.get(loser.page)?.filter((p) => !p.startsWith('409 POST') && !p.includes('status of 409'))).toEqual([]);
      } finally {
        await one.context.close();
        await two.context.close();
      }
    });
  });

  describe('a visitor on the website chat', () => {
    it("sees a colleague's reply without reloading, with the colleague's name, and finds it again after coming back", async () => {
      const visitor = await open({ width: 1280, height: 800 });
      try {
        const page = visitor.page;
        await page.goto(`${h.service.url}/widget/demo?key=${widgetKey}`);
        await page.getByRole('button', { name: 'Chat with us' }).click();
        await page.getByLabel('Your message').fill('Do you sell tents for four people?');
        await page.keyboard.press('Enter');
        await page.locator('.msg.bot').nth(1).waitFor();
        await page.getByRole('button', { name: 'Talk to the team' }).click();
        await page.locator('.msg.bot', { hasText: 'reply to you here' }).waitFor();
        const botMessages = await page.locator('.msg.bot').count();

        const sessionId = await waitingSession('webchat');
        expect((await h.service.api('POST', `/v1/sessions/${sessionId}/takeover`, { token: h.workspace.agent })).status).toBe(200);
        const sent = await h.service.api('POST', `/v1/sessions/${sessionId}/messages`, { token: h.workspace.agent, body: { text: 'Yes: the Trail 4 is in stock.' } });
        expect(sent.status).toBe(201);
        const reply = page.locator('.msg.agent', { hasText: 'Yes: the Trail 4 is in stock.' });
        await reply.waitFor({ timeout: 15_000 });
        expect(await reply.textContent()).toBe('Agent, from the team: Yes: the Trail 4 is in stock.');
        // Nothing shown twice: the bot's replies came from their answers; the poll added the line that a colleague
        // joined (one bot line) and the colleague's message.
        await expect.poll(() => page.locator('.msg.bot').count()).toBe(botMessages + 1);
        expect(await page.locator('.msg.visitor').count()).toBe(1);
        expect(await axeViolations(page)).toEqual([]);

        // The visitor comes back later (a reload in the same browser) and the colleague writes again meanwhile.
        await page.close();
        await h.service.api('POST', `/v1/sessions/${sessionId}/messages`, { token: h.workspace.agent, body: { text: 'It comes in green and in grey.' } });
        const back = await visitor.context.newPage();
        const backProblems: string[] = [];
        problems.set(back, backProblems);
        collectConsoleErrors(back, backProblems, 'console: ');
        await back.goto(`${h.service.url}/widget/demo?key=${widgetKey}`);
        // The panel was open when the visitor left, so it opens again by itself.
        await back.getByRole('dialog', { name: 'Chat with us' }).waitFor();
        await back.locator('.msg.agent', { hasText: 'Yes: the Trail 4 is in stock.' }).waitFor();
        await back.locator('.msg.agent', { hasText: 'It comes in green and in grey.' }).waitFor({ timeout: 15_000 });
        expect(await back.locator('.msg.agent').count()).toBe(2);
        // The bot's replies and the line that a colleague joined, each once.
        expect(await back.locator('.msg.bot').count()).toBe(botMessages + 1);
        expect(problems.get(back)).toEqual([]);

        // The dashboard_url of new_chat (/dashboard/conversations/{id}) opens it, with the way to answer it.
        const agent = await open();
        try {
          await signIn(agent.page, h.workspace.agent);
          await agent.page.goto(`${h.service.url}/dashboard/conversations/${sessionId}`);
          await agent.page.getByRole('link', { name: 'Open in the Inbox' }).click();
          await agent.page.getByRole('list', { name: 'Messages' }).getByText('It comes in green and in grey.').waitFor();
          expect(await agent.page.getByTestId('holder').textContent()).toBe('With Agent');
        } finally {
          await agent.context.close();
        }
      } finally {
        await visitor.context.close();
      }
    }, 60_000);
  });
});
