/**
 * Presence and assignment in a real browser (Debian's Chromium, headless) against the real service (docs/architecture.md,
 * "Presence and assignment"): an agent sets "Available" in the header, a visitor on the widget's demo page asks for a
 * person and is told a colleague will reply, and the agent's inbox shows the conversation "Assigned to Agent", in the
 * list and in the open conversation. A colleague's pages follow each other's status without a reload: the admin's Team
 * screen as the agent becomes available, the agent's "Assign to" as the admin does. Every page is checked with
 * axe-core (WCAG 2.1 A and AA), at 1280 and 375 px.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phrase } from '../../src/ai/phrases.ts';
import { axeViolations, collectConsoleErrors, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

describe('an agent is available and takes the waiting visitor', () => {
  let database: TestDatabase;
  let service: TestService;
  let browser: Browser;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';

  beforeAll(async () => {
    [database, browser] = await Promise.all([openTestDatabase('pglite'), launchBrowser()]);
    service = await startTestService(database);
    ws = await seedWorkspace(service);
    expect((await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [service.url] } })).status).toBe(200);
    widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await database?.close();
  });

  it('"Available" in the header, "a colleague will reply" on the widget, "Assigned to Agent" in the inbox; colleagues\' pages follow it live; axe clean', async () => {
    const agent = await openBrowserPage(browser, { viewport: { width: 1280, height: 800 }, timeoutMs: 10_000 });
    const colleague = await openBrowserPage(browser, { viewport: { width: 1280, height: 800 }, timeoutMs: 10_000 });
    const errors: string[] = [];
    collectConsoleErrors(agent.page, errors);
    collectConsoleErrors(colleague.page, errors, 'admin: ');
    try {
      // The admin watches the Team screen: the agent is offline.
      const team = colleague.page;
      await signInWithToken(team, service.url, ws.admin);
      await team.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Team' }).click();
      const people = team.getByTestId('team-presence');
      await people.getByText('Agent: Offline').waitFor();
      await team.getByText('Now: nobody is available, so customers are told the team is away.').waitFor();

      const page = agent.page;
      await signInWithToken(page, service.url, ws.agent);
      const status = page.getByLabel('Your status');
      await expect.poll(() => status.isEnabled(), { timeout: 10_000 }).toBe(true);
      expect(await status.inputValue()).toBe('offline');
      await status.selectOption('available');
      await page.getByText('Your status is Available.').waitFor({ state: 'attached' });
      expect((await service.api('GET', '/v1/me/presence', { token: ws.agent })).body).toEqual({ status: 'available' });
      expect(await axeViolations(page)).toEqual([]);
      // The admin's Team screen says so without a reload, and what customers are told with it.
      await people.getByText('Agent: Available').waitFor();
      await team.getByText('Now: a customer who asks for a person is told a colleague will reply.').waitFor();
      expect(await axeViolations(team)).toEqual([]);

      // The visitor asks for a person: someone is available, so a colleague will reply.
      const visitor = await openBrowserPage(browser, { viewport: { width: 375, height: 740 }, timeoutMs: 10_000 });
      try {
        const v = visitor.page;
        await v.goto(`${service.url}/widget/demo?key=${widgetKey}`);
        await v.getByRole('button', { name: 'Chat with us' }).click();
        await v.getByLabel('Your message').fill('Do you sell tents?');
        await v.keyboard.press('Enter');
        await v.locator('.msg.bot').nth(1).waitFor();
        await v.getByRole('button', { name: 'Talk to the team' }).click();
        await v.locator('.msg.bot', { hasText: phrase('handoff_waiting', 'en') }).waitFor();
        expect(await v.locator('.msg.bot', { hasText: phrase('handoff_waiting_closed', 'en') }).count()).toBe(0);
      } finally {
        await visitor.context.close();
      }

      // The waiting conversation is the agent's: on the row, and in the open conversation.
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: /^Inbox/ }).click();
      const assigned = page.getByTestId('inbox-row').getByTestId('assigned-to');
      await assigned.first().waitFor({ timeout: 10_000 });
      expect(await assigned.first().textContent()).toBe('Assigned to Agent');
      expect(await axeViolations(page)).toEqual([]);
      await page.getByTestId('inbox-row').first().click();
      const inConversation = page.getByTestId('assign').getByTestId('assigned-to');
      await inConversation.waitFor();
      expect(await inConversation.textContent()).toBe('Assigned to Agent');
      await expect.poll(async () => (await page.getByLabel('Assign to').locator('option').allTextContents()).length).toBeGreaterThan(1);
      expect(await page.getByLabel('Assign to').locator('option').allTextContents()).toContain('Agent (available)');
      expect(await page.getByLabel('Assign to').locator('option').allTextContents()).toContain('Admin (offline)');
      // The admin becomes available in their header: the agent's choice says so without a reload.
      await team.getByLabel('Your status').selectOption('available');
      await expect.poll(() => page.getByLabel('Assign to').locator('option').allTextContents()).toContain('Admin (available)');
      expect(await axeViolations(page)).toEqual([]);
      await page.setViewportSize({ width: 375, height: 740 });
      expect(await axeViolations(page)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await agent.context.close();
      await colleague.context.close();
    }
  }, 90_000);

  it("after a gap in the inbox stream, the Team screen reads everyone's presence again instead of keeping what it last heard", async () => {
    expect((await service.api('PUT', '/v1/me/presence', { token: ws.agent, body: { status: 'available' } })).status).toBe(200);
    const admin = await openBrowserPage(browser, { viewport: { width: 1280, height: 800 }, timeoutMs: 10_000 });
    try {
      const page = admin.page;
      // The stream cannot connect (a proxy restarting, a network gap): the dashboard retries every few seconds.
      await page.route('**/v1/inbox/events', (route) => route.abort());
      await signInWithToken(page, service.url, ws.admin);
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Team' }).click();
      const people = page.getByTestId('team-presence');
      await people.getByText('Agent: Available').waitFor();
      // The agent steps away while no event can reach this page.
      expect((await service.api('PUT', '/v1/me/presence', { token: ws.agent, body: { status: 'away' } })).status).toBe(200);
      expect(await people.textContent()).toContain('Agent: Available');
      await page.unroute('**/v1/inbox/events');
      await people.getByText('Agent: Away').waitFor({ timeout: 20_000 });
    } finally {
      await admin.context.close();
    }
  }, 60_000);
});
