/**
 * "Try a question" is a budget per workspace (docs/knowledge.md, "Try a question"): a loop of quick tries is answered
 * 429 rate_limited with Retry-After after the burst, and the language model is asked no more than the tries let
 * through. Real service, an OpenAI-compatible model on loopback HTTPS; the budget's clock stands still, so the burst
 * is all there is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRY_QUESTION_RATE_LIMIT } from '../../src/knowledge/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson } from '../helpers/https-server.ts';
import { useLlmServer } from '../helpers/llm-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const { burst } = TRY_QUESTION_RATE_LIMIT;

describeEachDatabase('Try a question is a budget per workspace', (get) => {
  const model = useLlmServer();
  let service: TestService;
  let acme: Awaited<ReturnType<typeof seedWorkspace>>;
  let globex: Awaited<ReturnType<typeof seedWorkspace>>;
  const modelCalls = () => model.llm.requests.filter((r) => r.method === 'POST').length;
  const tryQuestion = (token: string) => service.api('POST', '/v1/knowledge/try', { token, body: { question: 'Do you ship to Belgium?', language: 'en' } });

  beforeAll(async () => {
    model.llm.handle((_req, res) => sendJson(res, 200, { choices: [{ index: 0, message: { role: 'assistant', content: 'Yes, within three days.' } }] }));
    service = await startTestService(get(), { LLM_BASE_URL: `${model.llm.origin}/v1`, LLM_MODEL: 'test-model' }, { rateLimits: { tryQuestion: { now: () => 0 } } });
    acme = await seedWorkspace(service, 'Acme');
    globex = await seedWorkspace(service, 'Globex');
  });
  afterAll(async () => {
    await service?.stop();
  });

  describe('twenty quick tries', () => {
    it(`are answered up to the burst (${burst}); the rest are 429 rate_limited with Retry-After, and the model hears only the answered ones`, async () => {
      const before = modelCalls();
      const answers = await Promise.all(Array.from({ length: 20 }, () => tryQuestion(acme.owner)));
      const answered = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 429);
      expect([answered.length, refused.length]).toEqual([burst, 20 - burst]);
      expect(answered[0]!.body.answer).toEqual({ text: 'Yes, within three days.', source: 'ai' });
      const wait = TRY_QUESTION_RATE_LIMIT.windowMs / burst / 1000;
      for (const r of refused) {
        expect(r.body.error).toMatchObject({ code: 'rate_limited', details: { retry_after: wait } });
        expect(r.body.error.message).toContain(`try again in ${wait} s`);
        expect(r.headers.get('retry-after')).toBe(String(wait));
      }
      // One model call per try without an integration (the built-in AI's answer); none for a refused one.
      expect(modelCalls() - before).toBe(burst);
    });

    it("leave another workspace's budget whole", async () => {
      expect((await tryQuestion(globex.admin)).status).toBe(200);
    });

    it('cost nothing when the question is wrong: a 422 is not a try', async () => {
      const wrong = await service.api('POST', '/v1/knowledge/try', { token: globex.owner, body: { question: '' } });
      expect(wrong.status).toBe(422);
      const answers = await Promise.all(Array.from({ length: burst }, () => tryQuestion(globex.owner)));
      // The one above (the admin's) and these: the burst's last try is refused, the 422 took nothing.
      expect(answers.map((a) => a.status).filter((s) => s === 200)).toHaveLength(burst - 1);
    });
  });
});
