/**
 * The widget's pages over real HTTP (docs/webchat.md, "The widget"): the script's headers and caching, the demo page's
 * CSP and how it puts the key into the page, and what the script never does (parse HTML).
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CSP, WIDGET_MAX_AGE_SECONDS, escapeHtml, widgetPages } from '../../src/http/pages/widget.ts';

const WIDGET_KEY = `blw_${'a'.repeat(43)}`;
const SYNC_KEY = `bls_${'b'.repeat(43)}`;

let server: Server;
let base = '';

beforeAll(async () => {
  const app = express();
  app.use(widgetPages({ publicUrl: 'https://botlink.example/base' }));
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('GET /widget.js', () => {
  it('is the widget file, as JavaScript that browsers may not sniff, cacheable for 5 minutes with an ETag', async () => {
    const res = await fetch(`${base}/widget.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe(`public, max-age=${WIDGET_MAX_AGE_SECONDS}`);
    expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{16}"$/);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(await res.text()).toBe(readFileSync(new URL('../../src/widget/widget.js', import.meta.url), 'utf8'));
  });

  it('answers 304 without a body to a matching If-None-Match (strong, weak or in a list)', async () => {
    const etag = (await fetch(`${base}/widget.js`)).headers.get('etag')!;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const res = await fetch(`${base}/widget.js`, { headers: { 'if-none-match': header } });
      expect(res.status).toBe(304);
      expect(res.headers.get('etag')).toBe(etag);
      expect(await res.text()).toBe('');
    }
    expect((await fetch(`${base}/widget.js`, { headers: { 'if-none-match': '"stale"' } })).status).toBe(200);
  });

  it('the URL of the current version (?v=) may be cached for a year; another version gets the short lifetime', async () => {
    const version = (await fetch(`${base}/widget.js`)).headers.get('etag')!.slice(1, -1);
    expect((await fetch(`${base}/widget.js?v=${version}`)).headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${base}/widget.js?v=old`)).headers.get('cache-control')).toBe(`public, max-age=${WIDGET_MAX_AGE_SECONDS}`);
  });

  it('answers HEAD with the headers only', async () => {
    const res = await fetch(`${base}/widget.js`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });

  it('never parses text as HTML and evaluates nothing', () => {
    const source = readFileSync(new URL('../../src/widget/widget.js', import.meta.url), 'utf8');
    for (const sink of ['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'document.write', 'eval(', 'new Function', 'createContextualFragment', 'DOMParser']) {
      expect(source, sink).not.toContain(sink);
    }
  });
});

describe('GET /widget/demo', () => {
  it('embeds the widget with the key under a strict Content-Security-Policy', async () => {
    const res = await fetch(`${base}/widget/demo?key=${WIDGET_KEY}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(DEMO_CSP);
    for (const directive of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"]) {
      expect(DEMO_CSP).toContain(directive);
    }
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).toMatch(new RegExp(`<script src="/widget\\.js\\?v=[A-Za-z0-9_-]{16}" data-key="${WIDGET_KEY}" async></script>`));
    expect(html).toContain('<link rel="stylesheet" href="/widget/demo.css?v=');
    expect(html).toContain('https://botlink.example');
    // No inline script or style for the CSP to refuse.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(html).not.toMatch(/<style|style="/);
  });

  it.each([
    ['no key', ''],
    ['markup instead of a key', `?key=${encodeURIComponent('"><script>alert(1)</script>')}`],
    ['a key twice', `?key=${WIDGET_KEY}&key=${WIDGET_KEY}`],
  ])('refuses %s with a 400 page that echoes nothing', async (_what, query) => {
    const res = await fetch(`${base}/widget/demo${query}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-security-policy')).toBe(DEMO_CSP);
    const html = await res.text();
    expect(html).not.toContain('<script');
    expect(html).toContain('widget key');
  });

  it('refuses the secret sync key and says why', async () => {
    const res = await fetch(`${base}/widget/demo?key=${SYNC_KEY}`);
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('secret sync key');
    expect(html).not.toContain(SYNC_KEY);
  });

  it('serves its style sheet as CSS', async () => {
    const res = await fetch(`${base}/widget/demo.css`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('escapes every character that could end an attribute or open a tag', () => {
    expect(escapeHtml(`"'<>&`)).toBe('&#34;&#39;&#60;&#62;&#38;');
  });
});
