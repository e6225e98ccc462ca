/** Operations: liveness, readiness, Prometheus metrics and the OpenAPI description (docs/interfaces.md: Operations). */
import type { Metrics } from '../../metrics.ts';
import { route, type RouteDefinition } from '../route.ts';

export interface Readiness {
  /** Why the service is not ready ('starting', 'draining', 'database'), or null when it is. */
  notReadyReason(): Promise<string | null>;
}

export function operationRoutes(deps: { metrics: Metrics; readiness: Readiness; openApi: () => unknown }): RouteDefinition[] {
  return [
    route({
      method: 'get',
      path: '/healthz',
      tag: 'operations',
      summary: 'Liveness: the process answers.',
      access: 'public',
      responses: { 200: { description: 'Alive.', schema: { type: 'object', properties: { status: { const: 'ok' } } } } },
      async handler() {
        return { status: 200, body: { status: 'ok' } };
      },
    }),
    route({
      method: 'get',
      path: '/readyz',
      tag: 'operations',
      summary: 'Readiness: 503 while starting, draining or without a database.',
      access: 'public',
      responses: {
        200: { description: 'Ready.', schema: { type: 'object', properties: { status: { const: 'ready' } } } },
        503: { description: 'Not ready, with the reason.', schema: { type: 'object', properties: { status: { const: 'not_ready' }, reason: { type: 'string' } } } },
      },
      async handler() {
        const reason = await deps.readiness.notReadyReason();
        return reason ? { status: 503, body: { status: 'not_ready', reason } } : { status: 200, body: { status: 'ready' } };
      },
    }),
    route({
      method: 'get',
      path: '/metrics',
      tag: 'operations',
      summary: 'Prometheus metrics (text exposition format).',
      access: 'public',
      responses: { 200: { description: 'Metrics.', schema: { type: 'string' }, contentType: 'text/plain' } },
      async handler() {
        return { status: 200, body: await deps.metrics.registry.metrics(), headers: { 'content-type': deps.metrics.registry.contentType } };
      },
    }),
    route({
      method: 'get',
      path: '/openapi.json',
      tag: 'operations',
      summary: 'This description (OpenAPI 3.1).',
      access: 'public',
      responses: { 200: { description: 'The OpenAPI document.', schema: { type: 'object' } } },
      async handler() {
        return { status: 200, body: deps.openApi() };
      },
    }),
  ];
}
