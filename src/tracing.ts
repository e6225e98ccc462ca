/**
 * Tracing across the hops of a turn (docs/operations.md, "Tracing"): one `turn` span per customer message, with a
 * child span per hop (the Bot Link request, the knowledge search, the model, each tool call, the turn's database
 * write), and the W3C `traceparent` header on every request to the integrator, so their traces join ours.
 *
 * Only OpenTelemetry's API is used here. Until src/app/tracing.ts registers the SDK (OTEL_EXPORTER_OTLP_ENDPOINT
 * set), the API's tracer is a no-op: no span is recorded, no header is added, and nothing is kept per turn.
 */
import { context, INVALID_SPAN_CONTEXT, propagation, trace, SpanStatusCode, type Attributes, type Context, type Span } from '@opentelemetry/api';

const tracer = () => trace.getTracer('botlink');

/** Set once the SDK is registered; until then every helper here returns at once (no span object, no context). */
let enabled = false;
const NOT_RECORDED: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Called by src/app/tracing.ts after it registered the SDK (and by tests that register one in memory). */
export function enableTracing(): void {
  enabled = true;
}

/** The open `turn` spans, by turn id (a turn id is a UUID, unique across sessions). Empty while tracing is off. */
const turns = new Map<string, { span: Span; context: Context }>();

/** Starts the `turn` span of a customer message; a no-op when tracing is off. */
export function startTurnSpan(turnId: string, attributes: Attributes): void {
  if (!enabled) return;
  // A root span: the async context here may still hold a span of an earlier turn (a worker's loop goes on from it).
  const span = tracer().startSpan('turn', { root: true, attributes: { 'botlink.turn_id': turnId, ...attributes } });
  if (!span.isRecording()) return;
  turns.set(turnId, { span, context: trace.setSpan(context.active(), span) });
}

/** Ends the turn's span with how the turn ended (`completed`, `cancelled`, `held`, `failed`). */
export function endTurnSpan(turnId: string, outcome: string, attributes: Attributes = {}): void {
  const open = turns.get(turnId);
  if (!open) return;
  turns.delete(turnId);
  open.span.setAttributes({ 'botlink.turn_outcome': outcome, ...attributes });
  if (outcome === 'failed') open.span.setStatus({ code: SpanStatusCode.ERROR });
  open.span.end();
}

/**
 * Runs `work` inside a child span of the turn `turnId` (or of the active span when the turn has none open), so what
 * `work` sends carries the span in `traceparent`. A thrown error marks the span and is thrown on.
 */
export async function inSpan<T>(name: string, turnId: string | undefined, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  if (!enabled) return work(NOT_RECORDED);
  const parent = (turnId === undefined ? undefined : turns.get(turnId)?.context) ?? context.active();
  return tracer().startActiveSpan(name, { attributes }, parent, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Adds `traceparent` (and `tracestate`) of the active span to `headers`; nothing while tracing is off. */
export function addTraceHeaders(headers: Record<string, string>): Record<string, string> {
  if (enabled) propagation.inject(context.active(), headers);
  return headers;
}
