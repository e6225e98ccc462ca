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
import { cutToChars } from '../text/cut.ts';
import { cleanJson } from '../text/outside-text.ts';
import { AiError } from './ai-error.ts';
import { parseChatCompletion, partsText } from './chat-completion.ts';
import { isObject } from '../json-value.ts';
import { LLM_ERROR_EXCERPT_CHARS, MAX_STREAMED_CHARS } from './limits.ts';
import { createSentenceStream } from './sentence-stream.ts';
import type { AiStep } from './types.ts';

const lineEnd = /\r\n|\r|\n/g;
/** Most tool calls put together from one stream (MAX_TOOL_CALLS_PER_ROUND of them are honoured). */
const MAX_DRAFTS = 64;

interface ToolCallDraft {
  id?: string;
  type?: string;
  function: { name: string; arguments: string };
}

export interface ChatStreamReader {
  /**
   * Feeds bytes of the response body as they arrive; true once `[DONE]` has come (the rest of the body, if the server
   * keeps it open, is not waited for). Throws an {@link AiError} when the server streams an error.
   */
  push(chunk: Buffer): boolean;
  /** The step the whole stream stands for, once the body has ended. */
  end(): AiStep;
  /**
   * After a failure midway: the answer made of what was already spoken, or null when nothing was, or when the model
   * had begun to call tools (what it said was a preamble, not an answer; the caller falls back to another answerer).
   */
  spokenSoFar(reason: AiError['reason']): AiStep | null;
}

const THINK_OPEN = '<think>';
const THINK_CLOSE = '</think>';

/** How many of the last characters of `text` could begin `tag` (a tag cut by the stream), case-insensitively. */
function partialTag(text: string, tag: string): number {
  for (let k = Math.min(tag.length - 1, text.length); k > 0; k--) {
    if (tag.startsWith(text.slice(-k).toLowerCase())) return k;
  }
  return 0;
}

/**
 * Takes a reasoning model's `<think>…</think>` out of content that arrives in pieces, as `withoutThinking`
 * (./chat-completion.ts) does for a whole text (a `<think>` not closed hides the rest), holding back a tag cut in two.
 * Linear: each piece is read once, whatever the length of the whole.
 */
function createThinkFilter(): (piece: string) => string {
  let inside = false;
  let held = '';
  return (piece) => {
    let rest = held + piece;
    held = '';
    let out = '';
    for (;;) {
      const tag = inside ? THINK_CLOSE : THINK_OPEN;
      // A case-insensitive search in the text itself (lower-casing may change lengths, and so the positions).
      const found = (inside ? /<\/think>/i : /<think>/i).exec(rest);
      const at = found ? found.index : -1;
      if (at < 0) {
        const keep = partialTag(rest, tag);
        held = rest.slice(rest.length - keep);
        if (!inside) out += rest.slice(0, rest.length - keep);
        return out;
      }
      if (!inside) out += rest.slice(0, at);
      rest = rest.slice(at + tag.length);
      inside = !inside;
    }
  };
}

/** Arguments a server sent already parsed, as the text other servers send; JSON.stringify gives up some thousands of levels down. */
function argumentsText(args: unknown): string {
  try {
    return JSON.stringify(args);
  } catch (err) {
    throw new AiError('invalid_response', 'A tool call of the LLM stream has arguments nested too deeply to read.', { cause: err });
  }
}

export function createChatStreamReader(options: { toolsOffered: boolean; round: number; onText: (piece: string) => void }): ChatStreamReader {
  const decoder = new TextDecoder();
  // Far past what a reply may say aloud, the rest is not cut into sentences: none of it would be spoken.
  const sentences = createSentenceStream({ maxChars: MAX_STREAMED_CHARS });
  const visible = createThinkFilter();
  /** The current line's parts until its end arrives (joined once, so a long line costs no repeated copying). */
  let lineParts: string[] = [];
  /** The last chunk ended in CR: a LF at the start of the next one belongs to it (CRLF cut in two). */
  let afterCr = false;
  let data: string[] = [];
  let raw = '';
  let started = false;
  let done = false;
  let spokenChars = 0;
  const drafts: ToolCallDraft[] = [];
  /** Where a server's index now puts its fragments (a reused index moves on to a new call). */
  const slots = new Map<number, number>();

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
      // Each event is a JSON text of its own, read by the outside-text rule (src/text/outside-text.ts): half of a
      // surrogate pair at the end of one event and the other half at the start of the next become two U+FFFD.
      chunk = cleanJson(JSON.parse(payload) as unknown);
    } catch (err) {
      throw new AiError('invalid_json', 'An event of the LLM stream is not valid JSON.', { cause: err });
    }
    if (!isObject(chunk)) throw new AiError('invalid_response', 'An event of the LLM stream is not a JSON object.');
    if (isObject(chunk.error)) {
      const message = typeof chunk.error.message === 'string' ? cutToChars(chunk.error.message, LLM_ERROR_EXCERPT_CHARS) : 'no message';
      throw new AiError('invalid_response', `The LLM stream reported an error: ${message}`);
    }
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    const delta = isObject(choice) ? (choice.delta ?? choice.message) : undefined;
    if (!isObject(delta)) return; // a usage-only or role-only chunk
    if (Array.isArray(delta.tool_calls)) addToolCalls(delta.tool_calls);
    const content = partsText(delta.content);
    if (content !== '') addContent(content);
  }

  /**
   * Fragments are put together by `index`. Some servers send no index, or the same one for every call (Ollama sends
   * each parallel call whole, all with index 0): a fragment whose id differs from the id its index already has starts
   * a call of its own. A name is usually sent once; a fragment repeating it does not double it.
   */
  function addToolCalls(parts: unknown[]): void {
    for (const [i, part] of parts.entries()) {
      if (!isObject(part)) continue;
      const given = typeof part.index === 'number' && Number.isInteger(part.index) && part.index >= 0 && part.index < MAX_DRAFTS ? part.index : i;
      const id = typeof part.id === 'string' && part.id !== '' ? part.id : undefined;
      let at = slots.get(given) ?? given;
      const current = drafts[at];
      if (current && id !== undefined && current.id !== undefined && current.id !== id) {
        if (drafts.length >= MAX_DRAFTS) continue;
        at = drafts.length;
        slots.set(given, at);
      }
      const draft = (drafts[at] ??= { function: { name: '', arguments: '' } });
      if (id !== undefined) draft.id = id;
      if (typeof part.type === 'string') draft.type = part.type;
      const fn = isObject(part.function) ? part.function : {};
      if (typeof fn.name === 'string' && fn.name !== draft.function.name) draft.function.name += fn.name;
      if (typeof fn.arguments === 'string') draft.function.arguments += fn.arguments;
      else if (fn.arguments !== undefined) draft.function.arguments = argumentsText(fn.arguments);
    }
  }

  function addContent(content: string): void {
    raw += content;
    // A step that calls tools is not the answer: what it writes beside the calls is not spoken.
    if (options.toolsOffered && drafts.length > 0) return;
    if (sentences.text.length >= MAX_STREAMED_CHARS) return;
    let more = visible(content);
    if (!started) {
      more = more.trimStart(); // as the answer's text is trimmed
      started = more !== '';
    }
    if (more === '') return;
    const pieces = sentences.push(more);
    // Counted before they are handed on: should a listener throw, what went out before it is still known as spoken.
    spokenChars = sentences.consumed;
    for (const piece of pieces) options.onText(piece);
  }

  function spoken(): string {
    return sentences.text.slice(0, spokenChars).trim();
  }

  return {
    push(chunk: Buffer): boolean {
      let text = decoder.decode(chunk, { stream: true });
      if (afterCr && text.startsWith('\n')) text = text.slice(1);
      afterCr = false;
      let start = 0;
      for (;;) {
        lineEnd.lastIndex = start;
        const end = lineEnd.exec(text);
        if (!end) {
          if (start < text.length) lineParts.push(text.slice(start));
          return done;
        }
        const line = lineParts.length === 0 ? text.slice(start, end.index) : lineParts.join('') + text.slice(start, end.index);
        lineParts = [];
        start = end.index + end[0].length;
        if (end[0] === '\r' && start === text.length) afterCr = true;
        onLine(line);
        if (done) return true;
      }
    },

    end(): AiStep {
      const last = lineParts.join('') + decoder.decode();
      lineParts = [];
      if (last !== '') onLine(last);
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
      if (spokenChars === 0 || (options.toolsOffered && drafts.length > 0)) return null;
      const text = spoken();
      return { kind: 'answer', text, source: 'ai', streamed: text.length, cut: reason };
    },
  };
}
