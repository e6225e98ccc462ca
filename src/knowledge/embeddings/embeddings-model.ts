/**
 * The embedding model (docs/knowledge.md, "Embeddings"): `POST {LLM_BASE_URL}/embeddings` with
 * `{model: LLM_EMBEDDING_MODEL, input: [...]}` (OpenAI-compatible, docs/interfaces.md), one vector per text, and the
 * tokens it counted (`usage`).
 *
 * The same hygiene as the other model clients (src/knowledge/doc2query/questions-model.ts, src/net/bounded-read.ts):
 * an undici Agent of its own, one deadline over connect, headers and body, a cap on the response bytes, the caller's
 * signal; every failure is an AiError with its reason. The background's texts and a turn's question each get a client
 * of their own, so a question never waits behind a batch.
 */
import type { Agent } from 'undici';
import { AiError } from '../../ai/ai-error.ts';
import { postModelJson, usageTokens } from '../../ai/model-request.ts';
import { isObject } from '../../json-value.ts';
import { deadlineAgent } from '../../net/bounded-read.ts';
import { cutToChars } from '../../text/cut.ts';
import { MAX_EMBEDDING_DIMENSIONS, MAX_EMBEDDING_INPUT_CHARS, MAX_EMBEDDING_RESPONSE_BYTES } from './limits.ts';

export interface EmbeddingsModelOptions {
  /** LLM_BASE_URL; `/embeddings` is appended to its path. */
  baseUrl: string;
  /** LLM_API_KEY; null: no Authorization header. */
  apiKey: string | null;
  /** LLM_EMBEDDING_MODEL. */
  model: string;
  /** Deadline of one request in ms. */
  timeoutMs: number;
  /** Connections kept to the model. */
  connections: number;
}

/** One vector per text given, in their order, and the tokens the request used (null when it sent no `usage`). */
export interface Embedded {
  vectors: number[][];
  tokens: number | null;
}

export interface EmbeddingsModel {
  /** The model's name, stored with each vector. */
  readonly name: string;
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Embedded>;
  close(): Promise<void>;
}

/** The vectors of an answer, by `index` (else in order): one per text, all of one length, finite numbers only; else null. */
export function parseEmbeddings(json: unknown, count: number): number[][] | null {
  const data = isObject(json) ? json.data : undefined;
  if (!Array.isArray(data) || data.length !== count) return null;
  const vectors: (number[] | undefined)[] = new Array<number[] | undefined>(count);
  for (const [i, item] of data.entries()) {
    if (!isObject(item) || !Array.isArray(item.embedding)) return null;
    const at = typeof item.index === 'number' && Number.isInteger(item.index) ? item.index : i;
    if (at < 0 || at >= count || vectors[at] !== undefined) return null;
    const vector = item.embedding as unknown[];
    if (vector.length === 0 || vector.length > MAX_EMBEDDING_DIMENSIONS || !vector.every((n) => typeof n === 'number' && Number.isFinite(n))) return null;
    vectors[at] = vector as number[];
  }
  const dimensions = vectors[0]?.length;
  if (!vectors.every((v) => v !== undefined && v.length === dimensions)) return null;
  return vectors as number[][];
}

export function createEmbeddingsModel(options: EmbeddingsModelOptions): EmbeddingsModel {
  const url = new URL(options.baseUrl.replace(/\/+$/, ''));
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/embeddings`;
  const { timeoutMs } = options;
  const agent: Agent = deadlineAgent(timeoutMs, { connections: options.connections });
  return {
    name: options.model,
    async embed(texts, callerSignal) {
      const input = texts.map((t) => cutToChars(t, MAX_EMBEDDING_INPUT_CHARS));
      const body = JSON.stringify({ model: options.model, input });
      const { status, json } = await postModelJson({ agent, url, body, apiKey: options.apiKey, timeoutMs, maxBytes: MAX_EMBEDDING_RESPONSE_BYTES, signal: callerSignal, who: 'The embedding model' });
      const vectors = parseEmbeddings(json, texts.length);
      if (vectors === null) throw new AiError('invalid_response', `The embedding response does not hold one vector of numbers per text (${texts.length}).`, { httpStatus: status });
      return { vectors, tokens: usageTokens(isObject(json) ? json.usage : undefined) };
    },
    close: () => agent.close(),
  };
}
