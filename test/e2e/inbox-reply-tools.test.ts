/**
 * The team answers fast, in a real browser (Debian's Chromium, headless) against the real service (docs/interfaces.md,
 * "The team's tools"): an agent takes over a visitor's web chat, types / and picks a saved reply with the keyboard
 * (its placeholders filled), inserts a passage of the knowledge base, sends both; writes a private note that
 * @mentions the admin, whose dashboard shows it at once; edits it with the keyboard (the admin's open conversation shows
 * it edited) and deletes it. The visitor's widget gets the replies and never the note.
 * The Saved replies screen adds one at 375 px. Every page is checked with axe-core (WCAG 2.1 A and AA).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, collectConsoleErrors, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../channels/whatsapp/fixtures/harness.ts';

const WARRANTY = 'Every bike we sell has a two-year warranty on the frame and one year on the parts.';
const NOTE = '@admin the frame was bought in 2023, still under warranty: internal only';
const EDITED_NOTE = '@admin the frame was bought in 2023 (receipt seen), still under warranty: internal only';

describe('the team answers fast: saved replies, knowledge, private notes', () => {
  let database: TestDatabase;
  let service: TestService;
  let browser: Browser;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';
  const problems = new Map<Page, string[]>();

  beforeAll(async () => {
    [database, browser] = await Promise.all([openTestDatabase('pglite'), launchBrowser()]);
    service = await startTestService(database);
    ws = await seedWorkspace(service);
    const owner = (method: string, path: string, body?: unknown) => service.api(method, path, { token: ws.owner, ...(body === undefined ? {} : { body }) });
    expect((await owner('PUT', '/v1/webchat', { allowed_origins: [service.url] })).status).toBe(200);
    widgetKey = (await owner('GET', '/v1/keys/widget')).body.key as string;
    expect((await owner('POST', '/v1/saved-replies', { shortcut: 'hello', text: 'Hi {{customer.name}}, this is {{agent.name}}. Happy to help.' })).status).toBe(201);
    expect((await owner('POST', '/v1/saved-replies', { shortcut: 'bye', text: 'Thanks for writing, have a good day!' })).status).toBe(201);
    expect((await owner('POST', '/v1/knowledge/entries', { type: 'page', title: 'Warranty', text: WARRANTY })).status).toBe(201);
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
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

  it('an agent inserts a saved reply and a passage, sends them, notes with @admin; the visitor gets the replies and not the note', async () => {
    const visitor = await open({ width: 1280, height: 800 });
    const agent = await open({ width: 1280, height: 900 });
    const admin = await open({ width: 1280, height: 800 });
    try {
      // The visitor asks for the team on the widget's demo page.
      const widget = visitor.page;
      await widget.goto(`${service.url}/widget/demo?key=${widgetKey}`);
      await widget.getByRole('button', { name: 'Chat with us' }).click();
      await widget.getByLabel('Your message').fill('Is my bike still under warranty?');
      await widget.keyboard.press('Enter');
      await widget.locator('.msg.bot').nth(1).waitFor();
      await widget.getByRole('button', { name: 'Talk to the team' }).click();
      const sessionId = await until(async () => {
        const waiting = await service.api('GET', '/v1/inbox?view=waiting', { token: ws.agent });
        return (waiting.body.conversations as { id: string; channel: string }[]).find((c) => c.channel === 'webchat')?.id;
      }, 15_000);

      // The admin is somewhere else in the dashboard.
      await signInWithToken(admin.page, service.url, ws.admin);

      // The agent takes it over; the reply box has the focus.
      const page = agent.page;
      await signInWithToken(page, service.url, ws.agent);
      await page.goto(`${service.url}/dashboard/inbox/${sessionId}`);
      await page.getByRole('button', { name: 'Take over' }).click();
      const box = page.getByLabel('Your reply');
      await expect.poll(() => page.evaluate('document.activeElement.getAttribute("name")')).toBe('text');

      // "/" opens the saved replies, filtered as one types; Enter inserts the chosen one with its placeholders filled.
      await page.keyboard.type('/');
      const list = page.getByRole('listbox', { name: 'Saved replies' });
      await list.waitFor();
      expect(await list.getByRole('option').allTextContents()).toEqual([expect.stringContaining('/bye'), expect.stringContaining('/hello')]);
      expect(await axeViolations(page)).toEqual([]);
      await page.keyboard.type('hel');
      await expect.poll(() => list.getByRole('option').count()).toBe(1);
      await page.keyboard.press('ArrowDown');
      expect(await list.getByRole('option', { selected: true }).textContent()).toContain('/hello');
      expect(await box.getAttribute('aria-activedescendant')).toBe(await list.getByRole('option', { selected: true }).getAttribute('id'));
      await page.keyboard.press('Enter');
      await expect.poll(() => box.inputValue()).toBe('Hi, this is Agent. Happy to help.');
      expect(await list.isHidden()).toBe(true);
      // Escape closes the list and keeps what was typed.
      await box.fill('');
      await page.keyboard.type('/by');
      await list.waitFor();
      await page.keyboard.press('Escape');
      expect(await list.isHidden()).toBe(true);
      expect(await box.inputValue()).toBe('/by');
      await box.fill('');
      await page.keyboard.type('/hello');
      await page.keyboard.press('Enter');
      await expect.poll(() => box.inputValue()).toBe('Hi, this is Agent. Happy to help.');
      await page.keyboard.press('Enter');
      await widget.locator('.msg.agent', { hasText: 'Hi, this is Agent. Happy to help.' }).waitFor({ timeout: 15_000 });

      // Insert from knowledge: search, insert the passage, send.
      await page.getByRole('button', { name: 'Insert from knowledge' }).click();
      const search = page.getByLabel('Search the knowledge base');
      await expect.poll(() => page.evaluate('document.activeElement.getAttribute("name")')).toBe('knowledge-search');
      await search.fill('warranty');
      await search.press('Enter');
      await page.getByRole('button', { name: 'Insert: Warranty' }).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Insert: Warranty' }).click();
      await expect.poll(() => box.inputValue()).toBe(WARRANTY);
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await widget.locator('.msg.agent', { hasText: 'two-year warranty' }).waitFor({ timeout: 15_000 });

      // A private note with @admin: shown in the transcript as a note, told to the admin at once.
      await page.getByRole('button', { name: 'Note', exact: true }).click();
      expect(await page.getByRole('button', { name: 'Note', exact: true }).getAttribute('aria-pressed')).toBe('true');
      await page.getByLabel('Your note (only the team sees this)').fill(NOTE);
      await page.getByRole('button', { name: 'Add note' }).click();
      const shownNote = page.getByRole('list', { name: 'Messages' }).locator('.from-note', { hasText: 'internal only' });
      await shownNote.waitFor({ timeout: 10_000 });
      expect(await shownNote.textContent()).toContain('Note (only the team sees this)');
      // Back to replying to the customer once the note went.
      expect(await page.getByRole('button', { name: 'Note', exact: true }).getAttribute('aria-pressed')).toBe('false');
      expect(await axeViolations(page)).toEqual([]);

      const mention = admin.page.getByTestId('mention');
      await mention.waitFor({ timeout: 10_000 });
      expect(await mention.textContent()).toContain('Agent mentioned you in a note');
      expect(await axeViolations(admin.page)).toEqual([]);
      await mention.getByRole('link', { name: 'Open the conversation' }).click();
      await admin.page.getByRole('list', { name: 'Messages' }).locator('.from-note', { hasText: 'internal only' }).waitFor();
      expect(await admin.page.getByTestId('mention').count()).toBe(0);

      // The agent edits the note with the keyboard: the admin's open conversation shows the new words, marked edited.
      const adminNote = admin.page.getByRole('list', { name: 'Messages' }).locator('.from-note');
      // The admin did not write it and is not an owner: neither Edit nor Delete.
      expect(await adminNote.getByRole('button').count()).toBe(0);
      await shownNote.getByRole('button', { name: /^Edit your note/ }).focus();
      await page.keyboard.press('Enter');
      const noteText = page.getByLabel('Note text');
      await expect.poll(() => page.evaluate('document.activeElement.getAttribute("name")')).toBe('note-edit');
      expect(await noteText.inputValue()).toBe(NOTE);
      expect(await axeViolations(page)).toEqual([]);
      await noteText.fill(EDITED_NOTE);
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      const editedNote = page.getByRole('list', { name: 'Messages' }).locator('.from-note', { hasText: 'receipt' });
      await editedNote.getByTestId('note-edited').waitFor({ timeout: 10_000 });
      expect(await editedNote.locator('.msg-text').textContent()).toBe(EDITED_NOTE);
      // The keyboard is back on the note's Edit.
      await expect.poll(() => page.evaluate('document.activeElement.getAttribute("aria-label")')).toMatch(/^Edit your note/);
      await adminNote.filter({ hasText: 'receipt' }).getByTestId('note-edited').waitFor({ timeout: 10_000 });
      expect(await adminNote.count()).toBe(1);
      expect(await adminNote.locator('.msg-text').textContent()).toBe(EDITED_NOTE);
      expect(await axeViolations(admin.page)).toEqual([]);

      // Deleted by its author, after a question: gone from both pages.
      const asked: string[] = [];
      page.once('dialog', (dialog) => {
        asked.push(dialog.message());
        void dialog.accept();
      });
      await editedNote.getByRole('button', { name: /^Delete the note/ }).click();
      await expect.poll(() => page.getByRole('list', { name: 'Messages' }).locator('.from-note').count(), { timeout: 10_000 }).toBe(0);
      expect(asked).toEqual([expect.stringContaining('Delete this note?')]);
      await expect.poll(() => adminNote.count(), { timeout: 10_000 }).toBe(0);

      // The visitor: both replies, never the note, on the page and in the widget's own messages (its long poll).
      await widget.waitForTimeout(1_500);
      expect(await widget.locator('.msg.agent').count()).toBe(2);
      expect(await widget.locator('body').textContent()).not.toContain('internal only');
      // The widget reads the conversation's messages only (its long poll: test/inbox/notes.test.ts); the note is not one.
      const rows = await database.db.selectFrom('session_messages').select(['from', 'text']).where('session_id', '=', sessionId).execute();
      expect(rows.some((r) => r.text.includes('internal only'))).toBe(false);

      expect(problems.get(agent.page)).toEqual([]);
      expect(problems.get(admin.page)).toEqual([]);
    } finally {
      await visitor.context.close();
      await agent.context.close();
      await admin.context.close();
    }
  }, 120_000);

  it('the Saved replies screen adds a reply at 375 px, says a taken shortcut under its field, and passes axe', async () => {
    const { context, page } = await open({ width: 375, height: 800 });
    try {
      await signInWithToken(page, service.url, ws.agent);
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Saved replies' }).click();
      await page.getByRole('heading', { name: 'Saved replies', level: 1 }).waitFor();
      await page.getByText('/hello').waitFor();
      await page.getByLabel('Shortcut').fill('hours');
      await page.getByLabel('Reply', { exact: true }).fill('We are open from 9 to 6, {{customer.name}}.');
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await page.getByText('/hours').waitFor();
      // Another with the same shortcut: said under the field.
      await page.getByLabel('Shortcut').fill('Hours');
      await page.getByLabel('Reply', { exact: true }).fill('Open late on Fridays.');
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await page.getByText('This is already used by another saved reply.').waitFor();
      expect(await page.getByLabel('Shortcut').getAttribute('aria-invalid')).toBe('true');
      // The agent may not change the owner's replies: no Edit for them, Edit for their own.
      expect(await page.getByRole('button', { name: 'Edit /hello' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Edit /hours' }).count()).toBe(1);
      const width = await page.evaluate('document.documentElement.scrollWidth');
      expect(width).toBeLessThanOrEqual(375);
      expect(await axeViolations(page)).toEqual([]);
      expect(problems.get(page)?.filter((p) => !p.startsWith('409 POST') && !p.includes('status of 409'))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
