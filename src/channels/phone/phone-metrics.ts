/** The phone channel's Prometheus metrics, registered on the service's registry (src/metrics.ts). */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { CHANNEL_TARGET_MS } from '../../limits.ts';

export function createPhoneMetrics(registry: Registry) {
  const registers = [registry];
  // Around the filler (1.5 s) and the spec's targets (3 s answer, 3.5 s phone deadline; protocol §8).
  const buckets = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, CHANNEL_TARGET_MS / 1000, 3.5, 5, 8];
  return {
    framesDropped: new Counter({
      name: 'phone_frames_dropped_total',
      help: 'Inbound ConversationRelay frames dropped (the call went on), by reason.',
      labelNames: ['reason'] as const,
      registers,
    }),
    upgradesRefused: new Counter({
      name: 'phone_upgrades_refused_total',
      help: 'Phone WebSocket upgrades refused, by reason (unauthorized, draining, not_configured).',
      labelNames: ['reason'] as const,
      registers,
    }),
    calls: new Counter({
      name: 'phone_calls_total',
      help: 'Phone calls that sent setup, by outcome (answered, unknown_number, failed, busy: refused at the engine\'s bound).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    activeCalls: new Gauge({ name: 'phone_calls_active', help: 'Phone WebSockets open now.', registers }),
    fillers: new Counter({ name: 'phone_fillers_total', help: 'Filler sentences spoken because the answer was not ready in time.', registers }),
    firstText: new Histogram({
      name: 'phone_first_text_seconds',
      help: "From the caller's final prompt to the first text frame we sent (the filler or the answer).",
      buckets,
      registers,
    }),
    reply: new Histogram({
      name: 'phone_reply_seconds',
      help: "From the caller's final prompt to the answer's text frame.",
      buckets,
      registers,
    }),
    promptsMerged: new Counter({
      name: 'phone_prompts_merged_total',
      help: "Caller prompts that waited, merged with the next, because the call's turns in flight were at their bound.",
      registers,
    }),
    staleReplies: new Counter({
      name: 'phone_stale_replies_total',
      help: 'Replies not spoken because the caller interrupted, spoke again or hung up first.',
      registers,
    }),
  };
}

export type PhoneMetrics = ReturnType<typeof createPhoneMetrics>;
