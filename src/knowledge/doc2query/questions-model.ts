/**
 * The model that writes a passage's questions: one chat completion (OpenAI-compatible, `POST {LLM_BASE_URL}/chat/completions`,
 * docs/interfaces.md) with our own instructions and no tools, and the tokens it used (`usage`).
 *
 * Why not OpenAiAdapter.complete (src/ai/openai-adapter.ts): it answers the text only, and the questions' cost is their
 * tokens. The same hygiene is kept (src/net/bounded-read.ts): an undici Agent of our own, one deadline over connect,
 * headers and body, a cap on the response bytes, the caller's signal; every failure is an AiError with its reason.
 */
import type { Agent } from 'undici';
import { contentText } from '../../ai/chat-completion.ts';
import { AiError } from '../../ai/ai-error.ts';
import { MAX_LLM_RESPONSE_BYTES } from '../../ai/limits.ts';
import { postModelJson, usageTokens } from '../../ai/model-request.ts';
import { isObject } from '../../json-value.ts';
import { deadlineAgent } from '../../net/bounded-read.ts';
import { cleanJson } from '../../text/outside-text.ts';
import { QUESTION_REQUESTS_PER_ENGINE, QUESTIONS_TEMPERATURE, QUESTIONS_TIMEOUT_MS } from './limits.ts';

export interface QuestionsModelOptions {
  /** LLM_BASE_URL; `/chat/completions` is appended to its path. */
  baseUrl: string;
  /** LLM_API_KEY; null: no Authorization header. */
  apiKey: string | null;
  /** LLM_MODEL. */
  model: string;
  /** Deadline of one request in ms; default QUESTIONS_TIMEOUT_MS. */
  timeoutMs?: number;
}

/** What the model wrote, and the tokens it counted (prompt and completion); null when it sent no `usage`. */
export interface Completion {
  text: string;
  tokens: number | null;
}

export interface QuestionsModel {
  complete(messages: { role: 'system' | 'user'; content: string }[], signal?: AbortSignal): Promise<Completion>;
  close(): Promise<void>;
}

export function createQuestionsModel(options: QuestionsModelOptions): QuestionsModel {
  const url = new URL(`${options.baseUrl.replace(/\/+$/, '')}`);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/chat/completions`;
  const timeoutMs = options.timeoutMs ?? QUESTIONS_TIMEOUT_MS;
  const agent: Agent = deadlineAgent(timeoutMs, { connections: QUESTION_REQUESTS_PER_ENGINE });
  return {
    async complete(messages, callerSignal) {
      const body = JSON.stringify({ model: options.model, temperature: QUESTIONS_TEMPERATURE, messages });
      const { status, json: parsed } = await postModelJson({ agent, url, body, apiKey: options.apiKey, timeoutMs, maxBytes: MAX_LLM_RESPONSE_BYTES, signal: callerSignal, who: 'The LLM' });
      const json = cleanJson(parsed);
      const choices = isObject(json) ? json.choices : undefined;
      const message = Array.isArray(choices) && isObject(choices[0]) ? choices[0].message : undefined;
      if (!isObject(message)) throw new AiError('invalid_response', 'The LLM response has no choices[0].message.', { httpStatus: status });
      return { text: contentText(message.content), tokens: usageTokens(isObject(json) ? json.usage : undefined) };
    },
    close: () => agent.close(),
  };
}
