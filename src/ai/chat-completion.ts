/**
 * The chat-completions response (docs/interfaces.md: OpenAI-compatible, with `tool_calls`): the step a completion stands
 * for. A streamed completion is put together by ./chat-stream.ts and read by the same function.
 *
 * The model's text follows the outside-text rule (src/text/outside-text.ts), applied where its JSON is parsed: the
 * response body here and in ./chat-stream.ts, and the arguments of a tool call, which are JSON inside that JSON.
 */
import { MAX_TOOL_ARGS_DEPTH } from '../botlink/tool-schema.ts';
import type { ToolInvocation } from '../botlink/tools-types.ts';
import { cleanJson } from '../text/outside-text.ts';
import { AiError } from './ai-error.ts';
import { MAX_TOOL_CALLS_PER_ROUND } from './limits.ts';
import type { AiStep } from './types.ts';
import { isObject } from '../json-value.ts';

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

/** Whether `value` has more than `limit` levels of arrays and objects (the value itself being the first). */
function deeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit <= 0) return true;
  return (Array.isArray(value) ? value : Object.values(value)).some((child) => deeperThan(child, limit - 1));
}

/**
 * The arguments of a tool call as the session keeps them (with the turn, as JSON). Arguments that are not JSON are
 * kept as the model's text: the session reports invalid arguments back to the model, which can correct itself. So are
 * arguments nested deeper than a tool accepts (MAX_TOOL_ARGS_DEPTH): they would be refused anyway, and a value some
 * thousands of levels deep could not be written out as JSON again with the turn.
 */
function parseArguments(raw: unknown): unknown {
  // Some servers send the arguments already parsed (and cleaned with the rest of the response).
  if (typeof raw !== 'string') {
    if (deeperThan(raw, MAX_TOOL_ARGS_DEPTH)) return `(arguments nested deeper than ${MAX_TOOL_ARGS_DEPTH} levels)`;
    return raw ?? {};
  }
  if (raw.trim() === '') return {};
  let args: unknown;
  try {
    args = cleanJson(JSON.parse(raw) as unknown);
  } catch {
    return raw;
  }
  return deeperThan(args, MAX_TOOL_ARGS_DEPTH) ? raw : args;
}

/**
 * The step a (not streamed) response body stands for: UTF-8 JSON, read by {@link parseChatCompletion}. Throws an
 * {@link AiError}.
 */
export function readChatCompletion(body: Buffer, options: { toolsOffered: boolean; round: number }): AiStep {
  let json: unknown;
  try {
    json = cleanJson(JSON.parse(body.toString('utf8')) as unknown);
  } catch (err) {
    throw new AiError('invalid_json', 'The LLM response is not valid JSON.', { cause: err });
  }
  return parseChatCompletion(json, options);
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

