/**
 * A real browser for the page tests: Debian's Chromium (`apt-get install -y chromium`, done by .ci/run when it is
 * missing) driven by playwright-core, never a downloaded browser. Headless, with the flags this machine's closed
 * network needs (no background networking, no component updates); the suites share one Chromium for the run, each in
 * fresh contexts of its own.
 * Also what every page suite does the same way: open a watched page, sign in with a token, run axe-core.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect, inject } from 'vitest';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.ts';

declare module 'vitest' {
  interface ProvidedContext {
    /** Only in the `browser` project: the run's shared Chromium (test/browser.global-setup.ts). */
    browserEndpoint?: string;
  }
}

/**
 * A browser for one suite: a connection to the run's shared Chromium when the `browser` project provides one (closing
 * it closes this suite's contexts, not the browser), or a Chromium of its own with `extraArgs` (flags only this suite
 * needs, e.g. the one test that trusts a local CA's key) or outside that project.
 */
export async function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  const endpoint = inject('browserEndpoint');
  if (endpoint && extraArgs.length === 0) return chromium.connect(endpoint);
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] });
}

export interface BrowserPageOptions {
  viewport?: { width: number; height: number };
  /** Each step's wait: well inside the test's own time limit, so a failure names the step that waited. */
  timeoutMs?: number;
  /** Gets every URL the context asks for, for a suite that checks it asked no other origin. */
  requested?: string[];
  /** Gets every Content Security Policy complaint in the page's console. */
  cspViolations?: string[];
  /** The browser's own time zone (IANA) and language, for a suite that shows times in another zone than the browser's. */
  timezoneId?: string;
  locale?: string;
}

/** A fresh context (wide unless told otherwise) and a page in it. */
export async function openBrowserPage(browser: Browser, options: BrowserPageOptions = {}): Promise<{ context: BrowserContext; page: Page }> {
  const { requested, cspViolations } = options;
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1100, height: 900 },
    ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
    ...(options.locale ? { locale: options.locale } : {}),
  });
  if (requested) context.on('request', (r) => requested.push(r.url()));
  const page = await context.newPage();
  page.setDefaultTimeout(options.timeoutMs ?? 8_000);
  if (cspViolations) collectCspViolations(page, cspViolations);
  return { context, page };
}

export function collectCspViolations(page: Page, into: string[]): void {
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) into.push(m.text());
  });
}

/** Every error the page writes to its console, after `prefix`. */
export function collectConsoleErrors(page: Page, into: string[], prefix = ''): void {
  page.on('console', (m) => {
    if (m.type() === 'error') into.push(`${prefix}${m.text()}`);
  });
}

/**
 * Signs in on the dashboard's token form and waits for where the user lands: the Overview for owners and admins, their
 * conversations for agents. `beforeSubmit` runs with the form filled in (a screenshot of it, say).
 */
export async function signInWithToken(page: Page, serviceUrl: string, token: string, beforeSubmit?: () => Promise<void>): Promise<void> {
  await page.goto(`${serviceUrl}/dashboard`);
  await page.getByText('Sign in with a token', { exact: true }).click();
  await page.getByLabel('Token', { exact: true }).fill(token);
  if (beforeSubmit) await beforeSubmit();
  await page.getByRole('button', { name: 'Sign in with this token' }).click();
  await page.getByRole('heading', { name: /^(Overview|Conversations)$/, level: 1 }).waitFor();
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: unknown[];
}

let axeSource: string | undefined;

/** axe-core's WCAG 2.1 A and AA rules on the page as it is (open shadow roots included); the serious and critical violations. */
export async function axeViolations(page: Page): Promise<string[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol, which the page's CSP does not govern; the page itself still runs no
  // inline script.
  await page.evaluate(axeSource);
  const options = { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }, resultTypes: ['violations'] };
  const checked = (await page.evaluate(
    `axe.run(document, ${JSON.stringify(options)}).then((r) => ({ passed: r.passes.length, ` +
      'violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target) })) }))',
  )) as { passed: number; violations: AxeViolation[] };
  // The rules did run (labels, contrast, names of buttons …): an empty list means they passed, not that none ran.
  expect(checked.passed).toBeGreaterThan(10);
  return checked.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(v.nodes)}`);
}

/** Where the docs' screenshots live (README's tour links them). */
const DOC_SCREENSHOTS = new URL('../../docs/screenshots/', import.meta.url);

/**
 * A screenshot for docs/screenshots/<file>, taken only by `npm run screenshots` (SCREENSHOTS=1): `npm test` changes
 * no tracked file (test/lint/tracked-files.test.ts). The page or element is whatever the test has just checked.
 */
export async function docScreenshot(target: Pick<Page, 'screenshot'> | { screenshot(options: { path: string }): Promise<unknown> }, file: string, options: { fullPage?: boolean } = {}): Promise<void> {
  if (process.env.SCREENSHOTS !== '1') return;
  await (target as Page).screenshot({ path: new URL(file, DOC_SCREENSHOTS).pathname, ...options });
}
