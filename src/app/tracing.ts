/**
 * Turns tracing on (docs/operations.md, "Tracing"): when OTEL_EXPORTER_OTLP_ENDPOINT is set, spans are batched and
 * exported over OTLP/HTTP to it, the W3C trace context is propagated, and the active span follows async calls. The
 * SDK is loaded only then, so a service without the setting pays nothing (src/tracing.ts stays on the no-op API).
 * The exporter reads the standard OTEL_EXPORTER_OTLP_* settings (headers, timeout) itself.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { enableTracing } from '../tracing.ts';

export interface Tracing {
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

export async function startTracing(endpoint: string | undefined, serviceName = 'botlink'): Promise<Tracing | null> {
  if (endpoint === undefined || endpoint === '') return null;
  const [hooks, core, sdk, otlp, resources] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const exporter = new otlp.OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter })],
  });
  context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  enableTracing();
  return { shutdown: () => provider.shutdown() };
}
