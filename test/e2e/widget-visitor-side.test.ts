/**
 * The visitor's side in a real browser (Debian's Chromium, headless) against the real service (docs/webchat.md,
 * "Typing, satisfaction and email"): a visitor who asks for a person in words is offered the details form; the agent
 * takes over and the visitor is told; the agent types and the widget shows "… is typing"; the visitor types and the
 * agent sees "Visitor is typing…"; Close asks first in a dialog, then the widget shows the closing line and the
 * question, and the answer appears on the conversation. axe-core (WCAG 2.1 A and AA) on the widget's demo page and
 * the conversation screen, the dialog open too.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phrase } from '../../src/ai/phrases.ts';
import { axeViolations, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

describe("the visitor's side, in Chromium", () => {
  let database: TestDatabase;
  let service: TestService;
  let browser: Browser;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';
  const contexts: BrowserContext[] = [];
  /** Every answer of 400 or more the pages got. */
  const problems: string[] = [];

  beforeAll(async () => {
    [database, browser] = await Promise.all([openTestDatabase('pglite'), launchBrowser()]);
    service = await startTestService(database);
    ws = await seedWorkspace(service);
    // The demo page is the service's own: its origin is allowed like a shop's (docs/webchat.md, "The demo page").
    expect((await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [service.url] } })).status).toBe(200);
    widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await service?.stop();
    await database?.close();
  });

  async function open(): Promise<Page> {
    const { context, page } = await openBrowserPage(browser, { viewport: { width: 1280, height: 800 }, timeoutMs: 15_000 });
    contexts.push(context);
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
    });
    return page;
  }

  it('typing both ways, Close with a dialog, the closing line and the survey, the score on the conversation', async () => {
    const visitor = await open();
    await visitor.goto(`${service.url}/widget/demo?key=${widgetKey}`);
    await visitor.getByRole('button', { name: 'Chat with us' }).click();
    await visitor.getByLabel('Your message').fill('I want to talk to a person please');
    await visitor.keyboard.press('Enter');
    // Asked in words: the details form is offered, as the button does.
    await visitor.getByRole('form', { name: 'Your contact details' }).waitFor({ timeout: 15_000 });
    expect(await visitor.getByLabel('Email').isVisible()).toBe(true);

    const sessionId = await expect
      .poll(async () => ((await service.api('GET', '/v1/inbox?view=waiting', { token: ws.agent })).body.conversations as { id: string }[])[0]?.id, { timeout: 10_000 })
      .toBeTruthy()
      .then(async () => ((await service.api('GET', '/v1/inbox?view=waiting', { token: ws.agent })).body.conversations as { id: string }[])[0]!.id);

    const agent = await open();
    await signInWithToken(agent, service.url, ws.agent);
    await agent.goto(`${service.url}/dashboard/inbox/${sessionId}`);
    await agent.getByRole('button', { name: 'Take over' }).click();
    const reply = agent.getByLabel('Your reply');
    await reply.waitFor();
    await visitor.locator('.msg.bot', { hasText: phrase('agent_joined', 'en').replace('{name}', 'Agent') }).waitFor({ timeout: 15_000 });

    // The agent types: the widget says so.
    await reply.pressSequentially('Let me check', { delay: 30 });
    await visitor.getByText(/is typing…$/).waitFor({ timeout: 10_000 });
    // The visitor types: the agent sees it.
    await visitor.getByLabel('Your message').pressSequentially('My order is 1042', { delay: 30 });
    await agent.getByTestId('visitor-typing').filter({ hasText: 'Visitor is typing…' }).waitFor({ timeout: 10_000 });
    await reply.fill('Your order 1042 ships today.');
    await reply.press('Enter');
    await visitor.locator('.msg.agent', { hasText: 'Your order 1042 ships today.' }).waitFor({ timeout: 15_000 });
    await expect.poll(() => visitor.locator('.typing').textContent(), { timeout: 10_000 }).toBe('');
    expect(await axeViolations(agent)).toEqual([]);

    // Close asks first: Escape keeps it open, and the focus goes back to Close.
    const closeButton = agent.getByRole('button', { name: 'Close', exact: true });
    await closeButton.click();
    const dialog = agent.getByRole('dialog', { name: 'Close this conversation?' });
    await dialog.waitFor();
    expect(await axeViolations(agent)).toEqual([]);
    await agent.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await closeButton.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    expect((await service.api('GET', `/v1/sessions/${sessionId}`, { token: ws.agent })).body.status).toBe('active');
    await closeButton.click();
    await dialog.getByRole('button', { name: 'Close conversation' }).click();

    // The widget: the closing line, then the question.
    await visitor.locator('.msg.bot', { hasText: phrase('agent_closed', 'en').replace('{name}', 'Agent') }).waitFor({ timeout: 15_000 });
    const survey = visitor.getByRole('form', { name: 'Rate this conversation' });
    await survey.waitFor({ timeout: 15_000 });
    expect(await axeViolations(visitor)).toEqual([]);
    await survey.getByRole('radio', { name: '4: Good' }).check();
    await survey.getByLabel('Anything to add? (optional)').fill('Quick answer');
    await survey.getByRole('button', { name: 'Send rating' }).click();
    await visitor.locator('.msg.notice', { hasText: 'Thank you for your feedback!' }).waitFor();
    expect(await survey.isHidden()).toBe(true);

    await agent.reload();
    await agent.getByTestId('satisfaction').waitFor({ timeout: 10_000 });
    expect(await agent.getByTestId('satisfaction').textContent()).toBe('4 of 5 (good): “Quick answer”');
    expect(problems).toEqual([]);
  }, 120_000);
});
