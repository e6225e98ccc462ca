/**
 * Going live with compose.yaml's `public` profile (README, "Put it online"; docs/operations.md, "HTTPS with Caddy"):
 * the repository's own Caddyfile, run by Debian's caddy on loopback with DOMAIN=localhost (Caddy's local CA instead
 * of ACME), in front of a real engine. The dashboard, the widget's script and a web chat work over HTTPS through it,
 * plain HTTP is redirected, and the line to paste on a shop's site names the https address.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate, createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, fetch as undiciFetch } from 'undici';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const CADDYFILE = fileURLToPath(new URL('../../Caddyfile', import.meta.url));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

let database: TestDatabase;
let service: TestService;
let caddy: ChildProcess;
let caddyLog = '';
let base = '';
let httpPort = 0;
let tls: Agent;
let owner = '';
let caCert = '';
/** Where Caddy keeps its local CA's certificates (in the test's own temporary home). */
let caDir = '';

const get = (path: string, init: Parameters<typeof undiciFetch>[1] = {}) => undiciFetch(`${base}${path}`, { dispatcher: tls, ...init });

beforeAll(async () => {
  const httpsPort = await freePort();
  httpPort = await freePort();
  base = `https://localhost:${httpsPort}`;
  database = await openTestDatabase('pglite');
  // Behind Caddy on this machine: the links it gives out name the https address, and Caddy's X-Forwarded-For counts.
  service = await startTestService(database, { PUBLIC_URL: base, TRUST_PROXY: 'loopback' });
  const caddyHome = mkdtempSync(join(tmpdir(), 'botlink-caddy-'));
  caddy = spawn('caddy', ['run', '--config', CADDYFILE, '--adapter', 'caddyfile'], {
    cwd: caddyHome,
    env: {
      PATH: process.env.PATH,
      HOME: caddyHome,
      XDG_DATA_HOME: join(caddyHome, 'data'),
      XDG_CONFIG_HOME: join(caddyHome, 'config'),
      DOMAIN: 'localhost',
      ACME_EMAIL: 'owner@trailtent.example',
      HTTPS_PORT: String(httpsPort),
      HTTP_PORT: String(httpPort),
      BOTLINK_UPSTREAM: new URL(service.url).host,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  caddy.stdout?.on('data', (d: Buffer) => (caddyLog += d.toString()));
  caddy.stderr?.on('data', (d: Buffer) => (caddyLog += d.toString()));
  // Caddy's local CA: the root it made, which this test (like a browser told to) trusts; nothing else is trusted.
  caDir = join(caddyHome, 'data', 'caddy', 'pki', 'authorities', 'local');
  const root = join(caDir, 'root.crt');
  caCert = await waitFor('Caddy making its local CA', () => (existsSync(root) ? readFileSync(root, 'utf8') : undefined));
  tls = new Agent({ connect: { ca: caCert } });
  await waitFor('Caddy answering over HTTPS', async () => ((await get('/healthz')).ok ? true : undefined));
  owner = (await seedWorkspace(service, 'TrailTent')).owner;
}, 60_000);

afterAll(async () => {
  caddy?.kill('SIGTERM');
  await tls?.close();
  await service?.stop();
  await database?.close();
});

describe('the public profile: Caddy with HTTPS in front of the engine', () => {
  it('serves the dashboard and the widget script over HTTPS with a certificate from its CA, and redirects plain HTTP', async () => {
    const dashboard = await get('/dashboard');
    expect(dashboard.status, caddyLog).toBe(200);
    expect(dashboard.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await dashboard.text()).toContain('<html');
    const script = await get('/widget.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    const plain = await undiciFetch(`http://localhost:${httpPort}/dashboard`, { redirect: 'manual' });
    expect(plain.status).toBe(308);
    // To the same path over HTTPS (Caddy 2.6 names the standard port 443 here, which is the port a real server uses).
    expect(plain.headers.get('location')).toMatch(/^https:\/\/localhost(:\d+)?\/dashboard$/);
    // Without the CA the certificate is not trusted: it is Caddy's local one, not a public one.
    await expect(undiciFetch(`${base}/healthz`)).rejects.toThrow();
  });

  it('gives the shop the https address to paste, and a web chat works through it', async () => {
    const setup = await get('/v1/channels/setup', { headers: { authorization: `Bearer ${owner}` } });
    expect(setup.status).toBe(200);
    const body = (await setup.json()) as { public_url: string; public_url_is_https: boolean; widget: { script_url: string } };
    expect(body).toMatchObject({ public_url: base, public_url_is_https: true, widget: { script_url: `${base}/widget.js` } });

    const keyRes = await get('/v1/keys/widget', { headers: { authorization: `Bearer ${owner}` } });
    const widgetKey = ((await keyRes.json()) as { key: string }).key;
    const allow = await get('/v1/webchat', {
      method: 'PUT',
      headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ allowed_origins: [base] }),
    });
    expect(allow.status).toBe(200);
    const chat = await get('/v1/webchat/conversations', {
      method: 'POST',
      headers: { 'x-widget-key': widgetKey, 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ visitor_message: 'Do you ship to Belgium?', page_url: `${base}/widget/demo` }),
    });
    expect(chat.status).toBe(201);
    const answer = (await chat.json()) as { conversation_id: string; reply: string };
    expect(answer.conversation_id).toBeTruthy();
    expect(answer.reply.length).toBeGreaterThan(0);
  });

  it('runs the widget in Chromium over HTTPS through Caddy, trusting only that CA', async () => {
    // Chromium is told to accept a chain holding the local CA's intermediate key, and nothing else.
    const intermediate = new X509Certificate(readFileSync(join(caDir, 'intermediate.crt')));
    const spki = createHash('sha256').update(intermediate.publicKey.export({ type: 'spki', format: 'der' })).digest('base64');
    let browser: Browser | undefined;
    try {
      browser = await launchBrowser([`--ignore-certificate-errors-spki-list=${spki}`]);
      const page = await browser.newPage();
      const keyRes = await get('/v1/keys/widget', { headers: { authorization: `Bearer ${owner}` } });
      const widgetKey = ((await keyRes.json()) as { key: string }).key;
      const res = await page.goto(`${base}/widget/demo?key=${widgetKey}`);
      expect(res?.status()).toBe(200);
      await page.getByRole('button', { name: 'Chat with us' }).click();
      await page.getByLabel('Your message').fill('Do you ship to Belgium?');
      await page.keyboard.press('Enter');
      // The bot's answer comes back through Caddy (an empty knowledge base: its "I don't know" with a way on).
      await page.locator('.msg.bot').first().waitFor({ timeout: 10_000 });
      expect(await page.locator('.msg.visitor').allTextContents()).toEqual(['You: Do you ship to Belgium?']);
      expect(page.url().startsWith(base)).toBe(true);
    } finally {
      await browser?.close();
    }
  }, 30_000);
});
