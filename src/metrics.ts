/** Prometheus metrics (prom-client), one registry per service instance so tests can run several side by side. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createMetrics(options: { defaultMetrics?: boolean } = {}) {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  return {
    registry,
    botlinkDuration: new Histogram({
      name: 'botlink_request_duration_seconds',
      help: 'Time from sending a channel request to the integrator until its outcome was known.',
      labelNames: ['channel', 'outcome'] as const,
      // protocol §8: 3 s target, 3.5 s phone and 6 s time-outs sit on bucket edges.
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 3.5, 5, 6, 8],
      registers: [registry],
    }),
    botlinkOutcomes: new Counter({
      name: 'botlink_outcomes_total',
      help: 'Channel-request outcomes by channel and reason (answer, or why there was no answer).',
      labelNames: ['channel', 'reason'] as const,
      registers: [registry],
    }),
    // Endpoint health (src/botlink/endpoint-health.ts): changes of state this process wrote, turns that did not wait.
    endpointTransitions: new Counter({
      name: 'botlink_endpoint_transitions_total',
      help: 'Changes of an endpoint health state written by this process, by the state entered.',
      labelNames: ['to'] as const,
      registers: [registry],
    }),
    endpointWaits: new Counter({
      name: 'botlink_endpoint_waits_total',
      help: 'Turns by what they did about the endpoint health: wait, not_waited, not_sent.',
      labelNames: ['decision'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time spent answering our own HTTP API, by route and status.',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    }),
    // Outgoing webhooks (src/webhooks): attempts, their time, commit-to-receipt lag, endpoints disabled.
    webhookAttempts: new Counter({
      name: 'webhook_attempts_total',
      help: 'Webhook delivery attempts by event and verdict (succeeded, retry, exhausted, gone).',
      labelNames: ['event', 'verdict'] as const,
      registers: [registry],
    }),
    webhookAttemptDuration: new Histogram({
      name: 'webhook_attempt_duration_seconds',
      help: 'Time of one webhook attempt, from the request to the end of the (capped) answer.',
      labelNames: ['verdict'] as const,
      // The 15 s attempt time-out sits on the last edge.
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    }),
    webhookDeliveryLag: new Histogram({
      name: 'webhook_delivery_lag_seconds',
      help: 'From the commit of an event to the 2xx of its delivery, retries included.',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 300, 3600, 86400],
      registers: [registry],
    }),
    // Admission control (src/admission, docs/operations.md "Overload"): whether the engine turns new work away now.
    admissionShedding: new Gauge({
      name: 'botlink_admission_shedding',
      help: 'Whether the engine turns new work away now (1) or not (0), with the cause while it does.',
      labelNames: ['cause'] as const,
      registers: [registry],
    }),
    admissionShed: new Counter({
      name: 'botlink_admission_shed_total',
      help: 'New work turned away by admission control: phone calls refused with the busy sentence, web chat messages answered 503.',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    admissionOpenCalls: new Gauge({
      name: 'botlink_admission_open_calls',
      help: 'Phone calls admitted and still open in this process.',
      registers: [registry],
    }),
    admissionTurnsInFlight: new Gauge({
      name: 'botlink_admission_turns_in_flight',
      help: 'Turns running in this process, all channels.',
      registers: [registry],
    }),
    // Knowledge from websites and files (src/knowledge/sources, docs/knowledge.md "Websites and files").
    knowledgeSyncPages: new Counter({
      name: 'botlink_knowledge_sync_pages_total',
      help: 'Pages of website and sitemap syncs by outcome: written (new or changed), unchanged (304 or the same text), removed.',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    knowledgeSyncSkipped: new Counter({
      name: 'botlink_knowledge_sync_skipped_total',
      help: 'URLs a sync skipped (or cut), by cause: robots, noindex, not_found, site_error, unreadable, page_limit, …',
      labelNames: ['cause'] as const,
      registers: [registry],
    }),
    knowledgeSyncDuration: new Histogram({
      name: 'botlink_knowledge_sync_duration_seconds',
      help: 'Time of one website or sitemap sync, from its claim to its end, by kind and status (done, failed).',
      labelNames: ['kind', 'status'] as const,
      // issue 35: a 200-page site in 60 s, an unchanged re-sync in 10 s; a Crawl-delay makes syncs of an hour.
      buckets: [1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
      registers: [registry],
    }),
    knowledgeExtractionRestarts: new Counter({
      name: 'botlink_knowledge_extraction_restarts_total',
      help: 'Extraction workers replaced after a document failed them, by reason: time_limit, out_of_memory, crashed.',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    webhookEndpointsDisabled: new Counter({
      name: 'webhook_endpoints_disabled_total',
      help: 'Webhook endpoints disabled by the delivery worker: gone (410) or failing (5 days without a success).',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
