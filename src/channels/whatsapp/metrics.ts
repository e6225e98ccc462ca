/** The WhatsApp channel's Prometheus metrics, registered on the service's own registry (src/metrics.ts). */
import { Counter, Histogram, type Registry } from 'prom-client';

export function createWhatsappMetrics(registry: Registry) {
  return {
    webhooks: new Counter({
      name: 'whatsapp_webhooks_total',
      help: 'Webhook POSTs by result: stored, unauthorized (bad or missing signature), error (not stored).',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    events: new Counter({
      name: 'whatsapp_webhook_events_total',
      help: 'Stored webhook bodies read by the worker, by outcome (processed, ignored, unknown_number, invalid, failed, deferred).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    messages: new Counter({
      name: 'whatsapp_inbound_messages_total',
      help: 'Customer messages handled, by outcome (reply, notice, notice_recent, silent, empty, cancelled, failed, workspace_disabled).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    sends: new Counter({
      name: 'whatsapp_send_attempts_total',
      help: 'Graph API send attempts, by result (accepted, retry, failed).',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    ingestDuration: new Histogram({
      name: 'whatsapp_webhook_ingest_seconds',
      help: 'From a signed webhook POST arriving to its body being committed (what Meta waits for).',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
  };
}

export type WhatsappMetrics = ReturnType<typeof createWhatsappMetrics>;
