/** Why a step of the LLM failed (src/ai/openai-adapter.ts); the session falls back to the embedded answerer on it. */

import { BotlinkError, type FailureReason } from '../errors.ts';

export type AiErrorReason = Extract<FailureReason, 'timeout' | 'aborted' | 'connection' | 'status' | 'too_large' | 'invalid_json' | 'invalid_response' | 'empty'>;

/** Why a step of the LLM failed; `message` is for the operator's log (it never contains the API key). */
export class AiError extends BotlinkError {
  readonly reason: AiErrorReason;
  /** The LLM's HTTP status, when one arrived. */
  readonly httpStatus: number | null;

  constructor(reason: AiErrorReason, message: string, options?: ErrorOptions & { httpStatus?: number | null }) {
    super('ai', message, options);
    this.reason = reason;
    this.httpStatus = options?.httpStatus ?? null;
  }
}

