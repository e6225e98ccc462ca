/**
 * Names and times an owner reads (issue 38), in Chromium against the real service, with the browser in New York and a
 * workspace in Auckland: every time shown is Auckland's (the Conversations list, one conversation, the Overview and
 * its "Choose dates", which are Auckland's days) until the owner chooses another zone, and then that one at once;
 * conversations are named by their customer or their first words (never "Conversation 1"), as text; users get a name
 * from the invite form, the Users screen, the invite page and Your account. Each changed screen is checked with
 * axe-core (WCAG 2.1 A and AA: no serious or critical violation).
 */
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstWords } from '../../src/text/conversation-label.ts';
import { axeViolations, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

/** 03:04 UTC on 15 January 2025: 16:04 that day in Auckland (NZDT, +13), 22:04 the day before in New York. */
const KNOWN = '2025-01-15T03:04:05Z';
/** 12:30 UTC on 15 January 2025: already 01:30 on the 16th in Auckland. */
const LATER = '2025-01-15T12:30:00Z';
const QUESTION = '<img src=x onerror="window.__pwned=1"> Do you repair carbon bicycle frames?';
const PASSWORD = 'a long passphrase for the shop';

describe('names and times an owner reads, in Chromium', () => {
  let database: TestDatabase;
  let service: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let unnamed = '';
  let named = '';

  /** A phone conversation whose one turn the fallback answered at `at`. */
  async function conversation(at: string, customerName: string | null): Promise<string> {
    const id = randomUUID();
    await database.db.insertInto('sessions').values({
      id, workspace_id: ws.workspaceId, channel: 'phone', external_id: `times-${id}`, machine_version: 1,
      customer_phone: null, customer_email: null, customer_name: customerName, created_at: at, updated_at: at,
    }).execute();
    await database.db.insertInto('session_turns').values({
      id: randomUUID(), session_id: id, ordinal: 1, status: 'completed', language: 'en', customer_message: QUESTION, reply: 'I do not know.', source: 'fallback',
      botlink: null, knowledge: null, tool_rounds: '[]', handoff: null, timings: '{}', errors: '[]', started_at: at, ended_at: at,
    }).execute();
    return id;
  }

  const menu = (name: string) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true });

  beforeAll(async () => {
    [database, browser] = await Promise.all([openTestDatabase('pglite'), launchBrowser()]);
    service = await startTestService(database);
    ws = await seedWorkspace(service);
    expect((await service.api('PATCH', '/v1/workspace', { token: ws.owner, body: { time_zone: 'Pacific/Auckland' } })).status).toBe(200);
    unnamed = await conversation(KNOWN, null);
    named = await conversation(LATER, 'Noor');
    // The browser runs in New York, in British English: times it would write by itself are another day's.
    ({ context, page } = await openBrowserPage(browser, { timezoneId: 'America/New_York', locale: 'en-GB', timeoutMs: 10_000 }));
    await signInWithToken(page, service.url, ws.owner);
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await service?.stop();
    await database?.close();
  });

  it("lists conversations with the workspace's time and named by their customer or first words, as text", async () => {
    expect(await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')).toBe('America/New_York');
    await menu('Conversations').click();
    const rows = page.locator('ul.sessions a.session');
    await rows.nth(1).waitFor();
    const first = rows.filter({ has: page.locator('.who', { hasText: firstWords(QUESTION) }) });
    await expect(first.locator('.who').textContent()).resolves.toBe(firstWords(QUESTION));
    const shown = await first.locator('.meta').last().textContent();
    expect(shown).toMatch(/15 Jan 2025.*16:04/);
    expect(shown).not.toContain('22:04');
    await expect(rows.filter({ hasText: 'Noor' }).locator('.who').textContent()).resolves.toBe('Noor');
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.locator('ul.sessions img').count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);

    await first.click();
    await page.getByRole('heading', { name: 'Conversation', level: 1 }).waitFor();
    const started = page.locator('dl.facts div', { has: page.locator('dt', { hasText: 'Started' }) }).locator('dd');
    await expect(started.textContent()).resolves.toMatch(/15 Jan 2025.*16:04/);
  });

  it("the Overview's dates are Auckland's days, its times Auckland's, and its conversations named, never numbered", async () => {
    await menu('Overview').click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.getByLabel('Period', { exact: true }).selectOption('custom');
    await page.getByLabel('From', { exact: true }).fill('2025-01-15');
    await page.getByLabel('To (included)', { exact: true }).fill('2025-01-15');
    const list = page.getByRole('region', { name: 'Questions the bot could not answer' });
    // 15 January in Auckland holds the 03:04 UTC conversation (New York's 15 January would not) and not the 12:30 one.
    const question = list.locator('ol.questions > li');
    await question.getByText('asked 1 time', { exact: false }).waitFor();
    expect(await question.locator('.meta').textContent()).toMatch(/last 15 Jan 2025.*16:04/);
    const links = question.locator('.links a');
    expect(await links.allTextContents()).toEqual([firstWords(QUESTION)]);
    expect(await list.getByRole('link', { name: /^Conversation \d/ }).count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();

    await page.getByLabel('To (included)', { exact: true }).fill('2025-01-16');
    await question.getByText('asked 2 times', { exact: false }).waitFor();
    expect(await links.allTextContents()).toEqual(['Noor', firstWords(QUESTION)]);
    expect(await axeViolations(page)).toEqual([]);
    await links.filter({ hasText: 'Noor' }).click();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/conversations/${named}`);
  });

  it('shows every time in the zone the owner chooses, at once', async () => {
    await menu('Workspace').click();
    await page.getByLabel('Time zone').selectOption('Europe/Amsterdam');
    await page.getByRole('button', { name: 'Save workspace' }).click();
    await page.getByText('Saved: Acme.').waitFor();
    await menu('Conversations').click();
    const row = page.locator('ul.sessions a.session', { has: page.locator('.who', { hasText: firstWords(QUESTION) }) });
    await expect(row.locator('.meta').last().textContent()).resolves.toMatch(/15 Jan 2025.*04:04/);
    // And after a reload: the session keeps the zone.
    await page.reload();
    await expect(page.locator('ul.sessions a.session', { has: page.locator('.who', { hasText: firstWords(QUESTION) }) }).locator('.meta').last().textContent()).resolves.toMatch(/04:04/);
    expect(await page.locator(`a[href="/dashboard/conversations/${unnamed}"]`).count()).toBe(1);
  });

  it('names a conversation in the notifications by its customer', async () => {
    expect((await service.api('POST', `/v1/sessions/${named}/notes`, { token: ws.agent, body: { text: '@Owner can you call her back?' } })).status).toBe(201);
    await menu('Team').click();
    const link = page.getByRole('link', { name: 'Open the conversation: Noor' });
    await link.waitFor();
    expect(await link.getAttribute('href')).toBe(`/dashboard/conversations/${named}`);
    expect(await axeViolations(page)).toEqual([]);
  });

  describe("users' names", () => {
    let inviteUrl = '';

    it('the Users screen adds a user with a name and changes a name in place', async () => {
      await menu('Users').click();
      await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
      await page.getByLabel('Email', { exact: true }).fill('sam@acme.example');
      await page.getByLabel('Name (optional)').fill('  Sam   Jansen ');
      await page.getByRole('button', { name: 'Add user' }).click();
      await page.getByText('sam@acme.example was added as agent.').waitFor();
      inviteUrl = await page.getByTestId('shown-once').getByRole('textbox').inputValue();
      await page.locator('ul.users .who', { hasText: 'Sam Jansen · sam@acme.example' }).waitFor();

      const field = page.getByLabel('Name of agent@acme.example', { exact: true });
      await field.fill('Agent Smith');
      await page.getByRole('button', { name: 'Save name of agent@acme.example' }).click();
      await page.getByText('Saved: Agent Smith.').waitFor();
      await page.locator('ul.users .who', { hasText: 'Agent Smith · agent@acme.example' }).waitFor();
      const users = (await service.api('GET', '/v1/users', { token: ws.owner })).body.users as { email: string; name: string | null }[];
      expect(users.filter((u) => u.name).map((u) => [u.email, u.name]).sort()).toEqual([['agent@acme.example', 'Agent Smith'], ['sam@acme.example', 'Sam Jansen']]);
      expect(await axeViolations(page)).toEqual([]);
    });

    it('a name too long is said beside its field', async () => {
      const field = page.getByLabel('Name of agent@acme.example', { exact: true });
      await field.evaluate((el) => el.removeAttribute('maxlength'));
      await field.fill('x'.repeat(121));
      await page.getByRole('button', { name: 'Save name of agent@acme.example' }).click();
      await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
      expect(await axeViolations(page)).toEqual([]);
    });

    it('Your account, from the header, names you', async () => {
      await page.locator('header [data-account]').click();
      await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
      await page.getByLabel('Your name', { exact: true }).fill('Robin');
      await page.getByRole('button', { name: 'Save name', exact: true }).click();
      await page.getByText('Saved: colleagues and customers see you as Robin.').waitFor();
      const team = (await service.api('GET', '/v1/team/presence', { token: ws.agent })).body.users as { name: string }[];
      expect(team.map((u) => u.name)).toContain('Robin');
      expect(await axeViolations(page)).toEqual([]);
    });

    it('the invite page asks the new user their name', async () => {
      const invited = await openBrowserPage(browser, { timezoneId: 'America/New_York', locale: 'en-GB', timeoutMs: 10_000 });
      try {
        await invited.page.goto(`${service.url}${new URL(inviteUrl).pathname}${new URL(inviteUrl).hash}`);
        await invited.page.getByLabel('Your name (optional)').fill('Samantha');
        await invited.page.getByLabel('New password').fill(PASSWORD);
        await invited.page.getByLabel('The same password again').fill(PASSWORD);
        expect(await axeViolations(invited.page)).toEqual([]);
        await invited.page.getByRole('button', { name: 'Set password and sign in' }).click();
        await invited.page.getByRole('heading', { name: 'Conversations', level: 1 }).waitFor();
        // Signed in with the workspace's zone: Amsterdam now.
        const row = invited.page.locator('ul.sessions a.session', { has: invited.page.locator('.who', { hasText: firstWords(QUESTION) }) });
        // Polled: on a loaded machine the list can be read between its rows and their times.
        await expect.poll(() => row.locator('.meta').last().textContent(), { timeout: 10_000 }).toMatch(/04:04/);
      } finally {
        await invited.context.close();
      }
      const users = (await service.api('GET', '/v1/users', { token: ws.owner })).body.users as { email: string; name: string | null }[];
      expect(users.find((u) => u.email === 'sam@acme.example')?.name).toBe('Samantha');
    });
  });
});
