/**
 * The chat-completions response (interfaces.md: OpenAI-compatible, with `tool_calls`): the step a completion stands
 * for. A streamed completion is put together by ./chat-stream.ts and read by the same function.
 */
import type { ToolInvocation } from '../botlink/tools-types.ts';
import { AiError } from './ai-error.ts';
import { MAX_TOOL_CALLS_PER_ROUND } from './limits.ts';
import type { AiStep } from './types.ts';

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `content` is a string, or (some servers) an array of parts of which the text parts count. */
export function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
  return '';
}

/**
 * Reasoning models served by Ollama, vLLM or llama.cpp put their thinking in the content; it is not for customers. A
 * `<think>` that is not closed hides the rest.
 */
export function withoutThinking(text: string): string {
  return text.replace(/<think>[\s\S]*?(<\/think>|$)/gi, '');
}

/** The text of `content` for the customer. */
export function contentText(content: unknown): string {
  return withoutThinking(partsText(content)).trim();
}

function parseArguments(raw: unknown): unknown {
  // Some servers send the arguments already parsed.
  if (typeof raw !== 'string') return raw ?? {};
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    // Kept raw: the session reports invalid arguments back to the model, which can correct itself.
    return raw;
  }
}

/**
 * The step a chat completion stands for. Tool calls count only when tools were offered (a model that calls tools
 * after the last round is ignored, and its content is used if it wrote any); at most MAX_TOOL_CALLS_PER_ROUND calls
 * are honoured. `round` numbers the synthetic ids of calls a server sent without one.
 */
export function parseChatCompletion(body: unknown, options: { toolsOffered: boolean; round: number }): AiStep {
  const choices = isObject(body) ? body.choices : undefined;
  const message = Array.isArray(choices) && isObject(choices[0]) ? choices[0].message : undefined;
  if (!isObject(message)) throw new AiError('invalid_response', 'The LLM response has no choices[0].message.');

  if (options.toolsOffered && Array.isArray(message.tool_calls)) {
    const calls: ToolInvocation[] = [];
    const seen = new Set<string>();
    for (const [i, raw] of message.tool_calls.entries()) {
      if (calls.length >= MAX_TOOL_CALLS_PER_ROUND) break;
      if (!isObject(raw) || !isObject(raw.function) || (raw.type !== undefined && raw.type !== 'function')) continue;
      const name = raw.function.name;
      if (typeof name !== 'string' || name === '') continue;
      let id = typeof raw.id === 'string' && raw.id !== '' ? raw.id : `call_${options.round}_${i}`;
      if (seen.has(id)) id = `${id}_${i}`;
      seen.add(id);
      calls.push({ id, name, args: parseArguments(raw.function.arguments) });
    }
    if (calls.length > 0) return { kind: 'tool_calls', calls };
  }

  const text = contentText(message.content);
  if (text === '') throw new AiError('empty', 'The LLM returned neither content nor a usable tool call.');
  return { kind: 'answer', text, source: 'ai' };
}

