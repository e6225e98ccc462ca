/**
 * "Try a new version" on the Integration screen in Chromium (docs/integrators.md, "Try a new version: replay" and
 * "Judged replay"): an owner replays the last customer messages to a new version of their system and reads each answer
 * beside the live one, in words; a different answer says what the AI judge (the workspace's model, a scripted
 * OpenAI-compatible server on loopback HTTPS) found, better, worse or as good, and why, and the summary how many got
 * worse. Customers' and systems' texts are text, never HTML. axe-core wide and 375 px wide; the CSP holds.
 */
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { SESSION_MACHINE_VERSION } from '../../machines/session-types.ts';
import { summary } from '../../src/sessions/turn-record.ts';
import { axeViolations, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { refuseUnsigned, sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const KEY = 'candidate-key-0123456789-abcdefghijklmnopq';
const HOSTILE = '<img src=x onerror="window.__pwned=1">';
/** The live answer then, the new version's now, and the scripted judge's label. */
const CASES = [
  { message: 'Can I return my shoes?', live: 'Yes, within 30 days.', candidate: 'No returns.', label: 'worse', reason: 'It contradicts the 30-day return policy.' },
  { message: 'Where is order 1234?', live: 'I cannot say.', candidate: `Order 1234 ships today. ${HOSTILE}`, label: 'better', reason: 'It gives the order status.' },
  { message: 'When are you open?', live: 'We are open 9 to 5.', candidate: 'We are open 9 to 5.', label: null, reason: null },
];

describe('Try a new version (replay) on the Integration screen in Chromium', () => {
  let database: TestDatabase;
  let service: TestService;
  let browser: Browser;
  let llm: TestHttpsServer;
  let integrator: TestHttpsServer;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  const requested: string[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    [database, browser] = await Promise.all([openTestDatabase('pglite'), launchBrowser()]);
    llm = await startHttpsServer((_req, res, body) => {
      const request = JSON.parse(body.toString()) as { messages: { content: string }[] };
      const user = request.messages[1]?.content ?? '';
      const scripted = CASES.find((c) => c.label && user.includes(JSON.stringify(c.message)));
      const content = scripted ? JSON.stringify({ label: scripted.label, reason: scripted.reason }) : 'ok';
      sendJson(res, 200, { choices: [{ message: { role: 'assistant', content } }] });
    });
    integrator = await startHttpsServer((req, res, body) => {
      if (refuseUnsigned(KEY, req, res, body)) return;
      const { message } = JSON.parse(body.toString('utf8')) as { message: string };
      sendJson(res, 200, { reply: CASES.find((c) => c.message === message)?.candidate ?? 'Hm?', handled: true });
    });
    service = await startTestService(database, { LLM_BASE_URL: `${llm.origin}/v1`, LLM_MODEL: 'test-model' });
    ws = await seedWorkspace(service);
    // The live conversation: WhatsApp turns the live endpoint answered, as the session runtime stores them.
    const sessions = sessionsRepository(database.db);
    const session = await sessions.findOrCreate({ id: randomUUID(), workspace_id: ws.workspaceId, channel: 'whatsapp', external_id: 'wa-1', language: 'en', customer_phone: '+31612345678', machine_version: SESSION_MACHINE_VERSION });
    let at = Date.now() - 3_600_000;
    for (const [ordinal, c] of CASES.entries()) {
      at += 60_000;
      await sessions.saveTurns([{
        turn: {
          id: randomUUID(), session_id: session.id, ordinal, status: 'completed', language: 'en', customer_message: c.message, reply: c.live, source: 'integrator',
          botlink: summary({ outcome: 'answer', reason: 'answer', reply: c.live, handled: true }), knowledge: null, tool_rounds: [], handoff: null,
          timings: {}, errors: [], started_at: new Date(at), ended_at: new Date(at + 1_000),
        },
        session: {
          id: session.id, state: 'ended', status: 'ended', language: 'en', customer: { phone: '+31612345678', email: null, name: null }, handoff: null,
          turnCount: ordinal + 1, snapshot: null, machineVersion: SESSION_MACHINE_VERSION, releaseLease: true, owner: 'replay-e2e',
        },
      }]);
    }
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await integrator?.close();
    await llm?.close();
    await database?.close();
  });

  let context: BrowserContext;
  let page: Page;
  beforeAll(async () => {
    ({ context, page } = await openBrowserPage(browser, { viewport: { width: 1280, height: 900 }, requested, cspViolations }));
    await signInWithToken(page, service.url, ws.owner);
  });
  afterAll(async () => {
    await context?.close();
  });

  it('an address that is not https is said under the field', async () => {
    await page.goto(`${service.url}/dashboard/integration`);
    const form = page.getByRole('form', { name: 'Try a new version' });
    await form.getByLabel('Address of the new version').fill('http://staging.shop.example/botlink/channel');
    await form.getByRole('button', { name: 'Replay' }).click();
    await expect.poll(() => form.locator('.field-error').first().textContent()).toMatch(/https/);
    await expect(form.getByLabel('Address of the new version').getAttribute('aria-invalid')).resolves.toBe('true');
  });

  it('replays: each message with both answers in words, the judge\'s label and reason, and how many got worse', async () => {
    const form = page.getByRole('form', { name: 'Try a new version' });
    await form.getByLabel('Address of the new version').fill(`${integrator.origin}/v2/channel`);
    await form.getByLabel('Its key (optional)').fill(KEY);
    await form.getByRole('button', { name: 'Replay' }).click();
    const result = form.getByLabel('Replay result');
    await result.locator('.replay-item').first().waitFor({ timeout: 30_000 });
    await expect(form.getByRole('status').textContent()).resolves.toBe('Replayed 3 messages.');
    expect(await page.evaluate('document.activeElement?.getAttribute("aria-label")')).toBe('Replay result');
    await expect(result.locator('.outcome').textContent()).resolves.toBe('3 replayed: Same answer: 1 · Different answer: 2.');
    await result.getByText('Of the different answers, the AI judge found 1 worse, 1 better and 0 as good.').waitFor();
    const items = result.locator('.replay-item');
    await expect(items.nth(0).textContent()).resolves.toMatch(
      /^Different answer WhatsApp · .+Customer: Can I return my shoes\?Live system then: Yes, within 30 days\.New version: No returns\.AI judge: Worse\. It contradicts the 30-day return policy\.$/,
    );
    await expect(items.nth(1).locator('.judged').textContent()).resolves.toBe('AI judge: Better. It gives the order status.');
    await expect(items.nth(1).textContent()).resolves.toContain(`New version: Order 1234 ships today. ${HOSTILE}`);
    await expect(items.nth(2).textContent()).resolves.toMatch(/^Same answer WhatsApp · .+Customer: When are you open\?Both: We are open 9 to 5\.$/);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await axeViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('asked no other origin and broke no CSP rule', () => {
    expect(requested.filter((u) => new URL(u).origin !== service.url)).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
