/**
 * A real browser for the page tests: Debian's Chromium (`apt-get install -y chromium`, done by .ci/run when it is
 * missing) driven by playwright-core, never a downloaded browser. Headless, with the flags this machine's closed
 * network needs (no background networking, no component updates); Playwright gives each launch a fresh profile.
 */
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
