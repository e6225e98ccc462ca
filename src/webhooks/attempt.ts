/**
 * One delivery attempt: the signed POST through the guarded client, and what its result is written as (the error
 * sentence for the owner, the response excerpt, the outcome row).
 */
import type { AttemptOutcome } from '../../db/repositories/webhooks.repository.ts';
import type { ClaimedDelivery, RecordInput, SendOutput } from '../../machines/webhook-delivery-types.ts';
import { OutboundError, type GuardedClient } from '../net/guarded-client.ts';
import { cleanText } from '../text/outside-text.ts';
import { MAX_ERROR_CHARS, RESPONSE_EXCERPT_BYTES, WEBHOOK_USER_AGENT } from './limits.ts';
import { encodePayload } from './payload-body.ts';
import type { AttemptResult, Verdict } from './retry-policy.ts';
import type { SigningKeys } from './signing-keys.ts';
import { webhookHeaders } from './signing.ts';

/** Sends one attempt. Every failure is a result, never a rejection. */
export function createAttemptSender(deps: {
  http: Pick<GuardedClient, 'request'>;
  signingKeys: SigningKeys;
  /** The clock of `webhook-timestamp` and of the attempt's start, ms since epoch. */
  now: () => number;
  /** Uniform in [0, 1): the jitter of the next retry's delay. */
  random: () => number;
  timeoutMs: number;
}) {
  return async function send(d: ClaimedDelivery, signal: AbortSignal): Promise<SendOutput> {
    const attemptedAt = deps.now();
    const timestampSeconds = Math.floor(attemptedAt / 1000);
    const started = performance.now();
    let result: AttemptResult;
    let responseExcerpt: string | null = null;
    try {
      const body = encodePayload(d.payload as Record<string, unknown>);
      const response = await deps.http.request({
        method: 'POST',
        url: d.url,
        headers: {
          'content-type': 'application/json',
          'user-agent': WEBHOOK_USER_AGENT,
          ...webhookHeaders(deps.signingKeys(d, attemptedAt), d.eventId, timestampSeconds, body),
        },
        body,
        timeoutMs: deps.timeoutMs,
        maxBytes: RESPONSE_EXCERPT_BYTES,
        signal,
      });
      result = { kind: 'response', status: response.status, retryAfter: headerValue(response.headers['retry-after']) };
      responseExcerpt = excerpt(response.body);
    } catch (err) {
      result =
        err instanceof OutboundError
          ? { kind: 'error', reason: err.reason, message: err.message }
          : { kind: 'error', reason: 'internal', message: err instanceof Error ? err.message : String(err) };
    }
    return { deliveryId: d.id, attemptedAt, latencyMs: performance.now() - started, result, responseExcerpt, jitterSample: deps.random() };
  };
}

/** The row an attempt and its verdict are written as. */
export function attemptOutcome(input: RecordInput): AttemptOutcome {
  const { delivery: d, attempt, verdict } = input;
  return {
    deliveryId: d.id,
    endpointId: d.endpointId,
    kind: d.kind,
    attempt: d.attemptCount + 1,
    url: d.url,
    startedAt: new Date(attempt.attemptedAt),
    succeeded: verdict.outcome === 'succeeded',
    status: verdict.outcome === 'succeeded' ? 'succeeded' : verdict.outcome === 'retry' ? 'pending' : 'failed',
    nextAttemptAt: verdict.outcome === 'retry' ? new Date(verdict.nextAttemptAt) : null,
    httpStatus: attempt.result.kind === 'response' ? attempt.result.status : null,
    latencyMs: attempt.latencyMs,
    error: attemptError(attempt.result, verdict),
    responseExcerpt: attempt.responseExcerpt,
    goneReason: verdict.outcome === 'gone' ? `The receiver answered 410 Gone at ${new Date(attempt.attemptedAt).toISOString()}: it wants no more deliveries.` : null,
  };
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

/** One decoder for every excerpt (it keeps no state between calls without `stream`). */
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** The answer as text for the log: at most RESPONSE_EXCERPT_BYTES of UTF-8, cut on a character boundary. */
function excerpt(body: Buffer): string {
  // Only the bytes kept are decoded (a character cut at the end becomes one U+FFFD, dropped below); outside text is
  // made storable (U+0000 cannot go into a PostgreSQL text column).
  let text = cleanText(utf8.decode(body.subarray(0, RESPONSE_EXCERPT_BYTES)));
  while (Buffer.byteLength(text) > RESPONSE_EXCERPT_BYTES) text = text.slice(0, -1);
  return text;
}

/** The error column of an attempt: a sentence for the owner, empty on success. */
function attemptError(result: AttemptResult, verdict: Verdict): string | null {
  if (verdict.outcome === 'succeeded') return null;
  let text: string;
  if (result.kind === 'error') text = `${result.reason}: ${result.message}`;
  else if (result.status >= 300 && result.status <= 399) text = `HTTP ${result.status}: a redirect is a failure (redirects are not followed; save the final URL).`;
  else if (result.status === 410) text = 'HTTP 410 Gone: the receiver wants no more deliveries.';
  else text = `HTTP ${result.status}: only a 2xx status counts as received.`;
  return text.slice(0, MAX_ERROR_CHARS);
}
