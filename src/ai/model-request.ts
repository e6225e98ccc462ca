/**
 * One JSON POST to an OpenAI-compatible model endpoint for background work (the AI's questions, the embeddings;
 * docs/knowledge.md): one deadline over connect, headers and body, a cap on the response bytes, the caller's signal,
 * and every failure an {@link AiError} with its reason. The conversation's own client (./openai-adapter.ts) streams
 * and keeps its own loop.
 */
import type { Agent } from 'undici';
import { isObject } from '../json-value.ts';
import { readCapped, requestUntil, startDeadline } from '../net/bounded-read.ts';
import { AiError } from './ai-error.ts';
import { errorExcerpt } from './openai-adapter.ts';

export interface ModelPost {
  agent: Agent;
  /** The endpoint's full URL (`…/chat/completions`, `…/embeddings`). */
  url: URL;
  body: string;
  /** Sent as `Authorization: Bearer …`; null: none (local servers). */
  apiKey: string | null;
  timeoutMs: number;
  /** Most response bytes read; more is a `too_large` failure. */
  maxBytes: number;
  signal?: AbortSignal | undefined;
  /** Who answers, in error messages: "The LLM", "The embedding model". */
  who: string;
}

/** The parsed JSON of a 2xx answer, with its status; anything else throws an AiError. */
export async function postModelJson(o: ModelPost): Promise<{ status: number; json: unknown }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (o.apiKey !== null) headers.authorization = `Bearer ${o.apiKey}`;
  const deadline = startDeadline(o.timeoutMs, o.signal);
  const { signal } = deadline;
  let status: number;
  let raw: { body: Buffer; truncated: boolean };
  try {
    const response = await requestUntil(o.agent, { origin: o.url.origin, path: `${o.url.pathname}${o.url.search}`, method: 'POST', headers, body: o.body }, signal);
    status = response.statusCode;
    raw = await readCapped(response.body, o.maxBytes, signal);
  } catch (err) {
    if (deadline.timedOut()) throw new AiError('timeout', `${o.who} did not answer within ${o.timeoutMs} ms.`, { cause: err });
    if (signal.aborted) throw new AiError('aborted', `The request to ${o.who.replace(/^The /, 'the ')} was cancelled.`, { cause: err });
    throw new AiError('connection', `${o.who} at ${o.url.host} could not be reached: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (status < 200 || status > 299) throw new AiError('status', `${o.who} answered HTTP ${status}${errorExcerpt(raw.body)}.`, { httpStatus: status });
  if (raw.truncated) throw new AiError('too_large', `${o.who}'s response exceeded ${o.maxBytes} bytes.`, { httpStatus: status });
  try {
    return { status, json: JSON.parse(raw.body.toString('utf8')) as unknown };
  } catch (err) {
    throw new AiError('invalid_json', `${o.who}'s response is not valid JSON.`, { cause: err, httpStatus: status });
  }
}

/** The tokens of a response's `usage`: prompt + completion, else total; null when neither is a count. */
export function usageTokens(usage: unknown): number | null {
  if (!isObject(usage)) return null;
  const count = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);
  const prompt = count(usage.prompt_tokens);
  const completion = count(usage.completion_tokens);
  if (prompt !== null || completion !== null) return (prompt ?? 0) + (completion ?? 0);
  return count(usage.total_tokens);
}
