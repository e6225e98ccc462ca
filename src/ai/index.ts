/**
 * The AI of the service: `createAi(config.llm, deps)` gives the one {@link AiPort} the session runtime uses. Without
 * LLM settings it is the embedded extractive answerer; with them it is the OpenAI-compatible adapter, wrapped so that
 * any failure of the model falls back to the embedded answerer (protocol §1.8: a conversation never breaks).
 */
import type { Config } from '../config.ts';
import { errorText } from '../errors.ts';
import type { Logger } from '../log.ts';
import { EmbeddedAnswerer } from './embedded-answerer.ts';
import { AiError, OpenAiAdapter } from './openai-adapter.ts';
import type { AiPort, AiStep, AiStepInput } from './types.ts';

export type { AiPort, AiStep, AiStepInput, ConversationTurn } from './types.ts';
export { composeAnswer, createEmbeddedAnswerer, EmbeddedAnswerer } from './embedded-answerer.ts';
export { AiError, buildChatRequest, OpenAiAdapter, parseChatCompletion, systemPrompt } from './openai-adapter.ts';
export type { AiErrorReason, OpenAiAdapterOptions } from './openai-adapter.ts';
export { renderForSpeech, renderForText, speakList } from './render.ts';
export type { TextChannel } from './render.ts';
export { phrase, phrases } from './phrases.ts';
export { primaryLanguage } from '../text/language.ts';
export type { PhraseKey } from './phrases.ts';
export * from './limits.ts';

/**
 * `primary`, and on any failure of it `fallback` with the same input: the answer then carries the fallback's own
 * source ('knowledge_base' or 'fallback'), never 'ai', so the session records who really answered. A step cancelled
 * by the caller's signal (barge-in, hang-up) is not retried: the error is passed on, since nobody waits for it.
 */
export function withFallback(
  primary: AiPort,
  fallback: AiPort,
  onFallback?: (error: unknown, input: AiStepInput) => void,
): AiPort {
  return {
    name: primary.name,
    async step(input: AiStepInput): Promise<AiStep> {
      try {
        return await primary.step(input);
      } catch (err) {
        if (input.signal?.aborted === true || (err instanceof AiError && err.reason === 'aborted')) throw err;
        onFallback?.(err, input);
        return fallback.step(input);
      }
    },
  };
}

export interface AiDeps {
  /** Warns (without any message text) when the LLM failed and the embedded answerer answered instead. */
  logger?: Logger;
  /** Deadline of one LLM request in ms; default LLM_TIMEOUT_MS. */
  timeoutMs?: number;
}

/** The AI port plus `close()`, which releases the LLM connections at shutdown (a no-op for the embedded answerer). */
export interface Ai extends AiPort {
  close(): Promise<void>;
  /** A plain completion with the LLM (OpenAiAdapter.complete); absent without one (the embedded answerer writes none). */
  complete?: OpenAiAdapter['complete'];
}

/** The embedded answerer when `llm` is null (no LLM_BASE_URL); otherwise the LLM with the embedded one as fallback. */
export function createAi(llm: Config['llm'], deps: AiDeps = {}): Ai {
  const embedded = new EmbeddedAnswerer();
  if (llm === null) {
    return { name: embedded.name, step: (input) => embedded.step(input), close: async () => {} };
  }
  const adapter = new OpenAiAdapter({
    baseUrl: llm.baseUrl,
    apiKey: llm.apiKey,
    model: llm.model,
    ...(deps.timeoutMs === undefined ? {} : { timeoutMs: deps.timeoutMs }),
  });
  const ai = withFallback(adapter, embedded, (err) => {
    deps.logger?.warn(
      {
        ai: 'openai',
        reason: err instanceof AiError ? err.reason : 'error',
        httpStatus: err instanceof AiError ? err.httpStatus : null,
        err: errorText(err),
      },
      'The LLM failed; the embedded answerer answered instead',
    );
  });
  return { name: ai.name, step: (input) => ai.step(input), close: () => adapter.close(), complete: (messages, signal) => adapter.complete(messages, signal) };
}
