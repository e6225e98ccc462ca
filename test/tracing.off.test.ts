/**
 * Tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT: docs/operations.md, "Tracing"): the helpers do nothing, so a turn pays
 * nothing and the integrator gets no trace header.
 */
import { describe, expect, it } from 'vitest';
import { addTraceHeaders, endTurnSpan, inSpan, startTurnSpan } from '../src/tracing.ts';
import { startTracing } from '../src/app/tracing.ts';

describe('tracing while it is off', () => {
  it('adds no header to a request to the integrator', () => {
    expect(addTraceHeaders({ 'x-service-signature': 'abc' })).toEqual({ 'x-service-signature': 'abc' });
  });

  it('runs the work of a hop and hands it a span that records nothing', async () => {
    startTurnSpan('turn-1', { 'botlink.channel': 'phone' });
    const seen = await inSpan('botlink.request', 'turn-1', {}, async (span) => span.isRecording());
    endTurnSpan('turn-1', 'completed');
    expect(seen).toBe(false);
  });

  it('is not started without a collector', async () => {
    expect(await startTracing(undefined)).toBeNull();
    expect(await startTracing('')).toBeNull();
  });
});
