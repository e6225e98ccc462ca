/**
 * The website chat widget for people, not an API (docs/webchat.md, "The widget"):
 * - `GET /widget.js`: the script shops embed (src/widget/widget.js, served as written), cacheable with an ETag;
 *   `?v=<version>` of the current version may be cached for a year.
 * - `GET /widget/demo?key=<widget key>`: a sample shop page with the widget, under a strict Content-Security-Policy,
 *   and `GET /widget/demo.css`, its style sheet (the CSP allows no inline styles).
 * The files are read once, when the router is made; a deploy is a restart.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import express, { type Request, type Response } from 'express';
import { KEY_SHAPE } from '../../auth/api-keys.ts';

export interface WidgetPagesDeps {
  /** The service's own base URL (PUBLIC_URL); the demo page names its origin as the one to allow. */
  publicUrl: string;
}

/** How long a browser or proxy may keep /widget.js without asking again: a new version reaches shops within 5 minutes. */
export const WIDGET_MAX_AGE_SECONDS = 300;
/** A URL that names the current version (`?v=`) never changes. */
const VERSIONED_MAX_AGE_SECONDS = 365 * 24 * 3600;

/** The demo page: only its own script, style sheet and API; nothing may frame it. */
export const DEMO_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

interface Asset {
  body: Buffer;
  version: string;
  etag: string;
  contentType: string;
}

function asset(relative: string, contentType: string): Asset {
  const body = readFileSync(new URL(relative, import.meta.url));
  const version = createHash('sha256').update(body).digest('base64url').slice(0, 16);
  return { body, version, etag: `"${version}"`, contentType };
}

/** RFC 9110 §13.1.2: If-None-Match is a list of (possibly weak) tags, or `*`. */
function notModified(req: Request, etag: string): boolean {
  const header = req.get('if-none-match');
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}

function serveAsset(req: Request, res: Response, file: Asset): void {
  const versioned = req.query.v === file.version;
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', versioned ? `public, max-age=${VERSIONED_MAX_AGE_SECONDS}, immutable` : `public, max-age=${WIDGET_MAX_AGE_SECONDS}`);
  res.setHeader('ETag', file.etag);
  if (notModified(req, file.etag)) {
    res.status(304).end();
    return;
  }
  res.status(200).end(file.body);
}

/** Text for an HTML attribute value or element content. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function sendPage(res: Response, status: number, html: string): void {
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Security-Policy', DEMO_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  // The page holds a widget key from the query: not worth keeping in shared caches.
  res.setHeader('Cache-Control', 'no-store');
  res.status(status).send(html);
}

/** Trailhead Outdoor, the demo shop of the README and `npm run demo` (docs/examples/order-desk.ts has its records). */
const PRODUCTS = [
  { swatch: 'boots', name: 'Granite hiking boots', price: '€ 149.95', text: 'Waterproof leather, sizes 40 to 44.' },
  { swatch: 'tent', name: 'Summit 2 tent', price: '€ 329', text: 'Two people, 2.1 kg, up in five minutes.' },
  { swatch: 'jacket', name: 'Storm rain jacket', price: '€ 189', text: 'Taped seams and a hood that stays put.' },
  { swatch: 'bag', name: 'Alpine sleeping bag', price: '€ 139', text: 'Comfortable down to −5 °C.' },
];

function demoPage(key: string, widget: Asset, css: Asset, serviceOrigin: string): string {
  const products = PRODUCTS.map(
    (p) => `      <li class="product">
        <div class="swatch swatch-${p.swatch}" aria-hidden="true"></div>
        <h2>${escapeHtml(p.name)}</h2>
        <p class="price">${escapeHtml(p.price)}</p>
        <p>${escapeHtml(p.text)}</p>
      </li>`,
  ).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Demo shop · Botlink website chat</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/widget/demo.css?v=${css.version}">
  <script src="/widget.js?v=${widget.version}" data-key="${escapeHtml(key)}" async></script>
</head>
<body>
  <header>
    <h1>Trailhead Outdoor</h1>
    <p>A demo shop for the Botlink website chat: press “Chat with us” at the bottom right.</p>
  </header>
  <main>
    <p class="notice">This page embeds the widget exactly as a shop does. The browser sends this page's origin with
      each chat request, so the chat answers here only when the workspace allows this service's own origin
      (<code>${escapeHtml(serviceOrigin)}</code>, or the one in your address bar): on the dashboard, open
      <strong>Channels</strong>, then <strong>Website chat</strong>, press <strong>Add this site</strong> and switch the
      chat on. Remove it again after the demo.</p>
    <ul class="products">
${products}
    </ul>
  </main>
  <footer>Trailhead Outdoor is not a real shop.</footer>
</body>
</html>
`;
}

function errorPage(message: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Demo shop · Botlink website chat</title></head>
<body><h1>The demo page needs a widget key</h1><p>${escapeHtml(message)}</p></body>
</html>
`;
}

export function widgetPages(deps: WidgetPagesDeps): express.Router {
  const widget = asset('../../widget/widget.js', 'text/javascript; charset=utf-8');
  const css = asset('../../widget/demo.css', 'text/css; charset=utf-8');
  const serviceOrigin = new URL(deps.publicUrl).origin;
  const router = express.Router();

  router.get('/widget.js', (req, res) => serveAsset(req, res, widget));
  router.get('/widget/demo.css', (req, res) => serveAsset(req, res, css));
  router.get('/widget/demo', (req, res) => {
    const key = typeof req.query.key === 'string' ? req.query.key.trim() : '';
    if (KEY_SHAPE.sync.test(key)) {
      sendPage(res, 400, errorPage('That is the secret sync key: never put it in a web page. Use the widget key (blw_…, GET /v1/keys/widget), and make a new sync key, since this one was sent in a URL.'));
      return;
    }
    if (!KEY_SHAPE.widget.test(key)) {
      sendPage(res, 400, errorPage('Open /widget/demo?key=<widget key>, with the workspace\'s widget key (blw_…, GET /v1/keys/widget in the dashboard).'));
      return;
    }
    sendPage(res, 200, demoPage(key, widget, css, serviceOrigin));
  });
  return router;
}
