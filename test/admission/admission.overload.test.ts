/**
 * Overload end to end (docs/operations.md, "Overload"): the real service with small admission bounds. Beyond them web
 * chat answers 503 with Retry-After, a new call hears the busy sentence and is ended, and the metrics say so; within
 * them everything runs as usual and an admitted call's prompt is answered.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AdmissionLimits } from '../../src/admission/admission.ts';
import { SHED_RETRY_AFTER_SECONDS } from '../../src/admission/limits.ts';
import { phrase } from '../../src/ai/phrases.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { BRIDGE_TOKEN, Caller } from '../helpers/phone-caller.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';
/** Two open calls, one turn in flight; the event loop is left out (a test cannot make it slow on purpose reliably). */
const LIMITS: AdmissionLimits = {
  maxCalls: 2,
  maxTurnsInFlight: 1,
  shedLoopDelayMs: Infinity,
  shedWindows: 1,
  shedMinTurnsInFlight: 0,
  resumeLoopDelayMs: Infinity,
  minShedMs: 0,
};

describeEachDatabase('overload: admission control', (get) => {
  let service: TestService;
  let integrator: TestHttpsServer;
  let widgetKey: string;
  /** Answers the integrator holds until released. */
  const held: (() => void)[] = [];
  const callers: Caller[] = [];
  let seq = 0;
  const callSid = () => `CA${Date.now()}${seq++}`;
  const metrics = async () => (await fetch(`${service.url}/metrics`)).text();
  const chat = () =>
    service.api('POST', '/v1/webchat/conversations', { headers: { 'x-widget-key': widgetKey, origin: SHOP }, body: { visitor_message: 'Do you ship to Belgium?', page_url: `${SHOP}/` } });

  beforeAll(async () => {
    integrator = await startHttpsServer((req, res, body) => {
      // The tools manifest (a GET): no tools.
      if (req.method !== 'POST') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"tools":[]}');
      const { message } = JSON.parse(body.toString('utf8')) as { message: string };
      held.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ reply: `Answer to: ${message}`, handled: true })));
    });
    service = await startTestService(get(), { BRIDGE_TOKEN }, { admission: LIMITS });
    const ws = await seedWorkspace(service);
    await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: `${integrator.origin}/botlink/channel` } });
    await service.api('PUT', '/v1/phone', { token: ws.owner, body: { numbers: ['+31 20 123 4567'] } });
    widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
    await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } });
  });
  afterAll(async () => {
    for (const c of callers) c.ws.terminate();
    for (const release of held.splice(0)) release();
    await service.stop();
    await integrator.close();
  });

  it('a turn in flight at the bound: web chat gets 503 with Retry-After; the admitted caller is still answered', async () => {
    const earlier = await chat(); // a conversation from before the load, whose visitor leaves contact details during it
    expect(earlier.status).toBe(201);
    const first = await Caller.connect(service);
    callers.push(first);
    first.setup(callSid());
    first.say('Where is my order 1234?');
    await expect.poll(() => held.length).toBe(1);

    const refused = await chat();
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('unavailable');
    expect(refused.headers.get('retry-after')).toBe(String(SHED_RETRY_AFTER_SECONDS));
    // The widget's script may read when to try again.
    expect(refused.headers.get('access-control-expose-headers')).toContain('Retry-After');
    const during = await metrics();
    expect(during).toContain('botlink_admission_shedding{cause="turns_in_flight"} 1');
    expect(during).toContain('botlink_admission_shed_total{kind="webchat"} 1');
    // Contact details run no turn: they get through while messages are turned away.
    const lead = await service.api('POST', `/v1/webchat/conversations/${earlier.body.conversation_id as string}/lead`, {
      headers: { 'x-widget-key': widgetKey, origin: SHOP, 'x-visitor-token': earlier.body.visitor_token as string },
      body: { name: 'Anna', email: 'anna@example.com' },
    });
    expect(lead.status).not.toBe(503);
    expect(lead.status).toBeLessThan(300);

    held.shift()!();
    expect((await first.answer()).token).toBe('Answer to: Where is my order 1234?');

    // The turn is over: the next web chat message runs, and the metric says shedding stopped.
    const admitted = await chat();
    expect(admitted.status).toBe(201);
    expect(await metrics()).toContain('botlink_admission_shedding{cause="none"} 0');
  });

  it('beyond the open calls\' bound a new call hears the busy sentence and is ended; the admitted calls are untouched', async () => {
    const second = await Caller.connect(service);
    callers.push(second);
    second.setup(callSid());
    await expect.poll(metrics).toContain('botlink_admission_open_calls 2');

    const third = await Caller.connect(service);
    callers.push(third);
    third.setup(callSid());
    expect(await third.next((f) => f.type === 'text')).toMatchObject({ token: phrase('busy', 'en'), last: true });
    const end = await third.next((f) => f.type === 'end');
    expect(JSON.parse(end.handoffData as string)).toMatchObject({ reason: 'busy' });
    expect((await third.closed).code).toBe(1000);
    const after = await metrics();
    expect(after).toContain('botlink_admission_shed_total{kind="call"} 1');
    expect(after).toContain('phone_calls_total{outcome="busy"} 1');

    // The admitted second call still talks.
    second.say('Do you ship to Belgium?');
    await expect.poll(() => held.length).toBe(1);
    held.shift()!();
    expect((await second.answer()).token).toBe('Answer to: Do you ship to Belgium?');
  });
});
