/**
 * The cost of the AI's questions on the Knowledge screen, in Chromium (docs/knowledge.md, "Questions written by the
 * AI"): once the model wrote a passage's questions, every user of the workspace reads how many there are, for how many
 * passages, and the tokens they cost; a workspace without a model shows no such line.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openBrowserPage, signInWithToken } from '../helpers/browser.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

describe("the AI's questions on the Knowledge screen", () => {
  let database: TestDatabase;
  let llm: TestHttpsServer;
  let service: TestService;
  let browser: Browser;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;

  beforeAll(async () => {
    [database, llm, browser] = await Promise.all([openTestDatabase('pglite'), startHttpsServer(), launchBrowser()]);
    llm.handle((_req, res) =>
      sendJson(res, 200, {
        choices: [{ index: 0, message: { role: 'assistant', content: '["Can I hire an electric bike?", "e-bike for a day?"]' } }],
        usage: { prompt_tokens: 1000, completion_tokens: 234 },
      }),
    );
    service = await startTestService(database, { LLM_BASE_URL: `${llm.origin}/v1`, LLM_MODEL: 'test-model' }, { knowledgeQuestions: { intervalMs: 100 } });
    ws = await seedWorkspace(service);
    const key = (await service.api('POST', '/v1/keys/sync', { token: ws.owner })).body.key as string;
    await service.api('PUT', '/v1/sync/pages/rental', { headers: { 'x-sync-key': key }, body: { title: 'Bike rental', body: 'Rent an e-bike for 29 euro per day.', language: 'en' } });
    for (let waited = 0; (await service.api('GET', '/v1/knowledge/ai-questions', { token: ws.owner })).body.questions !== 2; waited += 100) {
      if (waited > 10_000) throw new Error('the questions were not written within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await llm?.close();
    await database?.close();
  });

  it('an agent reads how many questions the AI wrote, for how many passages, and their tokens', async () => {
    const { context, page } = await openBrowserPage(browser);
    await signInWithToken(page, service.url, ws.agent);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Knowledge', exact: true }).click();
    const line = page.locator('#ai-questions');
    await expect.poll(() => line.textContent()).toBe('Questions written by the AI: 2 for 1 passages, 1,234 tokens used.');
    expect(await line.isVisible()).toBe(true);
    await context.close();
  });
});
