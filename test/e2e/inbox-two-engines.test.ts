/**
 * A small team's day in the inbox, in a real browser (Debian's Chromium, headless), with two engines on one PostgreSQL
 * behind one address (test/helpers/load-balancer.ts: round robin, no stickiness, so every page's requests, live
 * streams and the widget's long polls are spread over both engines; docs/operations.md, "Several processes on one
 * PostgreSQL"). Two agents sign in through the dashboard and two visitors chat on the widget's demo page, each in a
 * browser context of their own, and everything after the setup happens through the pages (docs/architecture.md,
 * "Presence and assignment" and "The team's tools"; docs/webchat.md, "Typing, satisfaction and email"):
 * - one agent is available, the other away: a visitor who asks for a person is told a colleague will reply;
 * - the oldest waiting conversation is the available agent's; with one conversation each at most
 *   (ASSIGN_MAX_PER_AGENT=1), the second waits until the other agent becomes available, and is then theirs;
 * - the agent adds a saved reply, inserts it with its `/` shortcut, inserts a passage of the knowledge base, sends both:
 *   the widget shows them;
 * - a private note @mentions the colleague, whose dashboard and notifications show it; the widget never does;
 * - typing shows on both sides;
 * - Close asks first; the widget asks the satisfaction question; the answer is on the conversation in the dashboard.
 * Every inbox screen visited is checked with axe-core (WCAG 2.1 A and AA: no serious or critical violation), and no
 * page gets an answer of 400 or more.
 *
 * Needs the real PostgreSQL (TEST_DATABASE_URL, which CI sets): two engines share one database of their own, made and
 * dropped here. PGlite is one process's database, so it has no second engine.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phrase } from '../../src/ai/phrases.ts';
import { axeViolations, collectConsoleErrors, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { createOwnDatabase, type OwnDatabase } from '../helpers/db.ts';
import { startLoadBalancer, type LoadBalancer } from '../helpers/load-balancer.ts';
import { addUserWithToken, seedWorkspace, startTestServiceOn, type TestService } from '../helpers/service.ts';

const admin = process.env.TEST_DATABASE_URL;

const WARRANTY = 'Every bike we sell has a two-year warranty on the frame and one year on the parts.';
const FIRST_WORDS = 'Is my bike still under warranty?';
const SECOND_WORDS = 'Can I speak to a person please?';
const SAVED_REPLY = 'Hi {{customer.name}}, this is {{agent.name}}. Happy to help.';
/** The saved reply as inserted: the visitor left no name, the agent is "Agent" (agent@acme.example). */
const SAVED_REPLY_FILLED = 'Hi, this is Agent. Happy to help.';
const NOTE = '@kim the frame was bought in 2023: internal only, do not tell the customer yet';
/** Each step's wait: two engines and four browser contexts share two cores. */
const STEP_MS = 20_000;

for (const url of admin ? [admin] : []) {
  describe('two agents and two visitors, two engines behind one address', () => {
    let database: OwnDatabase;
    let balancer: LoadBalancer;
    const engines: TestService[] = [];
    let browser: Browser;
    let ws: Awaited<ReturnType<typeof seedWorkspace>>;
    let kim: Awaited<ReturnType<typeof addUserWithToken>>;
    let widgetKey = '';
    const contexts: BrowserContext[] = [];
    /** Every console error and every answer of 400 or more, per page. */
    const problems = new Map<Page, string[]>();

    /** The two agents' dashboards and the two visitors' shop pages. */
    let agent: Page;
    let colleague: Page;
    let visitor: Page;
    let secondVisitor: Page;
    let firstSessionId = '';

    beforeAll(async () => {
      [database, balancer, browser] = await Promise.all([createOwnDatabase(url, 'inbox2'), startLoadBalancer(), launchBrowser()]);
      const env = {
        DATABASE_URL: database.url,
        MASTER_KEY: randomBytes(32).toString('hex'),
        // The one address customers and the team use; the balancer's X-Forwarded-For names the browser.
        PUBLIC_URL: balancer.url,
        TRUST_PROXY: 'loopback',
        ASSIGN_MAX_PER_AGENT: '1',
      };
      // One after the other: the first migrates the database.
      engines.push(await startTestServiceOn(env));
      engines.push(await startTestServiceOn(env));
      balancer.setUpstreams(engines.map((e) => e.url));

      const [a, b] = engines as [TestService, TestService];
      ws = await seedWorkspace(a);
      kim = await addUserWithToken(a, ws.owner, 'kim@acme.example', 'agent');
      // The demo page is served from the balancer's address: that origin is the shop's (docs/webchat.md, "The demo page").
      expect((await b.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [balancer.url] } })).status).toBe(200);
      widgetKey = (await a.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
      const syncKey = (await b.api('POST', '/v1/keys/sync', { token: ws.owner })).body.key as string;
      const page = { title: 'Warranty', language: 'en', body: WARRANTY };
      expect((await a.api('PUT', '/v1/sync/pages/warranty', { headers: { 'x-sync-key': syncKey }, body: page })).status).toBe(201);

      agent = await open();
      colleague = await open();
      visitor = await open();
      secondVisitor = await open();
    }, 120_000);

    afterAll(async () => {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser?.close();
      await balancer?.close();
      for (const e of engines) await e.stop();
      await database?.drop();
    }, 60_000);

    async function open(): Promise<Page> {
      const { context, page } = await openBrowserPage(browser, { viewport: { width: 1280, height: 900 }, timeoutMs: STEP_MS });
      contexts.push(context);
      const seen: string[] = [];
      problems.set(page, seen);
      collectConsoleErrors(page, seen, 'console: ');
      page.on('response', (r) => {
        if (r.status() >= 400) seen.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
      });
      return page;
    }

    async function setStatus(page: Page, status: 'available' | 'away', words: string): Promise<void> {
      const select = page.getByLabel('Your status');
      await expect.poll(() => select.isEnabled(), { timeout: STEP_MS }).toBe(true);
      await select.selectOption(status);
      await page.getByText(`Your status is ${words}.`).waitFor({ state: 'attached' });
    }

    async function openInbox(page: Page): Promise<void> {
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: /^Inbox/ }).click();
      await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    }

    /** The visitor opens the chat on the demo shop and writes. */
    async function startChat(page: Page, words: string): Promise<void> {
      await page.goto(`${balancer.url}/widget/demo?key=${widgetKey}`);
      await page.getByRole('button', { name: 'Chat with us' }).click();
      await page.getByLabel('Your message').fill(words);
      await page.keyboard.press('Enter');
    }

    const row = (page: Page, words: string) => page.getByTestId('inbox-row').filter({ hasText: words });
    const widgetLine = (page: Page, cls: 'bot' | 'agent', text: string) => page.locator(`.msg.${cls}`, { hasText: text });

    it('with one agent available and the other away, a visitor who asks for a person is told a colleague will reply', async () => {
      await signInWithToken(agent, balancer.url, ws.agent);
      await setStatus(agent, 'available', 'Available');
      await signInWithToken(colleague, balancer.url, kim.token);
      await setStatus(colleague, 'away', 'Away');
      expect(await axeViolations(agent)).toEqual([]);

      await startChat(visitor, FIRST_WORDS);
      // The bot answers from the knowledge base first.
      await visitor.locator('.msg.bot').nth(1).waitFor();
      await visitor.getByRole('button', { name: 'Talk to the team' }).click();
      await widgetLine(visitor, 'bot', phrase('handoff_waiting', 'en')).waitFor();
      expect(await visitor.getByText(phrase('handoff_waiting_closed', 'en')).count()).toBe(0);
      expect(await axeViolations(visitor)).toEqual([]);
    }, 120_000);

    it('the oldest waiting conversation is the available agent\'s; the second is the colleague\'s once they are available', async () => {
      await openInbox(agent);
      await row(agent, FIRST_WORDS).getByTestId('assigned-to').filter({ hasText: 'Assigned to Agent' }).waitFor();

      // The second visitor asks in words; someone is available, so they too are told a colleague will reply. The agent
      // has one conversation already (the most each takes here), so this one waits for nobody in particular.
      await startChat(secondVisitor, SECOND_WORDS);
      await widgetLine(secondVisitor, 'bot', phrase('handoff_waiting', 'en')).waitFor();
      await row(agent, SECOND_WORDS).waitFor();
      expect(await row(agent, SECOND_WORDS).getByTestId('assigned-to').count()).toBe(0);

      await setStatus(colleague, 'available', 'Available');
      await openInbox(colleague);
      await row(colleague, SECOND_WORDS).getByTestId('assigned-to').filter({ hasText: 'Assigned to Kim' }).waitFor();
      expect(await row(colleague, FIRST_WORDS).getByTestId('assigned-to').textContent()).toBe('Assigned to Agent');
      // The agent's list redraws from the live events of whichever engine assigned it.
      await row(agent, SECOND_WORDS).getByTestId('assigned-to').filter({ hasText: 'Assigned to Kim' }).waitFor();
      expect(await axeViolations(agent)).toEqual([]);
      expect(await axeViolations(colleague)).toEqual([]);
    }, 120_000);

    it('the agent adds a saved reply, inserts it with its / shortcut and a passage of the knowledge base, and sends both: the widget shows them', async () => {
      await agent.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Saved replies' }).click();
      await agent.getByRole('heading', { name: 'Saved replies', level: 1 }).waitFor();
      await agent.getByLabel('Shortcut').fill('hello');
      await agent.getByLabel('Reply', { exact: true }).fill(SAVED_REPLY);
      await agent.getByRole('button', { name: 'Add', exact: true }).click();
      await agent.getByText('/hello').waitFor();
      expect(await axeViolations(agent)).toEqual([]);

      await openInbox(agent);
      await row(agent, FIRST_WORDS).click();
      await agent.getByRole('heading', { name: 'Conversation', level: 1 }).waitFor();
      firstSessionId = new URL(agent.url()).pathname.split('/').at(-1)!;
      await agent.getByRole('button', { name: 'Take over' }).click();
      const box = agent.getByLabel('Your reply');
      await box.waitFor();
      await widgetLine(visitor, 'bot', phrase('agent_joined', 'en').replace('{name}', 'Agent')).waitFor();

      await box.click();
      await agent.keyboard.type('/hel');
      const list = agent.getByRole('listbox', { name: 'Saved replies' });
      await list.waitFor();
      await expect.poll(() => list.getByRole('option').allTextContents()).toEqual([expect.stringContaining('/hello')]);
      await agent.keyboard.press('Enter');
      await expect.poll(() => box.inputValue()).toBe(SAVED_REPLY_FILLED);
      await agent.keyboard.press('Enter');
      await widgetLine(visitor, 'agent', SAVED_REPLY_FILLED).waitFor();

      await agent.getByRole('button', { name: 'Insert from knowledge' }).click();
      const search = agent.getByLabel('Search the knowledge base');
      await search.fill('warranty');
      await search.press('Enter');
      const insert = agent.getByRole('button', { name: 'Insert: Warranty' });
      await insert.waitFor();
      expect(await axeViolations(agent)).toEqual([]);
      await insert.click();
      await expect.poll(() => box.inputValue()).toBe(WARRANTY);
      await agent.getByRole('button', { name: 'Send', exact: true }).click();
      const passage = widgetLine(visitor, 'agent', 'two-year warranty');
      await passage.waitFor();
      expect(await passage.textContent()).toBe(`Agent, from the team: ${WARRANTY}`);
      expect(await widgetLine(visitor, 'agent', SAVED_REPLY_FILLED).textContent()).toBe(`Agent, from the team: ${SAVED_REPLY_FILLED}`);
    }, 120_000);

    it('a private note that @mentions the colleague reaches their dashboard and notifications, and never the widget', async () => {
      await agent.getByRole('button', { name: 'Note', exact: true }).click();
      await agent.getByLabel('Your note (only the team sees this)').fill(NOTE);
      await agent.getByRole('button', { name: 'Add note' }).click();
      await agent.getByRole('list', { name: 'Messages' }).locator('.from-note', { hasText: 'internal only' }).waitFor();
      expect(await axeViolations(agent)).toEqual([]);

      // The colleague, on the Inbox: the notice comes at once, from whichever engine holds their stream.
      const mention = colleague.getByTestId('mention');
      await mention.waitFor();
      expect(await mention.textContent()).toContain('Agent mentioned you in a note');
      expect(await mention.textContent()).toContain('internal only');
      expect(await axeViolations(colleague)).toEqual([]);
      // And in their notifications, on the Team screen.
      await colleague.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Team', exact: true }).click();
      const notifications = colleague.getByRole('region', { name: 'Notifications' });
      await notifications.getByRole('listitem').filter({ hasText: 'Agent mentioned you in a note' }).waitFor();
      expect(await notifications.getByRole('listitem').filter({ hasText: 'internal only' }).count()).toBe(1);
      expect(await axeViolations(colleague)).toEqual([]);

      // The agent writes to the customer after the note: once the widget shows that, it has read past the note.
      const box = agent.getByLabel('Your reply');
      await box.fill('Let me look up your order.');
      await box.press('Enter');
      await widgetLine(visitor, 'agent', 'Let me look up your order.').waitFor();
      expect(await visitor.locator('body').textContent()).not.toContain('internal only');
      expect(await visitor.locator('.msg.agent').count()).toBe(3);
    }, 120_000);

    it('typing shows on both sides', async () => {
      const box = agent.getByLabel('Your reply');
      await box.pressSequentially('Your frame is cov', { delay: 40 });
      await visitor.getByText('Agent is typing…').waitFor();
      await visitor.getByLabel('Your message').pressSequentially('It is the blue one', { delay: 40 });
      await agent.getByTestId('visitor-typing').filter({ hasText: 'Visitor is typing…' }).waitFor();
      await box.pressSequentially('ered until 2025.');
      await box.press('Enter');
      await widgetLine(visitor, 'agent', 'Your frame is covered until 2025.').waitFor();
      // The agent's message ends their typing sign.
      await expect.poll(() => visitor.locator('.typing').textContent(), { timeout: STEP_MS }).toBe('');
    }, 120_000);

    it('the agent closes after confirming; the visitor answers the satisfaction question; the score is on the conversation', async () => {
      await agent.getByRole('button', { name: 'Close', exact: true }).click();
      const dialog = agent.getByRole('dialog', { name: 'Close this conversation?' });
      await dialog.waitFor();
      expect(await axeViolations(agent)).toEqual([]);
      await dialog.getByRole('button', { name: 'Close conversation' }).click();
      await dialog.waitFor({ state: 'detached' });

      await widgetLine(visitor, 'bot', phrase('agent_closed', 'en').replace('{name}', 'Agent')).waitFor();
      const survey = visitor.getByRole('form', { name: 'Rate this conversation' });
      await survey.waitFor();
      expect(await axeViolations(visitor)).toEqual([]);
      await survey.getByRole('radio', { name: '5: Very good' }).check();
      await survey.getByLabel('Anything to add? (optional)').fill('Quick and clear');
      await survey.getByRole('button', { name: 'Send rating' }).click();
      await visitor.locator('.msg.notice', { hasText: 'Thank you for your feedback!' }).waitFor();

      // The agent opens the conversation again: the answer is on it.
      await agent.goto(`${balancer.url}/dashboard/inbox/${firstSessionId}`);
      const score = agent.getByTestId('satisfaction');
      await score.waitFor();
      expect(await score.textContent()).toBe('5 of 5 (very good): “Quick and clear”');
      expect(await axeViolations(agent)).toEqual([]);

      for (const [name, page] of Object.entries({ agent, colleague, visitor, secondVisitor })) expect(problems.get(page), name).toEqual([]);
      // The pages' requests were spread over both engines.
      expect(new Set(balancer.forwarded.map((f) => f.upstream))).toEqual(new Set([0, 1]));
    }, 120_000);
  });
}
