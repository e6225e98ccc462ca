/**
 * The `browser` project's setup (vitest.config.ts): one headless Chromium for the whole run, which every page suite
 * connects to (test/helpers/browser.ts, `launchBrowser()`) instead of starting its own. Each suite still gets fresh
 * contexts (own cookies, storage and viewport) and closing its connection closes them; only a suite that needs other
 * Chromium flags launches a browser of its own.
 */
import { chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './helpers/chromium.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await chromium.launchServer({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS] });
  project.provide('browserEndpoint', server.wsEndpoint());
  return () => server.close();
}
