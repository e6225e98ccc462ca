/**
 * Tracing across the hops of a turn (docs/operations.md, "Tracing"), with OpenTelemetry's SDK in memory: a WhatsApp
 * message through the real service gives one `turn` span with its hops as children, and the integrator receives the
 * W3C `traceparent` of the Bot Link request, so its own traces join ours.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { enableTracing } from '../src/tracing.ts';
import { describeEachDatabase } from './helpers/db.ts';
import { fixture, unixSeconds } from './channels/whatsapp/fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from './channels/whatsapp/fixtures/harness.ts';

const exporter = new InMemorySpanExporter();
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }));
enableTracing();

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

describeEachDatabase('tracing a turn', (get) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(get(), {
      answer: (request) => (request.message.includes('opening hours') ? { reply: 'We do not know that here.', handled: false } : undefined),
    });
  });
  afterAll(async () => {
    await h.close();
  });

  async function turnSpans(text: string): Promise<{ turn: ReadableSpan; children: ReadableSpan[]; traceparent: string }> {
    const waId = `3161${String(Date.now()).slice(-7)}`;
    const body = fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(), BODY: text });
    expect((await h.post(body)).status).toBe(200);
    const request = await until(() => h.integrator.requests.find((r) => r.body.toString('utf8').includes(text)));
    const turn = await until(() =>
      exporter.getFinishedSpans().find((s) => s.name === 'turn' && s.spanContext().traceId === String(request.headers.traceparent).split('-')[1]),
    );
    const children = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === turn.spanContext().traceId && s !== turn);
    return { turn, children, traceparent: String(request.headers.traceparent) };
  }

  it('gives the turn one span, its hops as children, and the integrator the Bot Link request as its parent', async () => {
    const { turn, children, traceparent } = await turnSpans('Where is my order 1042?');
    expect(turn.attributes).toMatchObject({ 'botlink.channel': 'whatsapp', 'botlink.turn_outcome': 'completed', 'botlink.source': 'integrator' });
    const names = children.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['ingress', 'botlink.request', 'db.turn_write']));
    for (const child of children) expect(parentOf(child)).toBe(turn.spanContext().spanId);
    const botlink = children.find((s) => s.name === 'botlink.request')!;
    expect(botlink.attributes).toMatchObject({ 'botlink.outcome': 'answer', 'http.response.status_code': 200 });
    // W3C trace context: version, trace id, the parent span (our Bot Link request), sampled.
    expect(traceparent).toBe(`00-${turn.spanContext().traceId}-${botlink.spanContext().spanId}-01`);
  });

  it('traces the knowledge search and the model when the integrator does not handle the question', async () => {
    const { turn, children } = await turnSpans('What are your opening hours on Sunday?');
    expect(turn.attributes['botlink.source']).not.toBe('integrator');
    expect(children.map((s) => s.name)).toEqual(expect.arrayContaining(['botlink.request', 'knowledge.search', 'model']));
    // Every span ended inside the turn's: before it, in the order spans ended (the in-memory exporter receives each
    // as it ends). Not by their end times: each span's clock is anchored on Date.now() when it starts, so two spans'
    // times can disagree by a millisecond or more (seen once in a full run).
    const ended = exporter.getFinishedSpans();
    expect(children.filter((s) => ended.indexOf(s) > ended.indexOf(turn)).map((s) => s.name)).toEqual([]);
  });
});
