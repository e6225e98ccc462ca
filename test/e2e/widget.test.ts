/**
 * The chat widget in a real browser (docs/webchat.md, "The widget"): headless Chromium (test/helpers/browser.ts) on the
 * demo shop page of the real service, with a knowledge base filled through the sync API, the service's own origin
 * allowed, and a `new_lead` webhook delivered to a loopback HTTPS receiver that verifies it like an integrator.
 * Screenshots go to docs/screenshots/widget-*.png with `npm run screenshots`.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CSP } from '../../src/http/pages/widget.ts';
import { collectConsoleErrors, docScreenshot, launchBrowser } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';
import { received, until, verify } from '../webhooks/receiver.ts';

// The browser's globals, typed just enough for the functions this file runs in the page (the Node program has no DOM).
interface PageElement {
  tagName: string;
  className: string;
  hidden: boolean;
  shadowRoot: { activeElement: PageElement | null; querySelectorAll(selector: string): { length: number } } | null;
}
declare const document: { querySelector(selector: string): PageElement | null; querySelectorAll(selector: string): { length: number } };
declare const window: { localStorage: { length: number; key(i: number): string | null; getItem(key: string): string | null }; pwned?: boolean };
declare function getComputedStyle(element: PageElement): { outlineStyle: string; backgroundColor: string; fontFamily: string };

const SHIPPING = 'We ship every order within two working days. Shipping is free above 50 euro.';
/** Stored as text by the sync API, so the knowledge base answers with the markup itself. */
const MARKUP = '<img src=x onerror="window.pwned=true">';

let database: TestDatabase;
let service: TestService;
let receiver: TestHttpsServer;
let browser: Browser;
let widgetKey = '';
let closedKey = '';
let secret = '';
/** Every URL any page of this file asked for. */
const requested: string[] = [];
/** Every error any page of this file wrote to its console (a CSP violation is reported there). */
const consoleErrors: string[] = [];

/** The element focused inside the widget's shadow root, as `tag.class`, or what has the page's focus otherwise. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const active = document.querySelector('botlink-chat')?.shadowRoot?.activeElement;
    return active ? `${active.tagName.toLowerCase()}.${active.className}` : null;
  });

async function openPage(context: BrowserContext, key = widgetKey): Promise<Page> {
  const page = await context.newPage();
  page.on('request', (request) => requested.push(request.url()));
  collectConsoleErrors(page, consoleErrors);
  // A query string (the widget key here; a sign-in token elsewhere) and a fragment, which must not be sent as page_url.
  const res = await page.goto(`${service.url}/widget/demo?key=${key}#access_token=not-for-botlink`);
  expect(res?.status()).toBe(200);
  await page.getByRole('button', { name: 'Chat with us' }).waitFor();
  return page;
}

beforeAll(async () => {
  database = await openTestDatabase('pglite');
  receiver = await startHttpsServer((_req, res) => sendJson(res, 200, { ok: true }));
  [service, browser] = await Promise.all([startTestService(database, { PUBLIC_URL: 'https://botlink.example' }, { webhooks: { pollIntervalMs: 100 } }), launchBrowser()]);
  const ws = await seedWorkspace(service);
  const syncKey = (await service.api('POST', '/v1/keys/sync', { token: ws.owner })).body.key as string;
  const pages = {
    shipping: { title: 'Shipping', language: 'en', body: SHIPPING },
    payment: { title: 'Payment', language: 'en', body: `You can pay by card or by bank transfer. ${MARKUP}` },
  };
  for (const [id, page] of Object.entries(pages)) {
    const put = await service.api('PUT', `/v1/sync/pages/${id}`, { headers: { 'x-sync-key': syncKey }, body: page });
    expect(put.status).toBe(201);
  }
  widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key;
  // The demo page is served by the service itself, and Chromium sends Origin on every POST, same-origin included:
  // the service's own origin must be allowed like a shop's (docs/webchat.md, "The demo page").
  const origins = await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [service.url] } });
  expect(origins.status).toBe(200);
  const hook = await service.api('PUT', '/v1/webhooks/new_lead', { token: ws.owner, body: { url: `${receiver.origin}/hooks/lead` } });
  expect(hook.status).toBe(200);
  secret = hook.body.secret;

  // A second workspace that allowed no origin: its widget is refused (403) on the demo page.
  const closed = await seedWorkspace(service, 'Closed');
  closedKey = (await service.api('GET', '/v1/keys/widget', { token: closed.owner })).body.key;
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  await receiver?.close();
  await database?.close();
});

describe('the widget on the demo shop page', () => {
  let context: BrowserContext;
  let page: Page;
  let conversationId = '';

  beforeAll(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await openPage(context);
  });
  afterAll(async () => {
    await context.close();
  });

  it('the demo page carries the strict Content-Security-Policy', async () => {
    const res = await page.request.get(`${service.url}/widget/demo?key=${widgetKey}`);
    expect(res.headers()['content-security-policy']).toBe(DEMO_CSP);
  });

  it('opens from the keyboard, with the focus in the message box', async () => {
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('button.launcher');
    // A visible focus ring, and none of the shop's rude button styles (demo.css) got in.
    const launcher = await page.evaluate(() => {
      const style = getComputedStyle(document.querySelector('botlink-chat')!.shadowRoot!.activeElement!);
      return { outline: style.outlineStyle, background: style.backgroundColor, font: style.fontFamily };
    });
    expect(launcher).toMatchObject({ outline: 'solid', background: 'rgb(11, 83, 148)' });
    expect(launcher.font).not.toContain('Comic');
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page)).toBe('textarea.');
    expect(await page.getByRole('dialog', { name: 'Chat with us' }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Chat with us' }).getAttribute('aria-expanded')).toBe('true');
  });

  it('sends a message and shows the knowledge-base reply in the live log', async () => {
    await page.getByLabel('Your message').fill('How fast do you ship my order?');
    await page.keyboard.press('Enter');
    const reply = page.locator('.msg.bot', { hasText: 'two working days' });
    await reply.waitFor();
    expect(await page.getByRole('log').getAttribute('aria-live')).toBe('polite');
    expect(await page.locator('.msg.visitor').allTextContents()).toEqual(['You: How fast do you ship my order?']);
    conversationId = await page.evaluate(() => {
      const storage = window.localStorage;
      for (let i = 0; i < storage.length; i++) {
        const key = storage.key(i) ?? '';
        if (key.startsWith('botlink-chat:')) return JSON.parse(storage.getItem(key) ?? '{}').conversationId as string;
      }
      return '';
    });
    expect(conversationId).toMatch(/^[0-9a-f-]{36}$/);
    const newChat = await database.db.selectFrom('webhook_events').select('payload').where('event', '=', 'new_chat').executeTakeFirstOrThrow();
    expect(newChat.payload).toMatchObject({ conversation_id: conversationId, page_url: `${service.url}/widget/demo` });
    expect(JSON.stringify(newChat.payload)).not.toContain(widgetKey);
    await docScreenshot(page, 'widget-desktop.png');
  });

  it('Escape closes the panel and gives the focus back to the launcher', async () => {
    await page.getByLabel('Your message').focus();
    await page.keyboard.press('Escape');
    expect(await page.getByRole('dialog').isHidden()).toBe(true);
    expect(await focused(page)).toBe('button.launcher');
  });

  it('keeps the conversation across a page load', async () => {
    await page.reload();
    await page.getByRole('button', { name: 'Chat with us' }).click();
    await page.locator('.msg.bot', { hasText: 'two working days' }).waitFor();
    expect(await page.locator('.msg.visitor').allTextContents()).toEqual(['You: How fast do you ship my order?']);
    // And it continues the same conversation on the server.
    await page.getByLabel('Your message').fill('Is shipping free?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    // The greeting, the first reply, this reply.
    await expect.poll(() => page.locator('.msg.bot').count()).toBe(3);
    expect(await page.locator('.msg.bot').last().textContent()).toContain('free above 50 euro');
    const conversations = await database.db.selectFrom('webchat_conversations').select('id').execute();
    expect(conversations.map((c) => c.id)).toEqual([conversationId]);

    // A panel left open stays open on the next page, without taking the focus from it.
    await page.reload();
    await page.getByRole('dialog').waitFor();
    expect(await page.locator('.msg.visitor').count()).toBe(2);
    expect(await focused(page)).toBeNull();
  });

  it('shows a reply that contains markup as text: no element is made from it', async () => {
    await page.getByLabel('Your message').fill('Can I pay by bank transfer?');
    await page.keyboard.press('Enter');
    const reply = page.locator('.msg.bot', { hasText: MARKUP });
    await reply.waitFor();
    expect(await reply.isVisible()).toBe(true);
    expect(await page.evaluate(() => document.querySelector('botlink-chat')?.shadowRoot?.querySelectorAll('img').length)).toBe(0);
    expect(await page.evaluate(() => document.querySelectorAll('img').length)).toBe(0);
    expect(await page.evaluate(() => window.pwned)).toBeUndefined();
  });

  it('talk to the team answers that the team replies here and offers the lead form; the lead arrives as a signed new_lead webhook', async () => {
    await page.getByRole('button', { name: 'Talk to the team' }).click();
    await page.locator('.msg.bot', { hasText: 'they will reply to you here when they are back.' }).waitFor();
    await expect.poll(() => focused(page)).toMatch(/^input\./);
    await page.getByLabel('Name').fill('Jan Jansen');
    await page.getByLabel('Email').fill('jan@example.nl');
    await page.getByLabel('Phone (optional)').fill('+31 6 1234 5678');
    await docScreenshot(page, 'widget-lead.png');
    await page.getByRole('button', { name: 'Send my details' }).click();
    await page.locator('.msg.notice', { hasText: 'The team has your details' }).waitFor();

    const delivery = await until(() => receiver.requests.find((r) => r.url === '/hooks/lead'), 10_000, 'the new_lead webhook');
    const payload = verify(secret, received(delivery)) as Record<string, unknown>;
    expect(payload).toMatchObject({ event: 'new_lead', conversation_id: conversationId, name: 'Jan Jansen', email: 'jan@example.nl', phone: '+31 6 1234 5678' });
  });
});

describe('on a phone-sized screen', () => {
  it('the open panel fills the screen and is usable', async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true });
    try {
      const page = await openPage(context);
      await page.getByRole('button', { name: 'Chat with us' }).click();
      const panel = await page.getByRole('dialog').boundingBox();
      expect(panel).toMatchObject({ x: 0, y: 0, width: 375, height: 667 });
      await page.getByLabel('Your message').fill('How fast do you ship?');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await page.locator('.msg.bot', { hasText: 'two working days' }).waitFor();
      for (const name of ['Send', 'Close chat', 'Talk to the team']) {
        const box = await page.getByRole('button', { name, exact: true }).first().boundingBox();
        expect(box, name).not.toBeNull();
        expect(box!.x >= 0 && box!.y >= 0 && box!.x + box!.width <= 375 && box!.y + box!.height <= 667, name).toBe(true);
      }
      await docScreenshot(page, 'widget-phone.png');
      // The panel covers the page, so it is modal: Tab cycles through its controls and never reaches the page behind.
      expect(await page.getByRole('dialog').getAttribute('aria-modal')).toBe('true');
      await page.getByLabel('Your message').focus();
      const seen = new Set<string | null>();
      for (let i = 0; i < 8; i++) {
        await page.keyboard.press('Tab');
        seen.add(await focused(page));
      }
      expect(seen).not.toContain(null);
      expect(seen).not.toContain('button.launcher');
      expect(seen).toContain('button.close');
    } finally {
      await context.close();
    }
  });
});

describe('errors are shown as sentences', () => {
  it('an origin the workspace did not allow (403)', async () => {
    const context = await browser.newContext();
    try {
      const page = await openPage(context, closedKey);
      await page.getByRole('button', { name: 'Chat with us' }).click();
      await page.getByLabel('Your message').fill('Hello?');
      await page.keyboard.press('Enter');
      await page.locator('.msg.notice', { hasText: `This chat is not switched on for ${service.url} yet.` }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('too many requests (429) names the wait from Retry-After', async () => {
    const context = await browser.newContext();
    try {
      const page = await openPage(context);
      await page.route('**/v1/webchat/conversations', (route) =>
        route.fulfill({ status: 429, headers: { 'retry-after': '7' }, contentType: 'application/json', body: JSON.stringify({ error: { code: 'rate_limited', message: 'Too many requests' } }) }),
      );
      await page.getByRole('button', { name: 'Chat with us' }).click();
      await page.getByLabel('Your message').fill('Hello?');
      await page.keyboard.press('Enter');
      await page.locator('.msg.notice', { hasText: 'Too many messages at once. Please try again in 7 seconds.' }).waitFor();
      // The message was not sent: it is back in the box, not in the transcript.
      expect(await page.getByLabel('Your message').inputValue()).toBe('Hello?');
      expect(await page.locator('.msg.visitor').count()).toBe(0);
      await docScreenshot(page, 'widget-error.png');
    } finally {
      await context.close();
    }
  });
});

describe('every page of this file', () => {
  it('asked nothing of any other origin, and broke no rule of the Content-Security-Policy', () => {
    expect(requested.length).toBeGreaterThan(0);
    expect(requested.filter((url) => !url.startsWith(`${service.url}/`))).toEqual([]);
    expect(consoleErrors.filter((text) => /content security policy/i.test(text))).toEqual([]);
  });
});
