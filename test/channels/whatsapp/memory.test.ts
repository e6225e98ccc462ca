/**
 * Conversation memory on WhatsApp: the built-in AI is a real OpenAI-compatible server on loopback
 * HTTPS, the integrator gives no answer, so every message reaches the model. The model gets the recent turns of the
 * same conversation, so "and the other one?" can be answered, within MAX_PROMPT_HISTORY_CHARS (oldest dropped).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PROMPT_HISTORY_CHARS } from '../../../src/ai/limits.ts';
import { describeEachDatabase } from '../../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../../helpers/https-server.ts';
import { fixture, unixSeconds } from './fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from './fixtures/harness.ts';

interface ChatRequest {
  messages: { role: string; content: string | null }[];
}

/** What the model answers, by the customer's exact message; anything else gets a long answer (see below). */
const ANSWERS: Record<string, string> = {
  'How much is the red bike?': 'The red bike costs 499 euro.',
  'And the other one?': 'The blue bike costs 549 euro.',
};
/** The length of the model's other answers: five exchanges of these are more than the budget, four are not. */
const LONG_ANSWER_CHARS = 1_900;

describeEachDatabase('WhatsApp conversation memory', (get) => {
  let h: Harness;
  let llm: TestHttpsServer;
  let customers = 0;
  const customer = () => `3162000${String(++customers).padStart(4, '0')}`;
  const completions = () => llm.requests.map((r) => JSON.parse(r.body.toString()) as ChatRequest);
  /** The conversation as the model was given it: its user and assistant messages. */
  const dialogue = (c: ChatRequest) => c.messages.filter((m) => m.role === 'user' || m.role === 'assistant').map((m) => [m.role, m.content]);
  const bodies = (waId: string) => h.sends().filter((s) => s.body.to === waId).map((s) => (s.body.text as { body: string }).body);
  async function write(waId: string, body: string): Promise<string> {
    const before = bodies(waId).length;
    await h.post(fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(), BODY: body }));
    await until(() => bodies(waId).length > before);
    return bodies(waId).at(-1)!;
  }

  beforeAll(async () => {
    llm = await startHttpsServer((_req, res, body) => {
      const request = JSON.parse(body.toString()) as ChatRequest;
      const question = request.messages.at(-1)!.content!;
      const content = ANSWERS[question] ?? `Answer to ${question}. `.padEnd(LONG_ANSWER_CHARS, 'x');
      sendJson(res, 200, { id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] });
    });
    // The integrator answers nothing (an empty reply is no answer, protocol §7): the AI answers every message.
    h = await startHarness(get(), { answer: () => ({ reply: '' }), env: { LLM_BASE_URL: `${llm.origin}/v1`, LLM_MODEL: 'test-model' } });
  });
  afterAll(async () => {
    await h.close();
    await llm.close();
  });

  describe('a follow-up question', () => {
    it('"And the other one?" reaches the model together with the previous exchange', async () => {
      const waId = customer();
      expect(await write(waId, 'How much is the red bike?')).toBe('The red bike costs 499 euro.');
      expect(await write(waId, 'And the other one?')).toBe('The blue bike costs 549 euro.');
      expect(dialogue(completions().at(-1)!)).toEqual([
        ['user', 'How much is the red bike?'],
        ['assistant', 'The red bike costs 499 euro.'],
        ['user', 'And the other one?'],
      ]);
    });

    it("another customer's conversation is not in it", async () => {
      const waId = customer();
      expect(await write(waId, 'And the other one?')).toBe('The blue bike costs 549 euro.');
      expect(dialogue(completions().at(-1)!)).toEqual([['user', 'And the other one?']]);
    });
  });

  describe('a long conversation', () => {
    it('is cut to the budget: the newest exchanges reach the model, the oldest are dropped', async () => {
      const waId = customer();
      for (let n = 1; n <= 5; n++) await write(waId, `Question ${n}`);
      await write(waId, 'And the other one?');
      const remembered = dialogue(completions().at(-1)!).slice(0, -1);
      // Five earlier exchanges of about 1,910 characters do not fit in 8,000; the newest four do.
      expect(remembered.filter(([role]) => role === 'user').map(([, text]) => text)).toEqual(['Question 2', 'Question 3', 'Question 4', 'Question 5']);
      expect(remembered.map(([role]) => role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
      expect(remembered.reduce((sum, [, text]) => sum + Array.from(text!).length, 0)).toBeLessThanOrEqual(MAX_PROMPT_HISTORY_CHARS);
    });
  });
});
