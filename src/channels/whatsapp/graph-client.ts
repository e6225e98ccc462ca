/**
 * Sending a message with Meta's Graph API: `POST {WHATSAPP_GRAPH_URL}/{phone_number_id}/messages` with
 * `Authorization: Bearer <the workspace's access token>` and
 * `{messaging_product:'whatsapp', to, type:'text', text:{body, preview_url:false}}`, or, with reply buttons,
 * `{messaging_product:'whatsapp', to, type:'interactive', interactive:{type:'button', body:{text},
 * action:{buttons:[{type:'reply', reply:{id, title}}]}}}` (at most 3 buttons of 20 characters).
 *
 * Why not the guarded client (src/net): that one is for URLs an integrator gives us. WHATSAPP_GRAPH_URL is the
 * operator's setting, read once at start (Meta's by default; a local stand-in in tests), so this is a plain undici
 * Agent of our own (never the global dispatcher) with the same hygiene as src/ai/openai-adapter.ts, from the same
 * helpers (src/net/bounded-read.ts): one deadline over connect, headers and body, a cap on the bytes read, and the
 * caller's signal.
 *
 * The answer is classified, never thrown: the caller decides from `retryable` whether to try again.
 */
import type { Agent } from 'undici';
import {
  GRAPH_CONNECTIONS,
  GRAPH_ERROR_TEXT_CHARS,
  GRAPH_MAX_RESPONSE_BYTES,
  GRAPH_RETRYABLE_CODES,
  GRAPH_TIMEOUT_MS,
  MAX_INTERACTIVE_BODY_CHARS,
  MAX_REPLY_BUTTON_ID_CHARS,
  MAX_REPLY_BUTTON_TITLE_CHARS,
  MAX_REPLY_BUTTONS,
} from './limits.ts';
import { deadlineAgent, readCapped, requestUntil, startDeadline } from '../../net/bounded-read.ts';
import { isObject } from '../../json-value.ts';
import type { FailureReason } from '../../errors.ts';

/** A reply button of an interactive message: its id comes back in the customer's tap (`button_reply.id`). */
export interface ReplyButton {
  id: string;
  title: string;
}

export interface SendInput {
  phoneNumberId: string;
  accessToken: string;
  /** The customer's wa_id. */
  to: string;
  body: string;
  /** Reply buttons: the message is sent as `interactive` with them; absent or null: a text message. */
  buttons?: readonly ReplyButton[] | null;
  signal?: AbortSignal;
}

export type SendOutcome =
  | { ok: true; httpStatus: number; /** `messages[0].id`: status webhooks name it. */ messageId: string | null }
  | {
      ok: false;
      /** 5xx, 429, a rate-limit or temporary Graph code, or no answer at all: worth another attempt later. */
      retryable: boolean;
      reason: Extract<FailureReason, 'timeout' | 'aborted' | 'connection' | 'status'>;
      httpStatus: number | null;
      /** Graph's `error.code` (131047: outside the 24-hour window), when the body had one. */
      code: number | null;
      /** For the message row and the log; never the token. */
      detail: string;
      /** Meta's Retry-After header, when it sent one (read with parseRetryAfter, src/net/retry-schedule.ts). */
      retryAfter: string | null;
    };

export interface GraphClientOptions {
  /** WHATSAPP_GRAPH_URL, e.g. `https://graph.facebook.com/v21.0`. */
  graphUrl: string;
  /** Deadline per request in ms; default {@link GRAPH_TIMEOUT_MS}. */
  timeoutMs?: number;
}

export class GraphClient {
  readonly #base: URL;
  readonly #timeoutMs: number;
  readonly #agent: Agent;

  constructor(options: GraphClientOptions) {
    const base = new URL(options.graphUrl);
    if (base.protocol !== 'https:') throw new RangeError('GraphClient: graphUrl must be https');
    base.pathname = base.pathname.replace(/\/+$/, '');
    this.#base = base;
    this.#timeoutMs = options.timeoutMs ?? GRAPH_TIMEOUT_MS;
    this.#agent = deadlineAgent(this.#timeoutMs, { connections: GRAPH_CONNECTIONS });
  }

  async send(input: SendInput): Promise<SendOutcome> {
    const body = JSON.stringify(messageBody(input));
    const deadline = startDeadline(this.#timeoutMs, input.signal);
    const { signal } = deadline;
    const failure = (err: unknown): SendOutcome => {
      const timedOut = deadline.timedOut();
      const aborted = deadline.cancelled();
      const detail = timedOut ? `no answer within ${this.#timeoutMs} ms` : err instanceof Error ? err.message : String(err);
      return { ok: false, retryable: !aborted, reason: timedOut ? 'timeout' : aborted ? 'aborted' : 'connection', httpStatus: null, code: null, detail: detail.slice(0, GRAPH_ERROR_TEXT_CHARS), retryAfter: null };
    };

    let status: number;
    let retryAfter: string | string[] | undefined;
    let raw: Buffer;
    try {
      const response = await requestUntil(
        this.#agent,
        {
          origin: this.#base.origin,
          path: `${this.#base.pathname}/${encodeURIComponent(input.phoneNumberId)}/messages`,
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${input.accessToken}` },
          body,
        },
        signal,
      );
      status = response.statusCode;
      retryAfter = response.headers['retry-after'];
      raw = (await readCapped(response.body, GRAPH_MAX_RESPONSE_BYTES, signal)).body;
    } catch (err) {
      return failure(err);
    }

    const json = parseJson(raw);
    if (status >= 200 && status <= 299) {
      const messages = isObject(json) && Array.isArray(json.messages) ? json.messages : [];
      const first: unknown = messages[0];
      const messageId = isObject(first) && typeof first.id === 'string' && first.id !== '' ? first.id : null;
      return { ok: true, httpStatus: status, messageId };
    }
    const error = isObject(json) && isObject(json.error) ? json.error : {};
    const code = typeof error.code === 'number' ? error.code : null;
    const details = isObject(error.error_data) && typeof error.error_data.details === 'string' ? error.error_data.details : null;
    const message = typeof error.message === 'string' ? error.message : raw.toString('utf8');
    const detail = [message, details].filter((t) => t && t.trim() !== '').join(': ').replace(/\s+/g, ' ').trim().slice(0, GRAPH_ERROR_TEXT_CHARS);
    const retryable = status >= 500 || status === 429 || (code !== null && GRAPH_RETRYABLE_CODES.has(code));
    return { ok: false, retryable, reason: 'status', httpStatus: status, code, detail: detail || `HTTP ${status}`, retryAfter: headerValue(retryAfter) };
  }

  /** Closes the connections once the sends in flight are done (each ends by its own deadline). */
  async close(): Promise<void> {
    await this.#agent.close();
  }
}

/** The Graph API's message object: text, or interactive with reply buttons cut to what Meta allows. */
function messageBody(input: SendInput): Record<string, unknown> {
  if (!input.buttons || input.buttons.length === 0) {
    return { messaging_product: 'whatsapp', to: input.to, type: 'text', text: { body: input.body, preview_url: false } };
  }
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: input.to,
    type: 'interactive',
    interactive: {
      type: 'button',
      body: { text: cutChars(input.body, MAX_INTERACTIVE_BODY_CHARS) },
      action: {
        buttons: input.buttons.slice(0, MAX_REPLY_BUTTONS).map((b) => ({ type: 'reply', reply: { id: b.id.slice(0, MAX_REPLY_BUTTON_ID_CHARS), title: cutChars(b.title, MAX_REPLY_BUTTON_TITLE_CHARS) } })),
      },
    },
  };
}

function cutChars(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join('');
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
}

/** Retry-After in seconds (the form Meta uses); an HTTP date is not worth the parsing here. */
function headerValue(header: string | string[] | undefined): string | null {
  return (Array.isArray(header) ? header[0] : header) ?? null;
}

