/**
 * The dashboard web app (docs/interfaces.md: Pages and tools for people): plain ES modules and one stylesheet from
 * src/dashboard, no build step. Every path of the app answers index.html (the app routes in the browser); its files
 * are under /dashboard/assets/. The page is same-origin with the API and allows nothing else: a strict CSP with no
 * inline script or style, no referrer, and no framing.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response } from 'express';
import { AppError } from '../../errors.ts';

export const DASHBOARD_PATH = '/dashboard';

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** Files of libraries the dashboard uses, under /dashboard/assets/ by these names. */
const VENDOR_FILES: [string, string][] = [
  ['uplot.esm.js', fileURLToPath(import.meta.resolve('uplot/dist/uPlot.esm.js'))],
  ['uplot.min.css', fileURLToPath(import.meta.resolve('uplot/dist/uPlot.min.css'))],
];

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

export interface DashboardPagesDeps {
  /** Where the app's files are; default src/dashboard beside this module. */
  directory?: URL;
}

export function dashboardPages(deps: DashboardPagesDeps = {}): express.Router {
  const directory = deps.directory ?? new URL('../../dashboard/', import.meta.url);
  // Read once at start: the files ship with the service and never change while it runs.
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(directory)) {
    const type = CONTENT_TYPES[extname(name)];
    if (!type) continue;
    const body = readFileSync(new URL(name, directory));
    assets.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
  }
  // The Overview's charts: uPlot's module and stylesheet, served from here like the app's own files (no CDN: the CSP
  // allows this origin only, and a dashboard must not depend on a third party being up or honest).
  for (const [name, file] of VENDOR_FILES) {
    const body = readFileSync(file);
    assets.set(name, { body, type: CONTENT_TYPES[extname(name)]!, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
  }
  const index = readFileSync(new URL('index.html', directory));

  const router = express.Router();

  const pageHeaders = (res: Response) => {
    res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
  };

  router.get('/', (_req, res) => res.redirect(302, DASHBOARD_PATH));

  router.get(`${DASHBOARD_PATH}/assets/:file`, (req: Request, res: Response) => {
    const asset = assets.get(String(req.params.file));
    if (!asset) throw new AppError('not_found', `No dashboard file ${String(req.params.file).slice(0, 100)}.`);
    pageHeaders(res);
    // Names carry no hash, so the browser revalidates every time and gets a 304 while the file is the same.
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('ETag', asset.etag);
    if (req.headers['if-none-match'] === asset.etag) {
      res.status(304).end();
      return;
    }
    res.type(asset.type).send(asset.body);
  });

  router.get([DASHBOARD_PATH, `${DASHBOARD_PATH}/*path`], (_req: Request, res: Response) => {
    pageHeaders(res);
    res.setHeader('Cache-Control', 'no-store');
    res.type('text/html; charset=utf-8').send(index);
  });

  return router;
}
