/**
 * The Overview in Chromium (docs/analytics.md): an owner lands on it, sees the figures and three charts drawn by uPlot
 * (served by Botlink itself), each with its table, and the questions the bot could not answer linking to their
 * conversations, each named by its first words. Checked with axe-core (WCAG 2.1 A and AA: no serious or critical violation) wide and 375 px wide,
 * under the page's CSP, asking no other origin. Screenshot (`npm run screenshots`): docs/screenshots/overview.png.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstWords } from '../../src/text/conversation-label.ts';
import { axeViolations, docScreenshot, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const HOSTILE = '<img src=x onerror="window.__pwned=1"> Do you repair bicycles?';
const HOUR = 3_600_000;

describe('the Overview in Chromium', () => {
  let database: TestDatabase;
  let service: TestService;
  let browser: Browser;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let bicycles: string;
  const requested: string[] = [];
  const cspViolations: string[] = [];

  /** A week of conversations on every channel, answered by every source, written as rows at chosen times. */
  async function seed() {
    const now = Date.now();
    const sources = ['integrator', 'integrator', 'knowledge_base', 'ai', 'fallback'] as const;
    const channels = ['phone', 'whatsapp', 'webchat'] as const;
    for (let i = 0; i < 60; i++) {
      const channel = channels[i % 3]!;
      const at = new Date(now - (i * 2.7 + 1) * HOUR);
      const id = randomUUID();
      await database.db.insertInto('sessions').values({ id, workspace_id: ws.workspaceId, channel, external_id: `seed-${id}`, machine_version: 1, customer_phone: null, customer_email: null, customer_name: null, created_at: at.toISOString(), updated_at: at.toISOString() }).execute();
      const source = sources[i % sources.length]!;
      const message = source === 'fallback' ? (i % 2 ? HOSTILE : 'Can you fix a flat tyre?') : 'Where is my order?';
      if (source === 'fallback' && i % 2 && !bicycles) bicycles = id;
      const latency = 120 + ((i * 37) % 900);
      await database.db.insertInto('session_turns').values({
        id: randomUUID(), session_id: id, ordinal: 1, status: 'completed', language: 'en', customer_message: message, reply: 'A reply.', source,
        botlink: channel === 'webchat' ? null : JSON.stringify({ outcome: source === 'integrator' ? 'answer' : 'no_answer', reason: source === 'integrator' ? 'answer' : i % 4 ? 'empty_reply' : 'timeout', latencyMs: latency }),
        knowledge: null, tool_rounds: '[]', handoff: i % 7 === 0 ? JSON.stringify({ kind: 'forward', connected: false, sentence: '', requestedBy: 'integrator' }) : null,
        timings: '{}', errors: '[]', started_at: at.toISOString(), ended_at: new Date(at.getTime() + 400 + latency).toISOString(),
      }).execute();
    }
  }

  beforeAll(async () => {
    [database, browser] = await Promise.all([openTestDatabase('pglite'), launchBrowser()]);
    service = await startTestService(database);
    ws = await seedWorkspace(service);
    await service.api('PATCH', '/v1/workspace', { token: ws.owner, body: { time_zone: 'Europe/Amsterdam' } });
    await seed();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await database?.close();
  });

  async function open(token: string, viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
    const { context, page } = await openBrowserPage(browser, { viewport, timeoutMs: 10_000, requested, cspViolations });
    await signInWithToken(page, service.url, token);
    return { context, page };
  }

  const chartsDrawn = (page: Page) => page.locator('figure[data-chart][data-drawn="true"] canvas').count();

  describe('an owner', () => {
    let context: BrowserContext;
    let page: Page;
    beforeAll(async () => {
      ({ context, page } = await open(ws.owner));
    });
    afterAll(async () => {
      await context?.close();
    });

    it('lands on the Overview: figures, three charts drawn with their tables, no accessibility violation', async () => {
      await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
      await page.locator('figure[data-chart="latency"][data-drawn="true"]').waitFor();
      expect(await chartsDrawn(page)).toBe(3);
      const figures = page.getByRole('region', { name: 'Conversations' });
      await expect(figures.locator('dd .number').first().textContent()).resolves.toBe('60');
      // Each chart's numbers as a table: the text alternative.
      const conversations = page.locator('figure[data-chart="conversations"]');
      await conversations.getByText('Show as a table').click();
      const rows = await conversations.locator('tbody tr').count();
      expect(rows).toBeGreaterThanOrEqual(7);
      expect(await page.locator('figure[data-chart] .chart[role="img"][aria-label]').count()).toBe(3);
      expect(await axeViolations(page)).toEqual([]);
      await conversations.getByText('Show as a table').click();
      await docScreenshot(page, 'overview.png', { fullPage: true });
    });

    it('lists the unanswered questions as text (never as markup), linking to their conversations named by their first words', async () => {
      const list = page.getByRole('region', { name: 'Questions the bot could not answer' });
      await list.getByText(HOSTILE).first().waitFor();
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      // No customer details: each conversation is named by the start of its first message, never "Conversation 1".
      expect(await list.getByRole('link', { name: /^Conversation \d/ }).count()).toBe(0);
      await list.getByRole('link', { name: firstWords(HOSTILE), exact: true }).first().click();
      await page.getByRole('heading', { name: 'Conversation', level: 1 }).waitFor();
      expect(new URL(page.url()).pathname).toMatch(/^\/dashboard\/conversations\/[0-9a-f-]{36}$/);
      await page.goBack();
      await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    });

    it('narrows to a channel and a period, and downloads the export', async () => {
      await page.locator('figure[data-chart="latency"][data-drawn="true"]').waitFor();
      await page.getByLabel('Channel', { exact: true }).selectOption('webchat');
      await page.getByRole('region', { name: 'Conversations' }).locator('dd .number').first().filter({ hasText: /^20$/ }).waitFor();
      await page.getByLabel('Period', { exact: true }).selectOption('24h');
      await page.locator('figure[data-chart="conversations"][data-drawn="true"]').waitFor();
      const download = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Download as CSV (spreadsheet)' }).click();
      const file = await download;
      expect(file.suggestedFilename()).toMatch(/^conversations_\d{4}-\d{2}-\d{2}_\d{4}-\d{2}-\d{2}\.csv$/);
      // Saved where this process can read it: the shared browser (another process) keeps no path for us.
      const saved = join(mkdtempSync(join(tmpdir(), 'botlink-export-')), file.suggestedFilename());
      await file.saveAs(saved);
      const text = readFileSync(saved, 'utf8');
      expect(text.split('\r\n')[0]).toMatch(/^"conversation_id","channel",/);
      expect(text).toContain(',"webchat",');
      expect(text).not.toContain(',"phone",');
    });
  });

  it('is readable 375 px wide: nothing wider than the screen, charts drawn, no accessibility violation', async () => {
    const { context, page } = await open(ws.owner, { width: 375, height: 800 });
    await page.locator('figure[data-chart="latency"][data-drawn="true"]').waitFor();
    expect(await chartsDrawn(page)).toBe(3);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    expect(await axeViolations(page)).toEqual([]);
    await context.close();
  });

  it('an agent sees the Overview without the export', async () => {
    const { context, page } = await open(ws.agent);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Overview' }).click();
    await page.locator('figure[data-chart="sources"][data-drawn="true"]').waitFor();
    expect(await page.getByRole('region', { name: 'Export' }).count()).toBe(0);
    await context.close();
  });

  it('asked no other origin and kept its CSP', () => {
    const origin = new URL(service.url).origin;
    expect(requested.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:'))).toEqual([]);
    expect(requested.some((u) => u.endsWith('/dashboard/assets/uplot.esm.js'))).toBe(true);
    expect(cspViolations).toEqual([]);
  });
});
