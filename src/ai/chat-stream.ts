/**
 * Reading a streamed chat completion (`"stream": true`): server-sent events whose `data:` lines are
 * `chat.completion.chunk` objects, ended by `data: [DONE]`. Content arrives as `choices[0].delta.content` fragments;
 * tool calls as `choices[0].delta.tool_calls[]` fragments keyed by `index` (the id and name once, the arguments in
 * pieces). This is how OpenAI, vLLM, Ollama and llama.cpp server stream.
 *
 * The visible content (a reasoning model's `<think>` block taken out) goes through a {@link SentenceStream}, and each
 * complete sentence is handed to `onText` at once, so the phone can speak the first sentence while the model is still
 * writing the next. Once a tool call has begun, content is no longer spoken: it belongs to a step that is not the
 * answer.
 */
import { AiError } from './ai-error.ts';
import { isObject, parseChatCompletion, partsText, withoutThinking } from './chat-completion.ts';
import { createSentenceStream } from './sentence-stream.ts';
import type { AiStep } from './types.ts';

interface ToolCallDraft {
  id?: string;
  type?: string;
  function: { name: string; arguments: string };
}

export interface ChatStreamReader {
  /** Feeds bytes of the response body as they arrive. Throws an {@link AiError} when the server streams an error. */
  push(chunk: Buffer): void;
  /** The step the whole stream stands for, once the body has ended. */
  end(): AiStep;
  /**
   * After a failure midway: the answer made of what was already spoken, or null when nothing was (then the caller
   * may fall back to another answerer without the customer hearing two answers).
   */
  spokenSoFar(reason: AiError['reason']): AiStep | null;
}

const THINK_OPEN = '<think>';

/** The content without reasoning; a `<think>` not yet closed hides the rest, and a half-arrived `<think` is held back. */
function visible(raw: string, final: boolean): string {
  let text = withoutThinking(raw);
  if (!final) {
    const lt = text.lastIndexOf('<');
    if (lt >= 0 && lt > text.length - THINK_OPEN.length && THINK_OPEN.startsWith(text.slice(lt).toLowerCase())) text = text.slice(0, lt);
  }
  return text;
}

export function createChatStreamReader(options: { toolsOffered: boolean; round: number; onText: (piece: string) => void }): ChatStreamReader {
  const decoder = new TextDecoder();
  const sentences = createSentenceStream();
  let line = '';
  let data: string[] = [];
  let raw = '';
  let pushed = 0;
  let done = false;
  let spokenChars = 0;
  const drafts: ToolCallDraft[] = [];

  function onLine(text: string): void {
    if (text === '') return dispatch();
    if (text.startsWith(':')) return; // an SSE comment (keep-alive)
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    if (field !== 'data') return; // event:, id:, retry: mean nothing here
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    data.push(value);
  }

  function dispatch(): void {
    if (data.length === 0) return;
    const payload = data.join('\n');
    data = [];
    if (done) return;
    if (payload.trim() === '[DONE]') {
      done = true;
      return;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(payload);
    } catch (err) {
      throw new AiError('invalid_json', 'An event of the LLM stream is not valid JSON.', { cause: err });
    }
    if (!isObject(chunk)) throw new AiError('invalid_response', 'An event of the LLM stream is not a JSON object.');
    if (isObject(chunk.error)) {
      const message = typeof chunk.error.message === 'string' ? chunk.error.message.slice(0, 300) : 'no message';
      throw new AiError('invalid_response', `The LLM stream reported an error: ${message}`);
    }
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    const delta = isObject(choice) ? (choice.delta ?? choice.message) : undefined;
    if (!isObject(delta)) return; // a usage-only or role-only chunk
    if (Array.isArray(delta.tool_calls)) addToolCalls(delta.tool_calls);
    const content = partsText(delta.content);
    if (content !== '') addContent(content);
  }

  function addToolCalls(parts: unknown[]): void {
    for (const [i, part] of parts.entries()) {
      if (!isObject(part)) continue;
      const index = typeof part.index === 'number' && Number.isInteger(part.index) && part.index >= 0 && part.index < 64 ? part.index : i;
      const draft = (drafts[index] ??= { function: { name: '', arguments: '' } });
      if (typeof part.id === 'string' && part.id !== '') draft.id = part.id;
      if (typeof part.type === 'string') draft.type = part.type;
      const fn = isObject(part.function) ? part.function : {};
      if (typeof fn.name === 'string') draft.function.name += fn.name;
      if (typeof fn.arguments === 'string') draft.function.arguments += fn.arguments;
      else if (fn.arguments !== undefined) draft.function.arguments = JSON.stringify(fn.arguments);
    }
  }

  function addContent(content: string): void {
    raw += content;
    // A step that calls tools is not the answer: what it writes beside the calls is not spoken.
    if (options.toolsOffered && drafts.length > 0) return;
    const shown = visible(raw, false).trimStart();
    if (shown.length <= pushed) return;
    const more = shown.slice(pushed);
    pushed = shown.length;
    for (const piece of sentences.push(more)) options.onText(piece);
    spokenChars = sentences.consumed;
  }

  function spoken(): string {
    return sentences.text.slice(0, spokenChars).trim();
  }

  return {
    push(chunk: Buffer): void {
      line += decoder.decode(chunk, { stream: true });
      let nl = line.search(/\r\n|\r|\n/);
      while (nl >= 0) {
        const text = line.slice(0, nl);
        line = line.slice(nl + (line.startsWith('\r\n', nl) ? 2 : 1));
        onLine(text);
        nl = line.search(/\r\n|\r|\n/);
      }
    },

    end(): AiStep {
      line += decoder.decode();
      if (line !== '') onLine(line);
      line = '';
      dispatch();
      const toolCalls = drafts.filter((d) => d !== undefined).map((d) => ({ id: d.id ?? '', type: d.type ?? 'function', function: d.function }));
      const step = parseChatCompletion(
        { choices: [{ message: { content: raw, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) } }] },
        { toolsOffered: options.toolsOffered, round: options.round },
      );
      if (step.kind === 'tool_calls') return spokenChars > 0 ? { ...step, said: spoken() } : step;
      return spokenChars > 0 ? { ...step, streamed: spokenChars } : step;
    },

    spokenSoFar(reason): AiStep | null {
      if (spokenChars === 0) return null;
      const text = spoken();
      return { kind: 'answer', text, source: 'ai', streamed: text.length, cut: reason };
    },
  };
}
