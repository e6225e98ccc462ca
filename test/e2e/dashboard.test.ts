/**
 * The dashboard in a real browser (Debian's Chromium, headless) against the real service: signing in and out, the
 * integration settings against a loopback integrator that checks our signature, the live conversation list and one
 * conversation, what an agent sees, an endpoint that goes down and comes back (its health, notifications and webhook
 * events), and the page's own guarantees (CSP, no other origin, customer text never markup).
 * Screenshots of each screen go to docs/screenshots/dashboard-*.png with `npm run screenshots`.
 */
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP } from '../../src/http/pages/dashboard.ts';
import { MAX_PASSWORD_CHARS, MIN_PASSWORD_CHARS } from '../../src/limits.ts';
import { docScreenshot, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { refuseUnsigned, sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { BRIDGE_TOKEN, Caller, NUMBER } from '../helpers/phone-caller.ts';
import { seedWorkspace, startTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/service.ts';

const HOSTILE = '<img src=x onerror="window.__pwned=1">';

describe('the dashboard web app', () => {
  let database: TestDatabase;
  let service: TestService;
  let integrator: TestHttpsServer;
  /** An OpenAI-compatible model that streams: each completion is written by the test, piece by piece. */
  let llm: TestHttpsServer;
  /** Where webhooks are delivered. */
  let receiver: TestHttpsServer;
  const completions: { write(content: string): void; end(): void }[] = [];
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let browser: Browser;
  /** Every URL any page asked for, and every CSP complaint in any console. */
  const requested: string[] = [];
  const cspViolations: string[] = [];
  /** The key the integrator verifies with: read from the page, where it is shown once. */
  let integratorKey = '';

  beforeAll(async () => {
    [database, integrator, llm, receiver, browser] = await Promise.all([openTestDatabase('pglite'), startHttpsServer(), startHttpsServer(), startHttpsServer(), launchBrowser()]);
    llm.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      completions.push({
        write: (content) => res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`),
        end: () => res.end('data: [DONE]\n\n'),
      });
    });
    service = await startTestService(database, { BRIDGE_TOKEN, LLM_BASE_URL: `${llm.origin}/v1`, LLM_MODEL: 'test-model' });
    ws = await seedWorkspace(service);
    integrator.handle((req, res, body) => {
      if (refuseUnsigned(integratorKey, req, res, body)) return;
      const message = String((JSON.parse(body.toString()) as { message?: unknown }).message ?? '');
      // The phone's question is left to the built-in AI.
      if (message.includes('open')) {
        res.statusCode = 503;
        res.end();
        return;
      }
      const reply = message.includes('picture') ? `Here it is: ${HOSTILE}` : 'Your order 1234 ships tomorrow.';
      sendJson(res, 200, { reply, handled: true });
    });
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await integrator?.close();
    await llm?.close();
    await receiver?.close();
    await database?.close();
  });

  const open = (viewport?: { width: number; height: number }) => openBrowserPage(browser, { viewport, requested, cspViolations });

  /** A screen's link in the navigation. */
  const menu = (page: Page, name: string) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true });

  async function shot(page: Page, name: string): Promise<void> {
    await docScreenshot(page, `dashboard-${name}.png`, { fullPage: true });
  }

  describe('the page', () => {
    it('is served with a strict Content-Security-Policy, no referrer and nosniff; / redirects to it', async () => {
      const page = await fetch(`${service.url}/dashboard/conversations`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
      expect(DASHBOARD_CSP).toContain("script-src 'self'");
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await page.text()).not.toMatch(/<script>|style=|<style/);

      const invite = await fetch(`${service.url}/dashboard/invite`);
      expect(invite.headers.get('content-type')).toMatch(/^text\/html/);

      const root = await fetch(`${service.url}/`, { redirect: 'manual' });
      expect(root.status).toBe(302);
      expect(root.headers.get('location')).toBe('/dashboard');

      const script = await fetch(`${service.url}/dashboard/assets/app.js`);
      expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(script.headers.get('x-content-type-options')).toBe('nosniff');
      const etag = script.headers.get('etag')!;
      expect((await fetch(`${service.url}/dashboard/assets/app.js`, { headers: { 'if-none-match': etag } })).status).toBe(304);
      expect((await fetch(`${service.url}/dashboard/assets/styles.css`)).headers.get('content-type')).toMatch(/^text\/css/);
      expect((await fetch(`${service.url}/dashboard/assets/nothing.js`)).status).toBe(404);
    });
  });

  describe('an owner', () => {
    let context: BrowserContext;
    let page: Page;
    beforeAll(async () => {
      ({ context, page } = await open());
    });
    afterAll(async () => {
      await context.close();
    });

    it('signs in with a token and sees every screen in the navigation', async () => {
      await signInWithToken(page, service.url, ws.owner, () => shot(page, 'sign-in'));
      const nav = page.getByRole('navigation', { name: 'Dashboard' });
      for (const name of ['Overview', 'Conversations', 'Team', 'Integration', 'Knowledge', 'Channels', 'Webhooks', 'Users']) await expect(nav.getByRole('link', { name }).count()).resolves.toBe(1);
      // An owner starts on the Overview; the conversations are one link away.
      await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
      await menu(page, 'Conversations').click();
      await page.getByText('No conversations yet').waitFor();
    });

    it('sees the refusal of a non-public endpoint beside the form', async () => {
      await menu(page, 'Integration').click();
      await page.getByText('Not connected yet').waitFor();
      await page.getByLabel('Endpoint URL').fill('https://10.0.0.8/botlink/channel');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      const alert = page.getByRole('alert').filter({ hasText: /private/i });
      await alert.waitFor();
      await expect(page.getByLabel('Endpoint URL').getAttribute('aria-invalid')).resolves.toBe('true');
    });

    it('sets the endpoint, gets the generated key once, and the test shows the reply and the latency', async () => {
      await page.getByLabel('Endpoint URL').fill(`${integrator.origin}/botlink/channel`);
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      const key = page.getByLabel('New key');
      await key.waitFor();
      integratorKey = await key.inputValue();
      expect(integratorKey).toHaveLength(64);
      await expect(page.getByText('Shown once.').isVisible()).resolves.toBe(true);

      await page.getByRole('button', { name: 'Test', exact: true }).click();
      const result = page.getByTestId('test-result');
      await result.waitFor();
      await expect(result.getByTestId('reply').textContent()).resolves.toBe('Your order 1234 ships tomorrow.');
      await expect(result.getByTestId('latency').textContent()).resolves.toMatch(/^\d+ ms$/);
      await expect(result.getByText('Answered', { exact: true }).isVisible()).resolves.toBe(true);

      // This integrator serves no tools manifest: the tools test says so, with the reason.
      await page.getByRole('button', { name: 'Test the tools' }).click();
      const tools = page.getByTestId('tools-result');
      await tools.getByText('Manifest unavailable').waitFor();
      expect((await tools.textContent())!.length).toBeGreaterThan('Manifest unavailable'.length);
      await shot(page, 'integration');
    });

    it('does not see the key again after a reload', async () => {
      await page.reload();
      await page.getByTestId('endpoint').waitFor();
      expect(await page.getByTestId('shown-once').count()).toBe(0);
      expect(await page.content()).not.toContain(integratorKey);
      await expect(page.getByText(integratorKey.slice(-4), { exact: false }).isVisible()).resolves.toBe(true);
    });

    it('watches a conversation appear in the live list, with the source and timings of each turn', async () => {
      await menu(page, 'Conversations').click();
      await page.getByText('No conversations yet').waitFor();
      const externalId = 'wa-31612345678';
      const customerPhone = '+31612345678';
      await service.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'whatsapp', externalId, customerPhone, text: 'Where is my order 1234?', language: 'en' });
      // No reload: the list polls.
      const link = page.getByRole('link', { name: /\+31612345678/ });
      await link.waitFor({ timeout: 10_000 });
      await expect(link.textContent()).resolves.toContain('WhatsApp');
      await shot(page, 'conversations');

      await link.click();
      const first = page.locator('li.turn').first();
      await first.waitFor();
      await expect(first.getByTestId('source').textContent()).resolves.toBe('Reply from: Your system');
      await expect(first.getByTestId('timings').textContent()).resolves.toMatch(/Bot Link: connect and first byte: \d+ ms/);
      await page.getByText('Live: new turns appear as they happen.').waitFor();

      // A turn while the conversation is open arrives through its event stream; its hostile reply stays text.
      await service.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'whatsapp', externalId, customerPhone, text: 'Send me a picture', language: 'en' });
      const second = page.locator('li.turn').nth(1);
      await second.getByText('Turn 2').waitFor({ timeout: 10_000 });
      await expect(second.locator('.reply').textContent()).resolves.toContain(HOSTILE);
      expect(await page.locator('main img').count()).toBe(0);
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      await shot(page, 'conversation');
    });

    it('says who is available once the owner sets it, and reads the notifications, marking one done', async () => {
      await service.database.db
        .insertInto('notifications')
        .values({ id: randomUUID(), workspace_id: ws.workspaceId, session_id: null, kind: 'forward', message: 'Can someone call me back about order 77?', read_at: null })
        .execute();
      // Each person sets their own status in the header (the team switch is gone from the Team screen).
      await page.getByTestId('presence').selectOption('available');
      await menu(page, 'Team').click();
      await page.getByText('Now: a customer who asks for a person is told a colleague will reply.').waitFor();
      await page.getByText('Can someone call me back about order 77?').waitFor();
      await shot(page, 'team');
      await page.getByRole('button', { name: 'Mark done' }).click();
      await page.getByText('Done just now').waitFor();
      const notes = (await service.api('GET', '/v1/notifications', { token: ws.owner })).body.notifications as { message: string; read_at: string | null }[];
      expect(notes.find((n) => n.message.includes('order 77'))?.read_at).toMatch(/^\d{4}-/);
    });

    it('adds a user and sees their invite link once, never a token of theirs, then removes them', async () => {
      await menu(page, 'Users').click();
      await page.getByText('agent@acme.example', { exact: true }).waitFor();
      await page.getByLabel('Email').fill('new.agent@acme.example');
      await page.getByRole('button', { name: 'Add user' }).click();
      const first = await page.getByLabel('Invite link', { exact: true }).inputValue();
      expect(first).toMatch(/\/dashboard\/invite#bli_/);
      expect(await page.getByLabel('Token', { exact: true }).count()).toBe(0);
      // A new invite link for them (a lost link): shown once, and it sets a password; the first link stops working.
      await page.getByRole('button', { name: 'New invite link for new.agent@acme.example' }).click();
      const link = await page.getByRole('listitem').filter({ hasText: 'new.agent@acme.example' }).getByLabel('Invite link', { exact: true }).inputValue();
      expect(link).toMatch(/\/dashboard\/invite#bli_/);
      expect((await service.api('POST', '/v1/auth/password', { body: { invite: new URL(first).hash.slice(1), password: 'a long enough password' } })).status).toBe(410);
      const set = await service.api('POST', '/v1/auth/password', { body: { invite: new URL(link).hash.slice(1), password: 'a long enough password' } });
      expect(set.status).toBe(200);
      const added = set.body.token as string;
      expect((await service.api('GET', '/v1/sessions', { token: added })).status).toBe(200);
      await shot(page, 'users');
      page.once('dialog', (d) => void d.accept());
      await page.getByRole('button', { name: 'Remove new.agent@acme.example' }).click();
      await page.getByRole('button', { name: 'Remove new.agent@acme.example' }).waitFor({ state: 'detached' });
      expect((await service.api('GET', '/v1/sessions', { token: added })).status).toBe(401);
    });

    it('shows the knowledge base, the widget snippet and the channel and webhook settings', async () => {
      await menu(page, 'Knowledge').click();
      // The service's public address (PUBLIC_URL, here the default on this computer), the same line as on Channels.
      const snippet = await page.getByLabel('Line for your website', { exact: true }).inputValue();
      expect(snippet).toMatch(/^<script src="http:\/\/localhost:\d+\/widget.js" data-key="[^"]+" async><\/script>$/);
      expect(await page.getByTestId('local-address').textContent()).toMatch(/^Works on this computer only\. The line for your website starts with http:\/\/localhost:\d+/);
      await page.getByText('Nothing synced yet.', { exact: false }).waitFor();
      await page.getByRole('button', { name: 'Make a new sync key' }).click();
      await page.getByLabel('New sync key').waitFor();
      // Synced pages: listed with their count and the last sync, and searchable.
      const syncKey = await page.getByLabel('New sync key').inputValue();
      for (const [id, title] of [['shipping', 'Shipping times'], ['returns', 'Returns and refunds']]) {
        expect((await service.api('PUT', `/v1/sync/pages/${id}`, { headers: { 'x-sync-key': syncKey }, body: { title, body: `${title}: all you need to know.` } })).status).toBe(201);
      }
      await menu(page, 'Channels').click();
      await menu(page, 'Knowledge').click();
      await page.getByText(/^2 synced; last synced /).waitFor();
      await page.getByLabel('Search the synced pages and products').fill('refund');
      await page.getByText(/^2 synced; last synced .*; 1 match\.$/).waitFor();
      expect(await page.getByText('Shipping times', { exact: true }).count()).toBe(0);
      await expect(page.getByText('Returns and refunds', { exact: true }).isVisible()).resolves.toBe(true);
      await shot(page, 'knowledge');

      await menu(page, 'Channels').click();
      await page.getByLabel('Phone numbers, one per line').fill('+31201234567');
      await page.getByLabel('Time zone').selectOption('Europe/Amsterdam');
      await page.getByLabel('Monday').fill('9:00-12:30, 13:30-17:30');
      await page.getByLabel('Saturday').fill('10:00-14:00');
      await page.getByRole('button', { name: 'Save phone settings' }).click();
      await page.getByText(/^Saved at /).waitFor();
      expect((await service.api('GET', '/v1/phone', { token: ws.admin })).body.team_hours).toEqual({
        time_zone: 'Europe/Amsterdam',
        week: { mon: [['09:00', '12:30'], ['13:30', '17:30']], sat: [['10:00', '14:00']] },
      });
      await page.getByText('Not connected.', { exact: false }).waitFor();
      await shot(page, 'channels');

      await menu(page, 'Webhooks').click();
      await page.getByText('No deliveries yet.', { exact: false }).waitFor();
      const newChat = page.getByRole('form', { name: 'New chat webhook' });
      await newChat.getByLabel('URL').fill(`${receiver.origin}/hooks/new-chat`);
      await newChat.getByRole('button', { name: 'Save' }).click();
      await expect(newChat.getByLabel('Signing secret').inputValue()).resolves.toMatch(/^whsec_/);
      await newChat.getByRole('button', { name: 'Test' }).click();
      await newChat.getByText(/^Test succeeded: HTTP 200/).waitFor();
      const log = page.getByRole('region', { name: 'Deliveries' });
      await log.getByText(/^test · succeeded · 1 attempts/).waitFor();
      await log.getByRole('button', { name: 'Retry now' }).click();
      await log.getByText(/^test · succeeded · 2 attempts/).waitFor();
      expect(receiver.requests.filter((r) => r.url === '/hooks/new-chat')).toHaveLength(2);
      await shot(page, 'webhooks');
    });

    it('shows a streamed phone reply sentence by sentence, then the turn with the AI as its source', async () => {
      await menu(page, 'Conversations').click();
      const caller = await Caller.connect(service);
      try {
        caller.setup(`CA-dashboard-${Date.now()}`, NUMBER, '+31687654321');
        const link = page.getByRole('link', { name: /\+31687654321/ });
        await link.waitFor({ timeout: 10_000 });
        await link.click();
        await page.getByText('Live: new turns appear as they happen.').waitFor();
        caller.say('When are you open?');
        const deadline = Date.now() + 5_000;
        while (completions.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        const completion = completions.shift()!;
        completion.write('We are open until 17:00 on weekdays. On ');
        // The first sentence is on the page while the model is still writing the rest.
        const pending = page.locator('li.turn.pending');
        await pending.locator('.piece').getByText('We are open until 17:00 on weekdays.').waitFor();
        await shot(page, 'streaming');
        completion.write('Saturday we close at 12:00.');
        completion.end();
        const turn = page.locator('li.turn:not(.pending)').first();
        await turn.getByTestId('source').getByText('Reply from: AI').waitFor({ timeout: 10_000 });
        const timings = await turn.getByTestId('timings').textContent();
        expect(timings).toMatch(/Knowledge search: \d+ ms/);
        expect(timings).toMatch(/AI round 1: \d+ ms/);
        await expect(turn.locator('.reply').textContent()).resolves.toContain('On Saturday we close at 12:00.');
        await shot(page, 'phone-call');
      } finally {
        caller.ws.terminate();
      }
    });

    it('filters the list by channel and status', async () => {
      await menu(page, 'Conversations').click();
      await page.getByRole('link', { name: /\+31612345678/ }).waitFor();
      await page.getByLabel('Channel').selectOption('phone');
      await page.getByRole('link', { name: /\+31612345678/ }).waitFor({ state: 'detached' });
      // The filtered list is drawn after the old one is cleared: wait for it before counting.
      await page.getByRole('link', { name: /\+31687654321/ }).waitFor();
      await expect(page.getByRole('link', { name: /\+31687654321/ }).count()).resolves.toBe(1);
      expect(new URL(page.url()).search).toBe('?channel=phone');
      await page.getByLabel('Channel').selectOption('webchat');
      await page.getByText('No conversation matches these filters.', { exact: false }).waitFor();
      // The call has hung up: its conversation is ended, the WhatsApp one is still active.
      await page.getByLabel('Channel').selectOption('');
      await page.getByLabel('Status', { exact: true }).selectOption('active');
      await page.getByRole('link', { name: /\+31687654321/ }).waitFor({ state: 'detached' });
      await page.getByRole('link', { name: /\+31612345678/ }).waitFor();
      await expect(page.getByRole('link', { name: /\+31612345678/ }).count()).resolves.toBe(1);
      await page.getByLabel('Status', { exact: true }).selectOption('');
    });

    it('is usable 375 px wide: nothing scrolls sideways', async () => {
      await page.setViewportSize({ width: 375, height: 800 });
      await menu(page, 'Conversations').click();
      await page.getByRole('link', { name: /\+31612345678/ }).waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      await shot(page, 'mobile');
      for (const screen of ['Team', 'Integration', 'Knowledge', 'Channels', 'Webhooks', 'Users']) {
        await menu(page, screen).click();
        await page.getByRole('heading', { name: screen, level: 1 }).waitFor();
        await page.locator('.loading').first().waitFor({ state: 'detached' });
        expect(await page.evaluate('document.documentElement.scrollWidth'), screen).toBeLessThanOrEqual(375);
      }
      await shot(page, 'mobile-users');
      await page.setViewportSize({ width: 1100, height: 900 });
    });

    it('signs out: the token is revoked (the API answers 401) and the sign-in page shows', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in to Botlink' }).waitFor();
      expect((await service.api('GET', '/v1/sessions', { token: ws.owner })).status).toBe(401);
      expect(await page.evaluate('sessionStorage.length')).toBe(0);
    });
  });

  describe('an agent', () => {
    it('sees Inbox, Conversations, Team and Knowledge only; a settings address shows nothing of them', async () => {
      const { context, page } = await open();
      const before = requested.length;
      await signInWithToken(page, service.url, ws.agent);
      const nav = page.getByRole('navigation', { name: 'Dashboard' });
      expect(await nav.getByRole('link').allTextContents()).toEqual(['Overview', 'Inbox', 'Conversations', 'Team', 'Saved replies', 'Knowledge']);
      await shot(page, 'agent');
      // Agents set their own status in the header; the Team screen shows who is available (presence.js, team.js).
      const status = page.getByLabel('Your status');
      for (let i = 0; i < 100 && !(await status.isEnabled()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      await status.selectOption('available');
      await page.getByText('Your status is Available.').waitFor({ state: 'attached' });
      expect((await service.api('GET', '/v1/team', { token: ws.admin })).body.available).toBe(true);
      await menu(page, 'Team').click();
      await page.getByTestId('team-presence').getByText('Agent: Available').waitFor();
      // Within the team hours an earlier test set, or outside them: the screen says which, in customers' terms.
      await page.getByText(/^Now: (a customer who asks for a person is told a colleague will reply|outside the team hours)/).waitFor();

      await page.goto(`${service.url}/dashboard/integration`);
      await page.getByRole('heading', { name: 'Nothing here' }).waitFor();
      expect(await page.getByLabel('Endpoint URL').count()).toBe(0);
      // The settings were not even asked for.
      expect(requested.slice(before).filter((u) => new URL(u).pathname.startsWith('/v1/integration'))).toEqual([]);

      // Removed by an admin while signed in: the next poll's 401 brings the sign-in page back, saying why.
      await menu(page, 'Conversations').click();
      expect((await service.api('DELETE', `/v1/users/${ws.agentId}`, { token: ws.admin })).status).toBe(204);
      await page.getByRole('heading', { name: 'Sign in to Botlink' }).waitFor({ timeout: 10_000 });
      await page.getByText(/^You were signed out: /).waitFor();
      await context.close();
    });
  });

  describe('the email and password form, against the sign-in contract', () => {
    // /v1/auth/login is built apart from this page; its contract is played here by the browser's own routing.
    it('shows a rate limit with its wait, then signs in with the answer: token, user and workspace', async () => {
      const { context, page } = await open();
      const bodies: unknown[] = [];
      let calls = 0;
      await page.route('**/v1/auth/login', async (route) => {
        bodies.push(route.request().postDataJSON());
        calls += 1;
        if (calls === 1) {
          await route.fulfill({ status: 429, headers: { 'retry-after': '30' }, json: { error: { code: 'rate_limited', message: 'Too many sign-in attempts.' } } });
        } else {
          await route.fulfill({ status: 200, json: { token: ws.admin, user: { id: ws.adminId, email: 'admin@acme.example', role: 'admin' }, workspace: { id: ws.workspaceId, name: 'Acme' } } });
        }
      });
      await page.goto(`${service.url}/dashboard`);
      await page.getByLabel('Email').fill('admin@acme.example');
      await page.getByLabel('Password').fill('s3cret-passw0rd');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').getByText('Too many sign-in attempts. Try again in 30 seconds.').waitFor();
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: /^(Overview|Conversations)$/, level: 1 }).waitFor();
      await page.getByRole('banner').getByText('admin@acme.example').waitFor();
      await page.getByRole('banner').getByText('Acme', { exact: true }).waitFor();
      expect(bodies).toEqual([
        { email: 'admin@acme.example', password: 's3cret-passw0rd' },
        { email: 'admin@acme.example', password: 's3cret-passw0rd' },
      ]);
      await context.close();
    });
  });

  describe('the keyboard', () => {
    it('reaches the skip link first and the sign-in fields in order, with a visible focus', async () => {
      const { context, page } = await open();
      await page.goto(`${service.url}/dashboard`);
      await page.getByRole('heading', { name: 'Sign in to Botlink' }).waitFor();
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.name')).toBe('email');
      expect(await page.evaluate('getComputedStyle(document.activeElement).outlineStyle')).toBe('solid');
      await context.close();
    });
  });

  describe('an invite link', () => {
    it('asks for a password, takes the invite out of the address, and sends both to /v1/auth/password', async () => {
      const { context, page } = await open();
      const sent: unknown[] = [];
      page.on('request', (r) => {
        if (r.url().endsWith('/v1/auth/password')) sent.push(r.postDataJSON());
      });
      await page.goto(`${service.url}/dashboard/invite#inv_0123456789abcdef`);
      await page.getByRole('heading', { name: 'Set your password' }).waitFor();
      expect(new URL(page.url()).hash).toBe('');
      // The form asks what the server asks: MIN_PASSWORD_CHARS to MAX_PASSWORD_CHARS characters.
      const field = page.getByLabel('New password');
      expect([await field.getAttribute('minlength'), await field.getAttribute('maxlength')]).toEqual([String(MIN_PASSWORD_CHARS), String(MAX_PASSWORD_CHARS)]);
      await page.getByText(`${MIN_PASSWORD_CHARS} to ${MAX_PASSWORD_CHARS} characters.`).waitFor();
      const short = 'x'.repeat(MIN_PASSWORD_CHARS - 1);
      await field.fill(short);
      await page.getByLabel('The same password again').fill(short);
      await page.getByRole('button', { name: 'Set password and sign in' }).click();
      expect(await field.evaluate((el) => (el as unknown as { validity: { tooShort: boolean } }).validity.tooShort)).toBe(true);
      await page.getByLabel('New password').fill('correct horse battery');
      await page.getByLabel('The same password again').fill('correct horse battery');
      await shot(page, 'invite');
      await page.getByRole('button', { name: 'Set password and sign in' }).click();
      // Whatever the service answers here (the invite is made up), its message is shown and nobody is signed in.
      await page.getByRole('alert').filter({ hasText: /./ }).waitFor();
      expect(sent).toEqual([{ invite: 'inv_0123456789abcdef', password: 'correct horse battery' }]);
      expect(await page.evaluate('sessionStorage.length')).toBe(0);
      await context.close();
    });
  });

  describe('a newcomer, end to end with the real sign-in', () => {
    it('follows the invite link, sets a password, signs out, is refused a wrong password, and signs in with the right one', async () => {
      // A workspace of its own (earlier cases sign the seeded owner out, which revokes their token).
      const created = await service.api('POST', '/v1/admin/workspaces', { token: TEST_ADMIN_TOKEN, body: { name: 'Newco', owner_email: 'newcomer@acme.example' } });
      expect(created.status).toBe(201);
      const invite = created.body.owner.invite_url as string;
      expect(invite).toMatch(/\/dashboard\/invite#bli_/);
      const { context, page } = await open();
      // The link as the owner copies it: PUBLIC_URL is not this test server, so the same path and fragment here.
      await page.goto(`${service.url}${new URL(invite).pathname}${new URL(invite).hash}`);
      await page.getByLabel('New password').fill('correct horse battery');
      await page.getByLabel('The same password again').fill('correct horse battery');
      await page.getByRole('button', { name: 'Set password and sign in' }).click();
      await page.getByRole('navigation').getByRole('link', { name: 'Integration' }).waitFor();
      // The invite works once.
      expect((await service.api('POST', '/v1/auth/password', { body: { invite: new URL(invite).hash.slice(1), password: 'another good password' } })).status).toBe(410);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in to Botlink' }).waitFor();
      await page.getByLabel('Email').fill('newcomer@acme.example');
      await page.getByLabel('Password').fill('not the password');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await expect(page.getByRole('alert').filter({ hasText: 'The email or password is not right.' }).waitFor()).resolves.toBeUndefined();

      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('navigation').getByRole('link', { name: 'Integration' }).waitFor();
      const token = (await page.evaluate(() => Object.values(sessionStorage).find((v) => typeof v === 'string' && v.includes('blt_')))) as string | undefined;
      expect(token).toBeDefined();
      await context.close();
    });
  });

  describe('an owner whose endpoint goes down', () => {
    // A workspace of its own, so the other cases keep a healthy integrator. Its endpoint is a real loopback HTTPS
    // server that, while broken, drops every connection it gets: the service sees connection failures.
    let downco: Awaited<ReturnType<typeof seedWorkspace>>;
    let endpoint: TestHttpsServer;
    let broken = true;
    let context: BrowserContext;
    let page: Page;
    /** This browser's calls for the integration, with when they were made. */
    const reads: { at: number; url: string }[] = [];
    let leftAt = 0;
    const status = () => page.getByTestId('health-status');
    /** The number before `what` in the recent requests' text ('3 answers0 invalid answers…'). */
    const count = (text: string | null, what: string) => Number(new RegExp(`(\\d+) ${what}`).exec(text ?? '')?.[1] ?? NaN);
    /** The Test button of the Integration page, pressed and waited for (the health is read again after it). */
    async function pressTest(): Promise<void> {
      const form = page.getByRole('form', { name: 'Test the endpoint' });
      await form.getByRole('button', { name: 'Test', exact: true }).click();
      await form.locator('button[aria-busy="true"]').waitFor({ state: 'detached', timeout: 10_000 });
    }

    beforeAll(async () => {
      downco = await seedWorkspace(service, 'Downco');
      endpoint = await startHttpsServer((req, res) => {
        if (broken) req.socket.destroy();
        else sendJson(res, 200, { reply: 'We are back.', handled: true });
      });
      ({ context, page } = await open());
      context.on('request', (r) => {
        if (new URL(r.url()).pathname === '/v1/integration' && r.method() === 'GET') reads.push({ at: Date.now(), url: r.url() });
      });
      await signInWithToken(page, service.url, downco.owner);
    });
    afterAll(async () => {
      await context?.close();
      await endpoint?.close();
    });

    it('finds the endpoint events on the Webhooks page, each explained, and sets a URL for "Endpoint down"', async () => {
      await menu(page, 'Webhooks').click();
      const down = page.getByRole('form', { name: 'Endpoint down webhook' });
      const recovered = page.getByRole('form', { name: 'Endpoint recovered webhook' });
      await down.getByText('Your bot-link endpoint stopped answering', { exact: false }).waitFor();
      await recovered.getByText('Your bot-link endpoint answers again', { exact: false }).waitFor();
      await expect(page.getByRole('form', { name: 'New chat webhook' }).getByText('A visitor starts a conversation', { exact: false }).count()).resolves.toBe(1);
      await down.getByLabel('URL').fill(`${receiver.origin}/hooks/endpoint-down`);
      await down.getByRole('button', { name: 'Save' }).click();
      await expect(down.getByLabel('Signing secret').inputValue()).resolves.toMatch(/^whsec_/);
      expect((await service.api('GET', '/v1/webhooks', { token: downco.owner })).body.webhooks.map((w: { event: string }) => w.event)).toEqual(['endpoint_down']);
    });

    it('sees "Down" with the problem on the Integration page after three failed requests, said in a live region', async () => {
      await menu(page, 'Integration').click();
      await page.getByText('Not connected yet').waitFor();
      await page.getByLabel('Endpoint URL').fill(`${endpoint.origin}/botlink/channel`);
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByLabel('New key').waitFor();
      // Nothing was sent to it yet: not "Healthy", which it has not shown.
      await status().getByText('Not contacted yet', { exact: true }).waitFor();
      await expect(status().getAttribute('role')).resolves.toBe('status');

      // Three failed channel requests in a row take it down (src/botlink/endpoint-health.ts).
      for (let i = 0; i < 3; i++) await pressTest();
      await expect(page.getByTestId('test-result').getByText('No answer', { exact: true }).isVisible()).resolves.toBe(true);
      await status().getByText(/^Down since \d{1,2}[:.]\d{2}/).waitFor();
      const said = (await status().innerText()).replace(/\s+/g, ' ');
      expect(said).toMatch(/Down since \d{1,2}[:.]\d{2}( [AP]M)?: customers are answered by the built-in AI without waiting for your endpoint; we keep trying it every 15 s\.$/);
      // The rule, in one sentence, from the service's own numbers.
      await expect(page.getByTestId('health-rule').textContent()).resolves.toBe(
        "We wait the full 3.5 s on the phone and 6 s on WhatsApp for your endpoint's answer, unless it failed 3 times in a row, each within a minute of the last; then we stop waiting and try it every 15 s until it answers again.",
      );
      // The colour is not the only sign: the words say it, and the icon is not read out twice.
      await expect(status().locator('.health-icon').getAttribute('aria-hidden')).resolves.toBe('true');
      // The problem in words, with what to do; the engine's words folded away for the developer.
      await expect(page.getByTestId('health-problem').textContent()).resolves.toMatch(/^Botlink could not connect to your system at this address\. Check that it is running/);
      await expect(page.getByTestId('health-problem').locator('details code').textContent()).resolves.toMatch(/^connection/);
      // The service's own probe of a down endpoint may already have failed once more.
      expect(count(await page.getByTestId('health-recent').textContent(), 'connection failures')).toBeGreaterThanOrEqual(3);
      await expect(page.getByTestId('health-p99').textContent()).resolves.toBe('No answer lately');
      const health = (await service.api('GET', '/v1/integration', { token: downco.owner })).body.health;
      expect(health).toMatchObject({ state: 'down', wait_ms: { phone: 0, whatsapp: 0 } });
      expect(health.consecutive_failures).toBeGreaterThanOrEqual(3);
      await shot(page, 'integration-down');

      // The webhook set above was called, once, with the problem.
      const deadline = Date.now() + 10_000;
      while (!receiver.requests.some((r) => r.url === '/hooks/endpoint-down') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const hooks = receiver.requests.filter((r) => r.url === '/hooks/endpoint-down').map((r) => JSON.parse(r.body.toString()) as Record<string, unknown>);
      expect(hooks).toHaveLength(1);
      expect(hooks[0]).toMatchObject({ event: 'endpoint_down', endpoint_url: `${endpoint.origin}/botlink/channel`, failures: 3 });

      await page.setViewportSize({ width: 375, height: 800 });
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      await shot(page, 'mobile-integration-down');
      await page.setViewportSize({ width: 1100, height: 900 });
    });

    it('reads "Endpoint down" on the Team page, with a way to the health and no conversation link', async () => {
      await menu(page, 'Team').click();
      const note = page.getByRole('listitem').filter({ hasText: 'Endpoint down' });
      await note.waitFor();
      await expect(note.textContent()).resolves.toContain(`Your endpoint ${endpoint.origin}/botlink/channel stopped answering (connection`);
      expect(await note.getByRole('link', { name: 'Open the conversation' }).count()).toBe(0);
      await expect(note.getByRole('link', { name: 'See the endpoint’s health' }).getAttribute('href')).resolves.toBe('/dashboard/integration');
      await shot(page, 'team-endpoint-down');
    });

    it('sees "Recovering" once the endpoint answers, then "Healthy" without a reload (the page reads it again); the Team page says so', async () => {
      await menu(page, 'Integration').click();
      await status().getByText(/^Down since/).waitFor();
      // Only now: the service probes a down endpoint every 15 s, and a probe answered before the page showed
      // "Down since" would have made it "Recovering" already (a flake CI met).
      broken = false;
      await pressTest();
      await status().getByText('Recovering', { exact: true }).waitFor();
      await expect(status().innerText()).resolves.toMatch(/your endpoint answers again since/);
      // Two more answers, asked for elsewhere: the open page learns of them by itself.
      for (let i = 0; i < 2; i++) expect((await service.api('POST', '/v1/integration/test', { token: downco.owner, body: {} })).body.outcome).toBe('answer');
      await status().getByText('Healthy', { exact: true }).waitFor({ timeout: 12_000 });
      const recent = await page.getByTestId('health-recent').textContent();
      expect(count(recent, 'answers')).toBeGreaterThanOrEqual(3);
      expect(count(recent, 'connection failures')).toBeGreaterThanOrEqual(3);
      await expect(page.getByTestId('health-p99').textContent()).resolves.toMatch(/^\d+ ms$/);

      await menu(page, 'Team').click();
      leftAt = Date.now();
      const note = page.getByRole('listitem').filter({ hasText: 'Endpoint recovered' });
      await note.waitFor();
      await expect(note.textContent()).resolves.toContain('answers again');
      expect(await note.getByRole('link', { name: 'Open the conversation' }).count()).toBe(0);
    });

    it('stops reading the health once the owner has left the page', async () => {
      expect(leftAt).toBeGreaterThan(0);
      // One poll period and a bit: an Integration page still open would have asked again by now.
      await new Promise((r) => setTimeout(r, Math.max(0, leftAt + 11_000 - Date.now())));
      expect(reads.filter((r) => r.at > leftAt + 500)).toEqual([]);
    });
  });

  describe('across every page', () => {
    it('asked nothing of another origin and broke no rule of the CSP', () => {
      expect(requested.length).toBeGreaterThan(20);
      expect(requested.filter((u) => !u.startsWith(`${service.url}/`) && !u.startsWith('data:'))).toEqual([]);
      expect(cspViolations).toEqual([]);
    });
  });
});
