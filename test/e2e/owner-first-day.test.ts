/**
 * A shop owner's first day without a developer, in a real browser (Debian's Chromium, headless) against the real
 * service: from the invite link to a renamed workspace and their own email, the website chat switched on from the
 * Channels screen and used on the demo page, a phone number typed as "020 123 4567" (the field marked until the
 * country is known), the values to paste into Twilio and Meta copied, the new_chat webhook's dashboard_url opened
 * after signing in, and a quiet web chat ended with the visitor's details on it. Each screen is checked with axe-core
 * (WCAG 2.1 A and AA: no serious or critical violation), wide and 375 px wide. Screenshots go to docs/screenshots/.
 */
import { sql } from 'kysely';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, docScreenshot, launchBrowser, openBrowserPage } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/service.ts';

const PASSWORD = 'a long passphrase for the shop';
const VERIFY_TOKEN = 'meta-verify-token-of-the-operator';

describe("a shop owner's first day without a developer", () => {
  let database: TestDatabase;
  let service: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let workspaceId: string;
  let inviteUrl: string;
  let email = 'owner@example.com';

  beforeAll(async () => {
    [database, browser] = await Promise.all([openTestDatabase('pglite'), launchBrowser()]);
    service = await startTestService(database, { WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN, WHATSAPP_APP_SECRET: 'app-secret-of-the-operator' });
    const created = await service.api('POST', '/v1/admin/workspaces', { token: TEST_ADMIN_TOKEN, body: { name: 'My workspace', owner_email: email } });
    workspaceId = created.body.workspace.id;
    // The link as printed, on the address the browser uses.
    inviteUrl = `${service.url}${new URL(created.body.owner.invite_url as string).pathname}${new URL(created.body.owner.invite_url as string).hash}`;
    context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service.url });
    page = await context.newPage();
    page.setDefaultTimeout(8_000);
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await service?.stop();
    await database?.close();
  });

  const menu = (p: Page, name: string) => p.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true });

  async function shot(p: Page, name: string): Promise<void> {
    await docScreenshot(p, `dashboard-${name}.png`, { fullPage: true });
  }

  it('sets a password from the invite link and lands on the Overview, with the first-day list', async () => {
    await page.goto(inviteUrl);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('The same password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Your first day' }).waitFor();
    await page.getByText('0 of 6 done.', { exact: false }).waitFor();
    expect(await page.locator('.first-day li strong').allTextContents()).toEqual([
      'Name your workspace', 'Add what the bot should know', 'Try a question', 'Put the chat on your website', 'Invite a colleague', 'Say who is available',
    ]);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('renames the workspace, chooses its time zone and changes the placeholder email on the Workspace screen', async () => {
    // The first-day list's first step opens the screen that does it.
    await page.getByRole('link', { name: 'Open Workspace' }).click();
    await page.getByRole('heading', { name: 'Workspace', level: 1 }).waitFor();
    await page.getByLabel('Workspace name').fill('Trail & Tent');
    await page.getByLabel('Time zone').selectOption('Europe/Amsterdam');
    await page.getByRole('button', { name: 'Save workspace' }).click();
    await page.getByText('Saved: Trail & Tent.').waitFor();
    // The header says it at once, without a reload.
    await expect(page.locator('header .workspace').textContent()).resolves.toBe('Trail & Tent');
    expect((await service.api('GET', '/v1/workspace', { token: await ownerToken() })).body).toMatchObject({ name: 'Trail & Tent', time_zone: 'Europe/Amsterdam' });

    email = 'sam@trailandtent.example';
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByRole('button', { name: 'Change email' }).click();
    await page.getByText(`Saved: you sign in as ${email}.`).waitFor();
    await expect(page.locator('header .account > span').textContent()).resolves.toBe(email);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'workspace');

    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    expect(await axeViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1100, height: 900 });
  });

  it('switches the website chat on for this site from the Channels screen, and a visitor chats on the demo page', async () => {
    await menu(page, 'Channels').click();
    const state = page.getByTestId('webchat-state');
    await expect(state.textContent()).resolves.toMatch(/^Off until you add your website/);
    await page.getByRole('button', { name: `Add this site (${service.url})` }).click();
    await expect(page.getByLabel('Websites that show the chat, one per line').inputValue()).resolves.toBe(service.url);
    await expect(page.getByRole('switch', { name: 'The chat is on' }).isChecked()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Save website chat' }).click();
    await page.getByText(`On: visitors of ${service.url} can chat with you.`).waitFor();
    const snippet = await page.getByTestId('snippet').inputValue();
    expect(snippet).toMatch(/^<script src="http:\/\/localhost:\d+\/widget.js" data-key="[^"]+" async><\/script>$/);
    // Said plainly: this line works on this computer only, and what to do about it.
    expect(await page.getByTestId('local-address').first().textContent()).toContain('Put Botlink online first');
    await page.getByText('Where to paste it on Shopify, WordPress, Wix or plain HTML').click();
    await page.getByText('Settings → Custom code', { exact: false }).waitFor();

    const demoLink = page.getByRole('link', { name: 'Try the chat on a sample shop page' });
    const [demo] = await Promise.all([context.waitForEvent('page'), demoLink.click()]);
    demo.setDefaultTimeout(8_000);
    await demo.getByRole('button', { name: 'Chat with us' }).click();
    await demo.getByLabel('Your message').fill('Do you sell tents?');
    await demo.getByRole('button', { name: 'Send', exact: true }).click();
    // An answer (the knowledge base is empty: the fallback offers the team), not an error about the site.
    const log = demo.getByRole('log');
    await log.getByText(/team/i).first().waitFor({ timeout: 10_000 });
    expect(await log.textContent()).not.toMatch(/not switched on|could not be reached/);
    await demo.close();
  });

  it('ticks on the Overview what was done, and each step left opens the screen that does it', async () => {
    await menu(page, 'Overview').click();
    await page.getByText('2 of 6 done.', { exact: false }).waitFor();
    const state = async (step: string) => page.locator(`.first-day li[data-step="${step}"]`).getAttribute('class');
    expect(await state('name_workspace')).toBe('done');
    expect(await state('put_chat_on_site')).toBe('done');
    expect(await state('add_knowledge')).toBe('todo');
    // With no system of their own connected, the Overview has no "Your system" panels and no engine words.
    await page.getByRole('heading', { name: 'Who answered', exact: true }).waitFor();
    expect(await page.getByRole('heading', { name: 'Your system' }).count()).toBe(0);
    expect(await page.locator('main').textContent()).not.toMatch(/p50|p95/);
    for (const [link, heading] of [['Open Knowledge', 'Knowledge'], ['Try a question', 'Knowledge'], ['Open Users', 'Users'], ['Open Inbox', 'Inbox']] as const) {
      await page.locator('.first-day').getByRole('link', { name: link, exact: true }).click();
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      await menu(page, 'Overview').click();
      await page.getByRole('heading', { name: 'Your first day' }).waitFor();
    }
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'first-day');
    await page.setViewportSize({ width: 1100, height: 900 });
    // Back where the next steps of this day go on.
    await menu(page, 'Channels').click();
    await page.getByRole('heading', { name: 'Channels', level: 1 }).waitFor();
  });

  it('adds a phone number typed as "020 123 4567": marked until the country is known, then saved in E.164 and shown at once', async () => {
    const numbers = page.getByLabel('Phone numbers, one per line');
    await page.getByLabel('Country of your numbers').selectOption('');
    await numbers.fill('020 123 4567');
    await page.getByRole('button', { name: 'Save phone settings' }).click();
    const problem = page.getByRole('alert').filter({ hasText: '020 123 4567 has no country code' });
    await problem.waitFor();
    await expect(numbers.getAttribute('aria-invalid')).resolves.toBe('true');
    expect(await page.getByText(/pattern|E\.164|BCP 47|IANA/).count()).toBe(0);
    await shot(page, 'channels-phone-error');

    // The workspace's time zone suggested the Netherlands; the owner chooses it again after clearing it.
    await page.getByLabel('Country of your numbers').selectOption('31');
    await page.getByRole('button', { name: 'Save phone settings' }).click();
    await page.getByTestId('phone-state').getByText(/\+31201234567/).waitFor();
    await expect(page.getByLabel('Phone numbers, one per line').getAttribute('aria-invalid')).resolves.toBeNull();
    expect((await service.api('GET', '/v1/phone', { token: await ownerToken() })).body.numbers).toEqual(['+31201234567']);
    // Calls cannot come in yet, and the page says why and who can change it.
    await expect(page.getByTestId('phone-state').textContent()).resolves.toMatch(/TWILIO_AUTH_TOKEN .*BRIDGE_TOKEN/);

    // Team hours as people write them; a time that does not exist is said in words under its day.
    await page.getByLabel('Monday').fill('9-17.30');
    await page.getByLabel('Tuesday').fill('25-26');
    await page.getByRole('button', { name: 'Save phone settings' }).click();
    await page.getByRole('alert').filter({ hasText: 'Write the hours like 09:00-17:30; “25:00” is not a time of day from 00:00 to 24:00.' }).waitFor();
    await expect(page.getByLabel('Tuesday').getAttribute('aria-invalid')).resolves.toBe('true');
    await page.getByLabel('Tuesday').fill('');
    await page.getByRole('button', { name: 'Save phone settings' }).click();
    // The card is drawn again from the saved settings: Monday as stored.
    await expect.poll(async () => (await service.api('GET', '/v1/phone', { token: await ownerToken() })).body.team_hours, { timeout: 5_000 })
      .toEqual({ time_zone: 'Europe/Amsterdam', week: { mon: [['09:00', '17:30']] } });
    await expect.poll(() => page.getByLabel('Monday').inputValue()).toBe('09:00-17:30');
    await expect(page.getByLabel('Tuesday').getAttribute('aria-invalid')).resolves.toBeNull();
  });

  it('copies the address for Twilio and the values for Meta', async () => {
    const twilio = page.getByTestId('twilio-url');
    await expect(twilio.inputValue()).resolves.toMatch(/^http:\/\/localhost:\d+\/v1\/phone\/twilio\/voice$/);
    await page.getByRole('button', { name: 'Copy Address for Twilio (“A call comes in”)' }).click();
    await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(await twilio.inputValue());

    await expect(page.getByTestId('meta-callback').inputValue()).resolves.toMatch(/\/v1\/whatsapp\/webhook$/);
    await page.getByRole('button', { name: 'Copy Verify token' }).click();
    await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(VERIFY_TOKEN);
    // PUBLIC_URL is plain http here: the page says Meta needs a public https address.
    await expect(page.getByTestId('whatsapp-reason').textContent()).resolves.toMatch(/Meta needs a public https:\/\/ address/);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'channels-owner');

    await page.setViewportSize({ width: 375, height: 800 });
    await page.reload();
    await page.getByTestId('twilio-url').waitFor();
    await page.locator('.loading').first().waitFor({ state: 'detached' });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'channels-mobile');
    await page.setViewportSize({ width: 1100, height: 900 });
  });

  it("opens the new_chat webhook's dashboard_url after signing in, and sees a quiet chat end with the visitor's details", async () => {
    const key = (await service.api('GET', '/v1/keys/widget', { token: await ownerToken() })).body.key as string;
    const widget = { 'x-widget-key': key, origin: service.url };
    const started = await service.api('POST', '/v1/webchat/conversations', { headers: widget, body: { visitor_message: 'Is the Ridge tent waterproof?', page_url: `${service.url}/tents` } });
    const conversationId = started.body.conversation_id as string;
    await service.api('POST', `/v1/webchat/conversations/${conversationId}/lead`, { headers: { ...widget, 'x-visitor-token': started.body.visitor_token as string }, body: { name: 'Noor de Vries', email: 'noor@example.org', phone: '' } });
    const event = await database.db.selectFrom('webhook_events').select('payload').where('workspace_id', '=', workspaceId).where('event', '=', 'new_chat').orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    const dashboardUrl = new URL((event.payload as { dashboard_url: string }).dashboard_url);

    // A fresh browser: not signed in. The link shows the sign-in page, then the conversation itself.
    const { context: fresh, page: p } = await openBrowserPage(browser);
    try {
      await p.goto(`${service.url}${dashboardUrl.pathname}`);
      await p.getByRole('heading', { name: 'Sign in to Botlink' }).waitFor();
      await p.getByLabel('Email').fill(email);
      await p.getByLabel('Password').fill(PASSWORD);
      await p.getByRole('button', { name: 'Sign in', exact: true }).click();
      await p.getByRole('heading', { name: 'Conversation', level: 1 }).waitFor();
      await p.getByText('Is the Ridge tent waterproof?').waitFor();
      expect(new URL(p.url()).pathname).toBe(dashboardUrl.pathname);
      await p.getByText('Noor de Vries · noor@example.org').waitFor();
      expect(await p.getByText('does not exist').count()).toBe(0);

      // Quiet for longer than the workspace's 30 minutes: the sweep ends it, and the open page says so.
      await service.runtime.settled();
      await database.db.updateTable('sessions').set({ updated_at: sql<Date>`now() - interval '31 minutes'` }).where('external_id', '=', conversationId).execute();
      expect(await service.endIdleWebchats()).toBe(1);
      await p.getByText('Ended: no new message for a while').waitFor({ timeout: 10_000 });
      await p.getByText('Noor de Vries · noor@example.org').waitFor();
      expect(await axeViolations(p)).toEqual([]);
      await shot(p, 'conversation-webchat-ended');
    } finally {
      await fresh.close();
    }
  });

  /** A token of the owner for the API checks (the browser's own session token stays in its tab). */
  let token: string | undefined;
  async function ownerToken(): Promise<string> {
    if (token) return token;
    const login = await service.api('POST', '/v1/auth/login', { body: { email, password: PASSWORD } });
    expect(login.status).toBe(200);
    token = login.body.token as string;
    return token;
  }
});
