import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildChannelRequest } from '../../src/botlink/channel-request.ts';
import type { Channel } from '../../src/channels-and-handoffs.ts';
import { channelTimeoutMs, createBotLinkClient } from '../../src/botlink/client.ts';
import { MAX_RESPONSE_BYTES, PHONE_CHANNEL_TIMEOUT_MS, CHANNEL_TIMEOUT_MS } from '../../src/limits.ts';
import { createMetrics } from '../../src/metrics.ts';
import { GuardedClient } from '../../src/net/guarded-client.ts';
import { verifyChannelRequest } from '../../src/receiver/index.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';

const key = 'k'.repeat(64);

describe('the Bot Link client (protocol §4.1, §7)', () => {
  let integrator: TestHttpsServer;
  let http: GuardedClient;
  const metrics = createMetrics({ defaultMetrics: false });
  const botlink = () => createBotLinkClient({ http, metrics });
  const send = (overrides: { url?: string; timeoutMs?: number; signal?: AbortSignal; channel?: Channel } = {}) =>
    botlink().send({
      endpointUrl: overrides.url ?? `${integrator.origin}/channel`,
      key,
      request: buildChannelRequest({ channel: overrides.channel ?? 'whatsapp', conversationId: 's1', message: 'Where is my order?', language: 'en', customerPhone: '+31612345678' }),
      ...(overrides.timeoutMs ? { timeoutMs: overrides.timeoutMs } : {}),
      ...(overrides.signal ? { signal: overrides.signal } : {}),
    });

  beforeAll(async () => {
    integrator = await startHttpsServer();
    http = new GuardedClient({ allow: ['127.0.0.1/32'] });
  });
  afterAll(async () => {
    await http.close();
    await integrator.close();
  });
  beforeEach(() => integrator.handle((_req, res) => sendJson(res, 200, { reply: 'It ships tomorrow.' })));

  it('sends the exact bytes it signed, with the headers of §4.1', async () => {
    const exchange = await send();
    expect(exchange.outcome.outcome).toBe('answer');
    const received = integrator.requests.at(-1)!;
    expect(received.method).toBe('POST');
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.headers['user-agent']).toBe('Service-BotLink/1.0');
    expect(verifyChannelRequest(key, received.body, received.headers['x-service-signature'] as string).ok).toBe(true);
    expect(JSON.parse(received.body.toString())).toMatchObject({ channel: 'whatsapp', session_id: 's1', customer: { phone: '+31612345678' } });
  });

  it('a handled answer comes back with its fields', async () => {
    integrator.handle((_req, res) => sendJson(res, 200, { reply: 'Yes', handled: false, handoff: 'human', customer: { email: 'a@b.nl', name: 'An' } }));
    const { outcome, httpStatus, firstByteMs } = await send();
    expect(outcome).toMatchObject({ outcome: 'answer', answer: { reply: 'Yes', handled: false, handoff: 'human', customer: { email: 'a@b.nl', name: 'An' } } });
    expect(httpStatus).toBe(200);
    expect(firstByteMs).toBeGreaterThanOrEqual(0);
  });

  it.each([
    ['a status other than 2xx', (res: ServerResponse): void => sendJson(res, 500, { reply: 'ignored' }), 'status'],
    ['a redirect (never followed)', (res: ServerResponse): void => { res.writeHead(302, { location: '/elsewhere' }); res.end(); }, 'status'],
    ['invalid JSON', (res: ServerResponse): void => void res.end('{"reply": "unterminated'), 'invalid_json'],
    ['an empty reply', (res: ServerResponse): void => sendJson(res, 200, { reply: '' }), 'empty_reply'],
    ['no reply field', (res: ServerResponse): void => sendJson(res, 200, { handled: true }), 'empty_reply'],
  ] as const)('treats %s as no answer', async (_what, respond, reason) => {
    integrator.handle((_req, res) => respond(res));
    const { outcome } = await send();
    expect(outcome).toMatchObject({ outcome: 'no_answer', reason });
    expect(integrator.requests.filter((r) => r.url === '/elsewhere')).toHaveLength(0);
  });

  it('cuts a response off at 64 KB, and a cut-off body is no answer', async () => {
    integrator.handle((_req, res) => sendJson(res, 200, { reply: 'x'.repeat(100_000) }));
    const exchange = await send();
    expect(exchange.body.length).toBe(MAX_RESPONSE_BYTES);
    expect(exchange.outcome).toMatchObject({ outcome: 'no_answer', reason: 'cut_off' });
  });

  it('gives up at the deadline when the endpoint is slow, never later', async () => {
    integrator.handle((_req, res) => void setTimeout(() => sendJson(res, 200, { reply: 'too late' }), 2_000));
    const started = performance.now();
    const exchange = await send({ timeoutMs: 150 });
    expect(exchange.outcome).toMatchObject({ outcome: 'no_answer', reason: 'timeout' });
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('a slow-drip body cannot outlive the deadline', async () => {
    integrator.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"reply":"');
      const timer = setInterval(() => res.write('a'), 30);
      res.on('close', () => clearInterval(timer));
    });
    const started = performance.now();
    const exchange = await send({ timeoutMs: 200 });
    expect(exchange.outcome).toMatchObject({ outcome: 'no_answer', reason: 'timeout' });
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('a refused address is no answer, and nothing is sent', async () => {
    const strict = new GuardedClient({ allow: [] });
    const before = integrator.requests.length;
    const exchange = await createBotLinkClient({ http: strict }).send({
      endpointUrl: `${integrator.origin}/channel`,
      key,
      request: buildChannelRequest({ channel: 'phone', conversationId: 's', message: 'm', language: 'en' }),
    });
    await strict.close();
    expect(exchange.outcome).toMatchObject({ outcome: 'no_answer', reason: 'refused_address' });
    expect(integrator.requests.length).toBe(before);
  });

  it('a TLS failure is no answer (certificate not for that name)', async () => {
    const loose = new GuardedClient({ allow: ['127.0.0.1/32'], lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
    const exchange = await createBotLinkClient({ http: loose }).send({
      endpointUrl: `https://not-in-the-certificate.example:${integrator.port}/channel`,
      key,
      request: buildChannelRequest({ channel: 'phone', conversationId: 's', message: 'm', language: 'en' }),
    });
    await loose.close();
    expect(exchange.outcome).toMatchObject({ outcome: 'no_answer', reason: 'tls' });
  });

  it('a closed port is a connection error, no answer', async () => {
    const closed = await startHttpsServer();
    const url = `${closed.origin}/channel`;
    await closed.close();
    const exchange = await send({ url });
    expect(exchange.outcome).toMatchObject({ outcome: 'no_answer', reason: 'connection' });
    expect(exchange.httpStatus).toBeNull();
  });

  it('stops at once when the turn is cancelled (barge-in)', async () => {
    integrator.handle((_req, res) => void setTimeout(() => sendJson(res, 200, { reply: 'stale' }), 1_000));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const exchange = await send({ signal: controller.signal });
    expect(exchange.outcome).toMatchObject({ outcome: 'no_answer', reason: 'aborted' });
    expect(exchange.latencyMs).toBeLessThan(900);
  });

  it('uses the deadline of the channel: 3.5 s on the phone, 6 s otherwise (protocol §8)', () => {
    expect(channelTimeoutMs('phone')).toBe(PHONE_CHANNEL_TIMEOUT_MS);
    expect(channelTimeoutMs('whatsapp')).toBe(CHANNEL_TIMEOUT_MS);
    expect(channelTimeoutMs('webchat')).toBe(CHANNEL_TIMEOUT_MS);
  });

  it('records the latency and every outcome reason in the metrics', async () => {
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/botlink_outcomes_total\{channel="whatsapp",reason="answer"\} [1-9]/);
    expect(text).toMatch(/botlink_outcomes_total\{channel="whatsapp",reason="timeout"\} [1-9]/);
    expect(text).toMatch(/botlink_request_duration_seconds_count\{channel="whatsapp",outcome="no_answer"\} [1-9]/);
  });
});
