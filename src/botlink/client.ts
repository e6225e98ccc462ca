/**
 * The Bot Link client: sends a signed channel request to the integrator's endpoint through the guarded client and
 * classifies what came back (protocol §4.1, §7). It never throws for anything the integrator or the network does: every
 * failure is a `no_answer` outcome with its reason, so a conversation never breaks (protocol §1.8).
 */
import { CHANNEL_TIMEOUT_MS, MAX_RESPONSE_BYTES, PHONE_CHANNEL_TIMEOUT_MS } from '../limits.ts';
import type { Metrics } from '../metrics.ts';
import { OutboundError, type GuardedClient } from '../net/guarded-client.ts';
import { encodeChannelRequest, type ChannelRequest } from './channel-request.ts';
import type { Channel } from '../channels-and-handoffs.ts';
import { interpretChannelResponse, type ChannelOutcome } from './channel-response.ts';
import { addTraceHeaders } from '../tracing.ts';

export interface BotLinkExchange {
  outcome: ChannelOutcome;
  /** The status line's code, or null when none arrived. */
  httpStatus: number | null;
  /** From sending the request until the outcome was known. */
  latencyMs: number;
  /** Until the response headers arrived, or null. */
  firstByteMs: number | null;
  /** The raw response body as received (at most 64 KB), for the test button and the session record. */
  body: Buffer;
  /**
   * True when the request gave up waiting for a free connection to the endpoint and never left this process (our own
   * load, src/net/guarded-client.ts): the endpoint was not asked, so its health does not count it.
   */
  neverSent?: boolean;
}

export interface SendChannelRequest {
  endpointUrl: string;
  key: string;
  request: ChannelRequest;
  /** Default by channel: 3.5 s on the phone, 6 s otherwise (protocol §8). */
  timeoutMs?: number;
  /** Cancels the request (a newer turn barged in). */
  signal?: AbortSignal;
  /** A health probe (src/botlink/endpoint-health-tracker.ts): sent with `X-Service-Probe: 1` (protocol §4.1). */
  probe?: boolean;
}

/** Marks a health probe, so an integrator can answer it without treating it as a customer's question. */
export const PROBE_HEADER = 'X-Service-Probe';

export function channelTimeoutMs(channel: Channel): number {
  return channel === 'phone' ? PHONE_CHANNEL_TIMEOUT_MS : CHANNEL_TIMEOUT_MS;
}

export function createBotLinkClient(deps: { http: GuardedClient; metrics?: Metrics }) {
  const { http, metrics } = deps;

  return {
    async send(input: SendChannelRequest): Promise<BotLinkExchange> {
      const { body, headers } = encodeChannelRequest(input.request, input.key);
      if (input.probe) headers[PROBE_HEADER] = '1';
      const started = performance.now();
      let exchange: BotLinkExchange;
      try {
        const response = await http.request({
          method: 'POST',
          url: input.endpointUrl,
          // W3C trace context: the integrator's own traces join the turn's (docs/operations.md, "Tracing").
          headers: addTraceHeaders(headers),
          body,
          timeoutMs: input.timeoutMs ?? channelTimeoutMs(input.request.channel),
          maxBytes: MAX_RESPONSE_BYTES, // protocol §7.2: cut off at 64 KB
          ...(input.signal ? { signal: input.signal } : {}),
        });
        exchange = {
          outcome: interpretChannelResponse(response.status, response.body, response.truncated),
          httpStatus: response.status,
          latencyMs: performance.now() - started,
          firstByteMs: response.timings.firstByteMs,
          body: response.body,
        };
      } catch (err) {
        if (!(err instanceof OutboundError)) throw err;
        exchange = {
          outcome: { outcome: 'no_answer', reason: err.reason, message: err.message, problems: [] },
          httpStatus: null,
          latencyMs: performance.now() - started,
          firstByteMs: null,
          body: Buffer.alloc(0),
          ...(err.neverSent ? { neverSent: true } : {}),
        };
      }
      if (metrics) {
        const reason = exchange.outcome.outcome === 'answer' ? 'answer' : exchange.outcome.reason;
        metrics.botlinkDuration.observe({ channel: input.request.channel, outcome: exchange.outcome.outcome }, exchange.latencyMs / 1000);
        metrics.botlinkOutcomes.inc({ channel: input.request.channel, reason });
      }
      return exchange;
    },
  };
}

export type BotLinkClient = ReturnType<typeof createBotLinkClient>;
