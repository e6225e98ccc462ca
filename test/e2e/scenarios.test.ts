/**
 * The Tests screen in Chromium (docs/scenarios.md, "On the dashboard"): an owner writes a test of two customer
 * messages (one expectation that holds, one that does not), is told the API's problems beside the fields they name,
 * runs it, follows the run, reads "Passed 0 of 1" with the failure in words (focus on the result), opens the
 * conversation (customer text as text), edits it as JSON, and deletes it after a confirmation. Then the suite: "Run all
 * tests" (the workspace's cap of open runs said in words) with its summary, a run's own number of plays, the older runs
 * of a test, and the AI judge's verdicts in words. An agent has no Tests.
 * axe-core (WCAG 2.1 A and AA: no serious or critical violation) wide and 375 px wide; the CSP holds and no other
 * origin is asked. Screenshot: docs/screenshots/dashboard-tests.png.
 */
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, docScreenshot, launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const NAME = 'Shipping and tents';
const FIRST = 'How fast do you ship my order?';
const SECOND = `Do you sell tents? ${HOSTILE}`;
const SHIPPING = 'We ship every order within two working days.';

describe('the Tests screen in Chromium', () => {
  let database: TestDatabase;
  let service: TestService;
  let browser: Browser;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  const requested: string[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    [database, browser] = await Promise.all([openTestDatabase('pglite'), launchBrowser()]);
    service = await startTestService(database);
    ws = await seedWorkspace(service);
    // The knowledge base answers shipping; nothing answers tents.
    const entry = await service.api('POST', '/v1/knowledge/entries', { token: ws.owner, body: { type: 'qa', title: 'How fast do you ship?', text: SHIPPING, language: 'en' } });
    if (entry.status !== 201) throw new Error(`seeding the knowledge failed: ${entry.text}`);
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await database?.close();
  });

  async function open(token: string, viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
    const { context, page } = await openBrowserPage(browser, { viewport, requested, cspViolations });
    await signInWithToken(page, service.url, token);
    return { context, page };
  }

  const activeText = (page: Page) => page.evaluate('document.activeElement?.textContent ?? ""');

  describe('an owner', () => {
    let context: BrowserContext;
    let page: Page;
    beforeAll(async () => {
      ({ context, page } = await open(ws.owner, { width: 1280, height: 900 }));
    });
    afterAll(async () => {
      await context?.close();
    });

    it('finds Tests in the navigation, with no test yet', async () => {
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Tests', exact: true }).click();
      await page.getByRole('heading', { name: 'Tests', level: 1 }).waitFor();
      await page.getByText('No tests yet.', { exact: false }).waitFor();
      expect(await axeViolations(page)).toEqual([]);
    });

    it('writes a test: the API\'s problems are shown beside the fields they name', async () => {
      await page.getByRole('link', { name: 'New test' }).click();
      await page.getByRole('heading', { name: 'New test', level: 1 }).waitFor();
      const first = page.getByRole('group', { name: 'Customer message 1' });
      await first.getByLabel('The customer writes').fill(FIRST);
      await first.getByLabel('The reply mentions').fill('two working days');
      // Saved without a name: the API's 400 names the field; it is said under it, and it has the focus.
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      const name = page.getByLabel('Name', { exact: true });
      await page.getByText('This is required.').waitFor();
      await expect(name.getAttribute('aria-invalid')).resolves.toBe('true');
      expect(await page.evaluate('document.activeElement.getAttribute("name")')).toBe('name');
      await name.fill(NAME);

      // Another address that is not https: the API's 422 (invalid_url) is said under the address.
      await page.getByLabel('Which system answers').selectOption('url');
      const address = page.getByLabel('Address of that system');
      await address.fill('http://staging.shop.example/botlink/channel');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText(/This address cannot be used: the URL must use https/).waitFor();
      await expect(address.getAttribute('aria-invalid')).resolves.toBe('true');
      await page.getByLabel('Which system answers').selectOption('live');
      expect(await address.isVisible()).toBe(false);

      // A second message, added from the keyboard: the focus goes to what it says.
      await page.getByRole('button', { name: 'Add a customer message' }).focus();
      await page.keyboard.press('Enter');
      expect(await page.evaluate('document.activeElement.getAttribute("name")')).toBe('customer');
      await page.keyboard.type(SECOND);
      const second = page.getByRole('group', { name: 'Customer message 2' });
      await second.getByLabel('The reply mentions').fill('tents');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText(`Saved “${NAME}”.`).waitFor();
      await page.getByRole('heading', { name: NAME, level: 1 }).waitFor();
      expect(new URL(page.url()).pathname).toMatch(/^\/dashboard\/tests\/[0-9a-f-]{36}$/);
      const stored = (await service.api('GET', '/v1/scenarios', { token: ws.owner })).body.scenarios;
      expect(stored).toEqual([expect.objectContaining({
        name: NAME,
        definition: { name: NAME, channel: 'webchat', turns: [{ customer: FIRST, expect: { contains: ['two working days'] } }, { customer: SECOND, expect: { contains: ['tents'] } }] },
      })]);
      expect(await axeViolations(page)).toEqual([]);
    });

    it('runs it: a live line while it runs, then "Passed 0 of 1" with the failure in words, and the focus there', async () => {
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      const result = page.getByRole('region', { name: 'Result of the last run' });
      await result.getByText('Passed 0 of 1', { exact: true }).waitFor({ timeout: 30_000 });
      await expect(page.getByRole('status').filter({ hasText: 'The run finished' }).textContent()).resolves.toBe('The run finished: 0 of 1 passed.');
      expect(await activeText(page)).toBe('Result of the last run');
      const failures = result.getByRole('listitem');
      expect(await failures.count()).toBe(1);
      await expect(failures.first().locator('.where').textContent()).resolves.toBe(`Customer message 2: ${SECOND}`);
      await failures.first().getByText('Expected: the reply mentions “tents”', { exact: true }).waitFor();
      await failures.first().getByText(/^Got: the reply “.+”$/).waitFor();
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      await docScreenshot(page, 'dashboard-tests.png', { fullPage: true });
      expect(await axeViolations(page)).toEqual([]);
    });

    it('opens the conversation: each line with who answered, the customer\'s words as text', async () => {
      await page.getByRole('link', { name: 'Read the conversation' }).click();
      await page.getByRole('heading', { name: `Test run of “${NAME}”`, level: 1 }).waitFor();
      const lines = page.getByRole('region', { name: 'The conversation' }).locator('.transcript > li');
      expect(await lines.count()).toBe(4);
      await expect(lines.nth(0).textContent()).resolves.toBe(`Customer (message 1)${FIRST}`);
      await expect(lines.nth(1).textContent()).resolves.toMatch(/^Bot · answered by the knowledge base · (\d+ ms|[\d.]+ s).*two working days/);
      await expect(lines.nth(2).textContent()).resolves.toBe(`Customer (message 2)${SECOND}`);
      await expect(lines.nth(3).getByText('Not as expected: expected the reply mentions “tents”', { exact: false }).count()).resolves.toBe(1);
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      expect(await axeViolations(page)).toEqual([]);
    });

    it('is usable 375 px wide: the list, the test and the conversation scroll no sideways, with no accessibility violation', async () => {
      await page.setViewportSize({ width: 375, height: 800 });
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      expect(await axeViolations(page)).toEqual([]);
      await page.getByRole('link', { name: 'Back to the test' }).click();
      await page.getByRole('region', { name: 'Result of the last run' }).getByText('Passed 0 of 1', { exact: true }).waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      expect(await axeViolations(page)).toEqual([]);
      await page.getByRole('link', { name: 'All tests' }).click();
      const row = page.getByRole('listitem').filter({ hasText: NAME });
      await row.getByText('Passed 0 of 1').waitFor();
      await row.getByText('Website chat · 2 messages').waitFor();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      expect(await axeViolations(page)).toEqual([]);
      await page.setViewportSize({ width: 1280, height: 900 });
    });

    it('edits it as JSON: the API checks it, and what the form does not show is kept', async () => {
      await page.getByRole('link', { name: NAME }).click();
      await page.getByRole('heading', { name: NAME, level: 1 }).waitFor();
      await page.locator('summary', { hasText: 'Edit as JSON' }).click();
      const json = page.getByLabel('The test as JSON');
      // Filled from the form when the box opens (the toggle event comes a moment after the click).
      await expect.poll(() => json.inputValue()).not.toBe('');
      const written = JSON.parse(await json.inputValue());
      expect(written.turns).toHaveLength(2);
      written.turns[0].expect.matches = '[a-z';
      await json.fill(JSON.stringify(written));
      await page.getByRole('button', { name: 'Save the JSON' }).click();
      await page.getByText(/turns\.0\.expect\.matches is not a valid regular expression/).waitFor();
      await expect(json.getAttribute('aria-invalid')).resolves.toBe('true');
      written.turns[0].expect.matches = '(?i:working days)';
      await json.fill(JSON.stringify(written));
      await page.getByRole('button', { name: 'Save the JSON' }).click();
      await page.getByText(`Saved “${NAME}” from the JSON.`).waitFor();
      await page.getByRole('group', { name: 'Customer message 1' }).getByText('Also checked (in Edit as JSON): matches.').waitFor();
      // A change on the form keeps the pattern.
      await page.getByRole('group', { name: 'Customer message 2' }).getByLabel('Answered by').selectOption('fallback');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText(`Saved “${NAME}”.`).waitFor();
      const stored = (await service.api('GET', '/v1/scenarios', { token: ws.owner })).body.scenarios[0].definition;
      expect(stored.turns).toEqual([
        { customer: FIRST, expect: { contains: ['two working days'], matches: '(?i:working days)' } },
        { customer: SECOND, expect: { contains: ['tents'], source: 'fallback' } },
      ]);
      expect(await axeViolations(page)).toEqual([]);
    });

    it('deletes it after a confirmation', async () => {
      await page.getByRole('button', { name: 'Delete this test' }).click();
      expect(await activeText(page)).toBe('Keep it');
      await page.keyboard.press('Enter');
      expect(await activeText(page)).toBe('Delete this test');
      expect((await service.api('GET', '/v1/scenarios', { token: ws.owner })).body.scenarios).toHaveLength(1);
      await page.getByRole('button', { name: 'Delete this test' }).click();
      await page.getByRole('button', { name: `Delete “${NAME}” and its runs` }).click();
      await page.getByText(`Deleted the test “${NAME}”.`).waitFor();
      await page.getByText('No tests yet.', { exact: false }).waitFor();
      expect((await service.api('GET', '/v1/scenarios', { token: ws.owner })).body.scenarios).toEqual([]);
    });
  });

  describe('an owner runs the whole suite, a run of their own size, the older runs, and reads the judge', () => {
    let context: BrowserContext;
    let page: Page;
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      ({ context, page } = await open(ws.owner, { width: 1280, height: 900 }));
      for (const [name, expectation] of [['Shipping', 'two working days'], ['Tents', 'tents']] as const) {
        const res = await service.api('POST', '/v1/scenarios', { token: ws.owner, body: { name, channel: 'webchat', turns: [{ customer: name === 'Tents' ? 'Do you sell tents?' : FIRST, expect: { contains: [expectation] } }] } });
        if (res.status !== 201) throw new Error(`seeding the tests failed: ${res.text}`);
        ids[name] = res.body.scenario.id as string;
      }
    });
    afterAll(async () => {
      await context?.close();
    });

    it('"Run all tests" runs every test, says when the workspace\'s cap holds the rest back, then sums up with the suite\'s pass rate', async () => {
      // Runs another engine holds, as many as the workspace's cap (20): the tests wait for a free place.
      const held = Array.from({ length: 20 }, () => ({
        id: randomUUID(), workspace_id: ws.workspaceId, scenario_id: ids.Shipping!, definition: JSON.stringify({ name: 'Shipping', channel: 'webchat', turns: [{ customer: FIRST }] }),
        runs: 1, status: 'running' as const, lease_owner: 'another-engine', lease_until: new Date(Date.now() + 600_000),
      }));
      await database.db.insertInto('scenario_runs').values(held).execute();
      await page.goto(`${service.url}/dashboard/tests`);
      await page.getByRole('heading', { name: 'Tests', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Run all tests' }).click();
      await page.getByRole('status').filter({ hasText: 'Your workspace runs at most 20 tests at a time; the others start as those finish.' }).waitFor({ timeout: 15_000 });
      await expect(page.getByRole('status').filter({ hasText: 'Running all 2 tests' }).textContent()).resolves.toContain('2 not started yet');
      await database.db.deleteFrom('scenario_runs').where('lease_owner', '=', 'another-engine').execute();

      const summary = page.getByRole('region', { name: 'Result of running all tests' });
      await summary.getByText('Passed 1 of 2 tests', { exact: true }).waitFor({ timeout: 30_000 });
      await expect(summary.locator('.outcome').textContent()).resolves.toBe('Passed 1 of 2 tests. Pass rate of all plays: 50 % (1 of 2).');
      expect(await activeText(page)).toBe('Result of running all tests');
      await expect(page.getByRole('status').filter({ hasText: 'All tests ran' }).textContent()).resolves.toBe('All tests ran: 1 of 2 passed.');
      await summary.getByRole('link', { name: 'Tents' }).waitFor();
      // Each test ran once, with its own plays.
      for (const id of Object.values(ids)) expect((await service.api('GET', `/v1/scenarios/${id}/runs`, { token: ws.owner })).body.runs).toMatchObject([{ status: 'done', runs: 1 }]);
      expect(await axeViolations(page)).toEqual([]);
      await page.setViewportSize({ width: 375, height: 800 });
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      expect(await axeViolations(page)).toEqual([]);
      await page.setViewportSize({ width: 1280, height: 900 });
    });

    it('plays a run its own number of times, chosen before Run; a number out of range is said under the field', async () => {
      // The list's link opens the test (the summary's opens the run).
      await page.locator('ul.tests').getByRole('link', { name: 'Tents', exact: true }).click();
      await page.getByRole('heading', { name: 'Tents', exact: true, level: 1 }).waitFor();
      const plays = page.getByLabel('Times to play this run');
      await plays.fill('25');
      const before = requested.length;
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      await expect.poll(() => page.locator('.run-box .field-error').textContent()).toBe('Give a whole number from 1 to 20, or leave it empty.');
      await expect(plays.getAttribute('aria-invalid')).resolves.toBe('true');
      expect(requested.slice(before).filter((u) => u.includes('/runs'))).toEqual([]);
      await plays.fill('2');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      const result = page.getByRole('region', { name: 'Result of the last run' });
      await result.getByText('Passed 0 of 2', { exact: true }).waitFor({ timeout: 30_000 });
      // The test itself still plays once: only this run played twice.
      expect((await service.api('GET', `/v1/scenarios/${ids.Tents}`, { token: ws.owner })).body.scenario.definition.runs).toBeUndefined();
      expect((await service.api('GET', `/v1/scenarios/${ids.Tents}/runs`, { token: ws.owner })).body.runs.map((r: { runs: number }) => r.runs)).toEqual([2, 1]);
    });

    it('lists the test\'s older runs with when and how they went, and opens any of them', async () => {
      const runs = page.getByRole('region', { name: 'Runs of this test' });
      const items = runs.getByRole('listitem');
      await expect.poll(() => items.count()).toBe(2);
      await expect(items.nth(0).textContent()).resolves.toMatch(/^Run 2, .+ Passed 0 of 2 0 %$/);
      await expect(items.nth(1).textContent()).resolves.toMatch(/^Run 1, .+ Passed 0 of 1 0 %$/);
      expect(await axeViolations(page)).toEqual([]);
      await page.setViewportSize({ width: 375, height: 800 });
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      expect(await axeViolations(page)).toEqual([]);
      await page.setViewportSize({ width: 1280, height: 900 });
      await items.nth(1).getByRole('link').focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Test run of “Tents”', level: 1 }).waitFor();
      await page.locator('.outcome').getByText('Passed 0 of 1').waitFor();
    });

    it('shows the AI judge\'s verdicts in words: each criterion met or not with the reason, or why there is no verdict', async () => {
      const judged = randomUUID();
      const turn = { customer: 'Do you sell tents?', reply: 'I don\'t know that.', source: 'fallback', handoff: null, tools: [], ms: 12, passed: true };
      await database.db.insertInto('scenario_runs').values({
        id: judged, workspace_id: ws.workspaceId, scenario_id: ids.Tents!, definition: JSON.stringify({ name: 'Tents', channel: 'webchat', turns: [{ customer: 'Do you sell tents?' }] }),
        runs: 2, passed: 0, status: 'done', started_at: new Date(), finished_at: new Date(),
        failures: JSON.stringify([
          { run: 1, turn: 1, expectation: 'judge: Offers a person', got: 'It never offered a colleague.' },
          { run: 2, turn: 1, expectation: 'judge', got: 'the judge\'s answer could not be read: it is not JSON: "meh"' },
        ]),
        transcripts: JSON.stringify([
          { run: 1, session_id: null, turns: [turn], judge: { verdicts: [{ criterion: 'Answers politely', pass: true, reason: 'It is polite.' }, { criterion: 'Offers a person', pass: false, reason: 'It never offered a colleague.' }] } },
          { run: 2, session_id: null, turns: [turn], judge: { error: 'the judge\'s answer could not be read: it is not JSON: "meh"' } },
        ]),
      }).execute();
      await page.goto(`${service.url}/dashboard/tests/${ids.Tents}/runs/${judged}`);
      const first = page.getByRole('region', { name: 'Run 1' });
      const verdicts = first.locator('.verdicts > li');
      await verdicts.first().waitFor();
      await expect(first.getByRole('heading', { name: 'The AI judge', level: 3 }).count()).resolves.toBe(1);
      await expect(verdicts.allTextContents()).resolves.toEqual(['Met Answers politelyWhy: It is polite.', 'Not met Offers a personWhy: It never offered a colleague.']);
      await expect(page.getByRole('region', { name: 'Run 2' }).locator('.judge p').textContent())
        .resolves.toBe('No verdict. The AI judge’s answer could not be read (it is not JSON: "meh").');
      expect(await page.locator('main').textContent()).not.toContain('verdicts');
      expect(await axeViolations(page)).toEqual([]);

      // On the test, the failures say what the judge looked for and found.
      await page.getByRole('link', { name: 'Back to the test' }).click();
      const result = page.getByRole('region', { name: 'Result of the last run' });
      await result.getByText('Expected: the AI judge finds: “Offers a person”', { exact: true }).waitFor();
      await result.getByText('Got: not met: It never offered a colleague.', { exact: true }).waitFor();
      await result.getByText('Got: no verdict: the AI judge’s answer could not be read (it is not JSON: "meh").', { exact: true }).waitFor();
      await docScreenshot(page, 'dashboard-tests-runs.png', { fullPage: true });
      expect(await axeViolations(page)).toEqual([]);
    });
  });

  describe('an agent', () => {
    it('has no Tests in the navigation, and the address shows nothing of it', async () => {
      const before = requested.length;
      const { context, page } = await open(ws.agent);
      const nav = page.getByRole('navigation', { name: 'Dashboard' });
      expect(await nav.getByRole('link').allTextContents()).not.toContain('Tests');
      await page.goto(`${service.url}/dashboard/tests`);
      await page.getByRole('heading', { name: 'Nothing here', level: 1 }).waitFor();
      expect(requested.slice(before).map((u) => new URL(u).pathname).filter((p) => p.startsWith('/v1/scenario'))).toEqual([]);
      expect(await axeViolations(page)).toEqual([]);
      await context.close();
    });
  });

  it('asked no other origin and broke no CSP rule', () => {
    expect(requested.filter((u) => new URL(u).origin !== service.url)).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
