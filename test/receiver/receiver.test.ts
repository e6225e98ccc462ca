import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Request } from 'express';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { buildChannelRequest, encodeChannelRequest } from '../../src/botlink/channel-request.ts';
import type { ChannelRequest } from '../../src/botlink/channel-request.ts';
import { MAX_CLOCK_SKEW_SECONDS } from '../../src/limits.ts';
import {
  channelReceiver,
  RECEIVER_MAX_BODY_BYTES,
  SENT_AT_HEADER,
  SIGNATURE_HEADER,
  signChannelBody,
  signToolsRequest,
  toolsReceiver,
  verifyChannelRequest,
  verifyToolsRequest,
} from '../../src/receiver/index.ts';
import type { ChannelRequestBody, RejectReason, VerifyOptions } from '../../src/receiver/index.ts';

const KEY = 'test-key-0123456789abcdefghijklmnopqrstuvwxyz';
const SENT_AT = 1735689600;
/** The receiver's clock, pinned to the second the request was sent, plus `seconds`. */
const at = (seconds: number): VerifyOptions => ({ now: () => (SENT_AT + seconds) * 1000 });

const CHANNEL_BODY = JSON.stringify({
  channel: 'phone',
  session_id: 'CA123',
  message: 'Wo ist meine Bestellung? 😀',
  language: 'de',
  customer: { phone: '+491701234567' },
  sent_at: SENT_AT,
});
const CHANNEL_SIGNATURE = signChannelBody(KEY, CHANNEL_BODY);
const TOOL_BODY = JSON.stringify({ tool: 'order_status', args: { order: '1234' }, language: 'de', session_id: 'CA123', sent_at: SENT_AT });
const TOOL_SIGNATURE = signToolsRequest(KEY, SENT_AT, TOOL_BODY);
const MANIFEST_SIGNATURE = signToolsRequest(KEY, SENT_AT, '');

/** The body with one byte changed. */
function flipOneByte(body: string, index = 20): Buffer {
  const bytes = Buffer.from(body, 'utf8');
  bytes[index] = bytes[index]! ^ 0x01;
  return bytes;
}

describe('the kit agrees with the service on the wire format', () => {
  it('types the channel request exactly as the service builds it', () => {
    expectTypeOf<ChannelRequestBody>().toEqualTypeOf<ChannelRequest>();
  });
});

describe('verifyChannelRequest (protocol §5.4, §5.5)', () => {
  it('accepts a genuine request and gives its sent_at', () => {
    expect(verifyChannelRequest(KEY, Buffer.from(CHANNEL_BODY), CHANNEL_SIGNATURE, at(0))).toEqual({ ok: true, sentAt: SENT_AT });
    expect(verifyChannelRequest(KEY, CHANNEL_BODY, CHANNEL_SIGNATURE, at(0))).toEqual({ ok: true, sentAt: SENT_AT });
  });

  it('accepts the signature in upper-case hex', () => {
    expect(verifyChannelRequest(KEY, CHANNEL_BODY, CHANNEL_SIGNATURE.toUpperCase(), at(0)).ok).toBe(true);
  });

  it('accepts what encodeChannelRequest sends', () => {
    const request = buildChannelRequest({ channel: 'webchat', conversationId: 't', message: 'ping', language: 'en', now: new Date(SENT_AT * 1000) });
    const { body, headers } = encodeChannelRequest(request, KEY);
    expect(verifyChannelRequest(KEY, body, headers[SIGNATURE_HEADER], at(0))).toEqual({ ok: true, sentAt: SENT_AT });
  });

  it('refuses a body with one byte flipped', () => {
    for (const index of [0, 20, Buffer.byteLength(CHANNEL_BODY) - 1]) {
      expect(verifyChannelRequest(KEY, flipOneByte(CHANNEL_BODY, index), CHANNEL_SIGNATURE, at(0))).toEqual({ ok: false, reason: 'bad_signature' });
    }
  });

  it('refuses the same JSON re-serialised (protocol §5.5.1: the raw bytes are signed)', () => {
    const pretty = JSON.stringify(JSON.parse(CHANNEL_BODY), null, 2);
    const withSpace = CHANNEL_BODY.replace('"channel":', '"channel": ');
    const escaped = CHANNEL_BODY.replace('😀', '\\ud83d\\ude00');
    expect(JSON.parse(escaped)).toEqual(JSON.parse(CHANNEL_BODY));
    for (const body of [pretty, withSpace, escaped, `${CHANNEL_BODY}\n`]) {
      expect(verifyChannelRequest(KEY, body, CHANNEL_SIGNATURE, at(0))).toEqual({ ok: false, reason: 'bad_signature' });
    }
  });

  it('refuses a signature made with another key', () => {
    expect(verifyChannelRequest(KEY, CHANNEL_BODY, signChannelBody(`${KEY}x`, CHANNEL_BODY), at(0))).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
  ])('refuses a request whose signature header is %s', (_name, header) => {
    expect(verifyChannelRequest(KEY, CHANNEL_BODY, header, at(0))).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it.each(['garbage', CHANNEL_SIGNATURE.slice(0, 32), `sha256=${CHANNEL_SIGNATURE}`])('refuses the malformed signature %j', (header) => {
    expect(verifyChannelRequest(KEY, CHANNEL_BODY, header, at(0))).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it.each([
    [-MAX_CLOCK_SKEW_SECONDS, true],
    [MAX_CLOCK_SKEW_SECONDS, true],
    [-(MAX_CLOCK_SKEW_SECONDS + 1), false],
    [MAX_CLOCK_SKEW_SECONDS + 1, false],
    [MAX_CLOCK_SKEW_SECONDS + 0.999, true],
    [86_400, false],
  ])('with the clock %i s from sent_at, accepts: %s (protocol §5.5.3: 300 s)', (offset, ok) => {
    expect(verifyChannelRequest(KEY, CHANNEL_BODY, CHANNEL_SIGNATURE, at(offset))).toEqual(ok ? { ok: true, sentAt: SENT_AT } : { ok: false, reason: 'stale' });
  });

  it('takes another allowed skew from the options', () => {
    expect(verifyChannelRequest(KEY, CHANNEL_BODY, CHANNEL_SIGNATURE, { ...at(61), maxSkewSeconds: 60 })).toEqual({ ok: false, reason: 'stale' });
    expect(verifyChannelRequest(KEY, CHANNEL_BODY, CHANNEL_SIGNATURE, { ...at(60), maxSkewSeconds: 60 }).ok).toBe(true);
  });

  it.each<[string, string, string]>([
    ['without sent_at', '{"channel":"phone","message":"hi"}', 'missing_sent_at'],
    ['with sent_at null', '{"sent_at":null}', 'missing_sent_at'],
    ['with sent_at as a string', `{"sent_at":"${SENT_AT}"}`, 'bad_sent_at'],
    ['with a fractional sent_at', `{"sent_at":${SENT_AT}.5}`, 'bad_sent_at'],
    ['with sent_at in milliseconds', `{"sent_at":${SENT_AT * 1000}}`, 'stale'],
    ['that is not JSON', 'sent_at=1735689600', 'invalid_json'],
    ['that is a JSON array', `[${SENT_AT}]`, 'invalid_json'],
    ['with sent_at only inherited', `{"__proto__":{"sent_at":${SENT_AT}}}`, 'missing_sent_at'],
  ])('refuses a correctly signed body %s', (_name, body, reason) => {
    expect(verifyChannelRequest(KEY, body, signChannelBody(KEY, body), at(0))).toEqual({ ok: false, reason });
  });

  it('checks the signature before it reads the body', () => {
    expect(verifyChannelRequest(KEY, 'not json', 'ab'.repeat(32), at(0))).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses to run with a missing or short key, which would let anyone sign', () => {
    expect(() => verifyChannelRequest('', CHANNEL_BODY, CHANNEL_SIGNATURE)).toThrow(TypeError);
    expect(() => verifyChannelRequest('short', CHANNEL_BODY, CHANNEL_SIGNATURE)).toThrow(/at least 32 characters/);
    expect(() => verifyChannelRequest(undefined as unknown as string, CHANNEL_BODY, CHANNEL_SIGNATURE)).toThrow(TypeError);
  });

  it('uses the real clock by default', () => {
    const body = JSON.stringify({ sent_at: Math.floor(Date.now() / 1000) });
    expect(verifyChannelRequest(KEY, body, signChannelBody(KEY, body)).ok).toBe(true);
    expect(verifyChannelRequest(KEY, CHANNEL_BODY, CHANNEL_SIGNATURE)).toEqual({ ok: false, reason: 'stale' });
  });
});

describe('verifyToolsRequest (protocol §5.4, §5.5)', () => {
  it('accepts a genuine manifest GET (empty body)', () => {
    expect(verifyToolsRequest(KEY, '', String(SENT_AT), MANIFEST_SIGNATURE, at(0))).toEqual({ ok: true, sentAt: SENT_AT });
    expect(verifyToolsRequest(KEY, Buffer.alloc(0), String(SENT_AT), MANIFEST_SIGNATURE, at(0)).ok).toBe(true);
  });

  it('accepts a genuine tool call POST, and its signature in upper case', () => {
    expect(verifyToolsRequest(KEY, TOOL_BODY, String(SENT_AT), TOOL_SIGNATURE, at(0))).toEqual({ ok: true, sentAt: SENT_AT });
    expect(verifyToolsRequest(KEY, TOOL_BODY, String(SENT_AT), TOOL_SIGNATURE.toUpperCase(), at(0)).ok).toBe(true);
  });

  it('refuses a tool call body with one byte flipped', () => {
    expect(verifyToolsRequest(KEY, flipOneByte(TOOL_BODY), String(SENT_AT), TOOL_SIGNATURE, at(0))).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a re-serialised tool call body', () => {
    const pretty = JSON.stringify(JSON.parse(TOOL_BODY), null, 1);
    expect(verifyToolsRequest(KEY, pretty, String(SENT_AT), TOOL_SIGNATURE, at(0))).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a sent_at header changed after signing (it is covered by the signature)', () => {
    expect(verifyToolsRequest(KEY, '', String(SENT_AT + 1), MANIFEST_SIGNATURE, at(0))).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a manifest signature used for a tool call, and the other way round', () => {
    expect(verifyToolsRequest(KEY, TOOL_BODY, String(SENT_AT), MANIFEST_SIGNATURE, at(0))).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verifyToolsRequest(KEY, '', String(SENT_AT), TOOL_SIGNATURE, at(0))).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a channel-style signature (no sent_at in the signed data)', () => {
    expect(verifyToolsRequest(KEY, TOOL_BODY, String(SENT_AT), signChannelBody(KEY, TOOL_BODY), at(0))).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
  ])('refuses a request whose X-Service-Sent-At is %s (protocol §5.5.3)', (_name, header) => {
    expect(verifyToolsRequest(KEY, '', header, MANIFEST_SIGNATURE, at(0))).toEqual({ ok: false, reason: 'missing_sent_at' });
  });

  it('refuses a request without a signature', () => {
    expect(verifyToolsRequest(KEY, '', String(SENT_AT), undefined, at(0))).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it.each(['1735689600.0', '1.7356896e9', '+1735689600', '-1735689600', ' 1735689600', '0x676C0C00', 'now', '1735689600000000000'])(
    'refuses the sent_at header %j: decimal seconds only',
    (header) => {
      // Signed over that very header, so only the format can be what fails.
      expect(verifyToolsRequest(KEY, '', header, signToolsRequest(KEY, header, ''), at(0))).toEqual({ ok: false, reason: 'bad_sent_at' });
    },
  );

  it.each([
    [-MAX_CLOCK_SKEW_SECONDS, true],
    [MAX_CLOCK_SKEW_SECONDS, true],
    [-(MAX_CLOCK_SKEW_SECONDS + 1), false],
    [MAX_CLOCK_SKEW_SECONDS + 1, false],
  ])('with the clock %i s from sent_at, accepts: %s', (offset, ok) => {
    expect(verifyToolsRequest(KEY, TOOL_BODY, String(SENT_AT), TOOL_SIGNATURE, at(offset))).toEqual(ok ? { ok: true, sentAt: SENT_AT } : { ok: false, reason: 'stale' });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The Express middleware, on a real HTTP server on loopback, called with fetch.

describe('channelReceiver and toolsReceiver on a real server', () => {
  let server: Server;
  let origin: string;
  const rejected: RejectReason[] = [];
  const options = { ...at(0), onReject: (reason: RejectReason, _req: Request) => void rejected.push(reason) };

  beforeAll(async () => {
    const app = express();
    app.post('/channel', channelReceiver(KEY, options), (req, res) => {
      res.json({ reply: `You said: ${(req.body as ChannelRequestBody).message}`, received: req.body as unknown });
    });
    app.get('/tools/manifest', toolsReceiver(KEY, options), (req, res) => {
      res.json({ tools: [], body: req.body === undefined ? 'none' : 'some' });
    });
    app.post('/tools', toolsReceiver(KEY, options), (req, res) => {
      res.json({ ok: true, result: req.body as unknown });
    });
    // Mounted the wrong way round: the kit must say so instead of verifying a re-serialised body.
    app.post('/after-json', express.json(), channelReceiver(KEY, options), (_req, res) => {
      res.json({ reply: 'never' });
    });
    // express.raw() keeps the raw bytes: that works.
    app.post('/after-raw', express.raw({ type: '*/*' }), channelReceiver(KEY, options), (req, res) => {
      res.json({ reply: 'raw ok', session: (req.body as ChannelRequestBody).session_id });
    });
    app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(500).json({ error: err.message });
    });
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const postChannel = (body: string | Buffer, signature: string | undefined, path = '/channel') =>
    fetch(`${origin}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(signature === undefined ? {} : { [SIGNATURE_HEADER]: signature }) },
      body,
    });

  it('passes a genuine channel request on with req.body parsed: 200', async () => {
    const response = await postChannel(CHANNEL_BODY, CHANNEL_SIGNATURE);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ reply: 'You said: Wo ist meine Bestellung? 😀', received: JSON.parse(CHANNEL_BODY) });
  });

  it('answers a bad signature with 401 and an empty body (protocol §5.5.4)', async () => {
    rejected.length = 0;
    const response = await postChannel(flipOneByte(CHANNEL_BODY), CHANNEL_SIGNATURE);
    expect(response.status).toBe(401);
    expect(await response.text()).toBe('');
    expect(response.headers.get('content-type')).toBeNull();
    expect(rejected).toEqual(['bad_signature']);
  });

  it('answers a missing signature with 401 and an empty body', async () => {
    rejected.length = 0;
    const response = await postChannel(CHANNEL_BODY, undefined);
    expect(response.status).toBe(401);
    expect(await response.text()).toBe('');
    expect(rejected).toEqual(['missing_signature']);
  });

  it('answers a stale request with 401 and an empty body', async () => {
    rejected.length = 0;
    const body = JSON.stringify({ ...JSON.parse(CHANNEL_BODY), sent_at: SENT_AT - MAX_CLOCK_SKEW_SECONDS - 1 });
    const response = await postChannel(body, signChannelBody(KEY, body));
    expect(response.status).toBe(401);
    expect(await response.text()).toBe('');
    expect(rejected).toEqual(['stale']);
  });

  it('refuses a body over the limit with 413 before verifying it', async () => {
    rejected.length = 0;
    const body = JSON.stringify({ sent_at: SENT_AT, message: 'x'.repeat(RECEIVER_MAX_BODY_BYTES) });
    const response = await postChannel(body, signChannelBody(KEY, body));
    expect(response.status).toBe(413);
    expect(await response.text()).toBe('');
    expect(rejected).toEqual(['body_too_large']);
  });

  it('refuses a chunked body that grows over the limit while it is read', async () => {
    const body = JSON.stringify({ sent_at: SENT_AT, message: 'x'.repeat(RECEIVER_MAX_BODY_BYTES) });
    const chunks = [body.slice(0, 1000), body.slice(1000)];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const response = await fetch(`${origin}/channel`, {
      method: 'POST',
      headers: { [SIGNATURE_HEADER]: signChannelBody(KEY, body) },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
  });

  it('says so when a body parser has read the body before it', async () => {
    const response = await postChannel(CHANNEL_BODY, CHANNEL_SIGNATURE, '/after-json');
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: string }).error).toMatch(/before any body parser/);
  });

  it('verifies the raw bytes that express.raw() kept', async () => {
    const ok = await postChannel(CHANNEL_BODY, CHANNEL_SIGNATURE, '/after-raw');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ reply: 'raw ok', session: 'CA123' });
    const bad = await postChannel(flipOneByte(CHANNEL_BODY), CHANNEL_SIGNATURE, '/after-raw');
    expect(bad.status).toBe(401);
  });

  const toolsHeaders = (sentAt: string | undefined, signature: string | undefined): Record<string, string> => ({
    ...(sentAt === undefined ? {} : { [SENT_AT_HEADER]: sentAt }),
    ...(signature === undefined ? {} : { [SIGNATURE_HEADER]: signature }),
  });

  it('serves the manifest to a genuine GET, with no body on the request', async () => {
    const response = await fetch(`${origin}/tools/manifest`, { headers: toolsHeaders(String(SENT_AT), MANIFEST_SIGNATURE) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ tools: [], body: 'none' });
  });

  it('answers a manifest GET without X-Service-Sent-At with 401 and an empty body', async () => {
    rejected.length = 0;
    const response = await fetch(`${origin}/tools/manifest`, { headers: toolsHeaders(undefined, MANIFEST_SIGNATURE) });
    expect(response.status).toBe(401);
    expect(await response.text()).toBe('');
    expect(rejected).toEqual(['missing_sent_at']);
  });

  it('passes a genuine tool call on with req.body parsed', async () => {
    const response = await fetch(`${origin}/tools`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...toolsHeaders(String(SENT_AT), TOOL_SIGNATURE.toUpperCase()) },
      body: TOOL_BODY,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, result: JSON.parse(TOOL_BODY) });
  });

  it('answers a tampered tool call with 401 and an empty body', async () => {
    const response = await fetch(`${origin}/tools`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...toolsHeaders(String(SENT_AT), TOOL_SIGNATURE) },
      body: TOOL_BODY.replace('1234', '9999'),
    });
    expect(response.status).toBe(401);
    expect(await response.text()).toBe('');
  });

  it('answers a genuine tool call whose body is not JSON with 400', async () => {
    const body = 'not json';
    const response = await fetch(`${origin}/tools`, {
      method: 'POST',
      headers: toolsHeaders(String(SENT_AT), signToolsRequest(KEY, SENT_AT, body)),
      body,
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toBe('');
  });

  it('refuses to be created without a usable key', () => {
    expect(() => channelReceiver('')).toThrow(TypeError);
    expect(() => toolsReceiver('too-short')).toThrow(TypeError);
  });
});
