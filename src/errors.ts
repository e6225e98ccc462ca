/**
 * One errors module for the whole service (undici's `lib/core/errors.js`, fastify's `lib/errors.js`): every error we
 * raise on purpose is an {@link AppError} with a stable `code`; the HTTP status and the JSON body
 * `{"error":{"code","message","details"}}` are derived from that code in one table.
 */

/** Every stable error code and the HTTP status it maps to. */
export const errorStatus = {
  bad_request: 400,
  invalid_json: 400,
  validation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  workspace_disabled: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  /** Another user holds the conversation (POST /v1/sessions/{id}/takeover). */
  taken: 409,
  /** Only the user who holds the conversation may do this. */
  not_holder: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  /** An agent's message that is empty or too long for its channel. */
  invalid_message: 422,
  /** A phone session: the phone keeps its transfer; nobody takes it over in the inbox. */
  phone_session: 422,
  /** WhatsApp: more than 24 hours since the customer's last message (Meta's customer-service window). */
  whatsapp_window_closed: 422,
  invalid_url: 422,
  invalid_key: 422,
  rate_limited: 429,
  internal: 500,
  /** The workspace's language model failed, or answered what could not be read, for a request that waits on it. */
  model_failed: 502,
  unavailable: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof errorStatus;

/**
 * The base of every error the service raises on purpose (undici's `UndiciError`): a stable `code` to branch on, and
 * the class's name. Subclasses: {@link AppError} (the API's answers), {@link ConfigError}, `OutboundError`,
 * `RefusedAddressError`, `BodyTooLargeError` (src/net), `AiError` (src/ai), `WebhookPayloadError` (WhatsApp).
 */
export class BotlinkError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * Why a request to someone else's server (the integrator, the LLM, Meta's Graph API, a webhook receiver) gave no
 * usable answer: one set of words, from which each client's own failure union is picked.
 */
export const FAILURE_REASONS = [
  // Before a response: the guarded client (src/net).
  'invalid_url',
  'refused_address',
  'timeout',
  'tls',
  'connection',
  'aborted',
  // A response that is no answer.
  'status',
  'too_large',
  'cut_off',
  'invalid_json',
  'invalid_response',
  'empty',
  'empty_reply',
  // Not waited for: the endpoint is down (src/botlink/endpoint-health.ts).
  'endpoint_down',
  // Tools (protocol §2.5, §7.3, §7.5) and settings.
  'tool_error',
  'unknown_tool',
  'invalid_args',
  'not_configured',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

export class AppError extends BotlinkError {
  declare readonly code: ErrorCode;
  readonly details: unknown;
  /** More fields of the error object (the holder of a taken conversation). */
  fields: Record<string, unknown> = {};

  constructor(code: ErrorCode, message: string, details?: unknown, options?: ErrorOptions) {
    super(code, message, options);
    this.details = details;
  }

  get status(): number {
    return errorStatus[this.code];
  }

  toJSON(): { error: { code: ErrorCode; message: string; details?: unknown } } {
    return {
      error: { ...this.fields, code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) },
    };
  }
}

/** A setting in the environment is missing or wrong; `main` prints the message (one sentence naming it) and exits 1. */
export class ConfigError extends BotlinkError {
  constructor(message: string) {
    super('config', message);
  }
}

export const notFound = (what: string): AppError => new AppError('not_found', `${what} was not found.`);
export const forbidden = (message = 'Your role may not do this; owners and admins only.'): AppError =>
  new AppError('forbidden', message);

/** Every way into a disabled workspace (its tokens, keys, sign-in) is refused with this (docs/operations.md). */
export const workspaceDisabled = (): AppError =>
  new AppError('workspace_disabled', 'This workspace is disabled by the operator of this service; ask them to enable it again.');

/** The message of anything thrown (an Error's message, anything else as a string), for logs and failure details. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
