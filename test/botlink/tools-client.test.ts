import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MANIFEST_FAILURE_CACHE_MS, MAX_TOOL_ERROR_CHARS, createToolsClient } from '../../src/botlink/tools-client.ts';
import type { ToolsClientOptions } from '../../src/botlink/tools-client.ts';
import { MANIFEST_CACHE_MS, MANIFEST_STALE_MS, MANIFEST_TIMEOUT_MS, MAX_TOOL_RESULT_CHARS, PHONE_CHANNEL_TIMEOUT_MS, TOOL_CALL_TIMEOUT_MS } from '../../src/limits.ts';
import { GuardedClient } from '../../src/net/guarded-client.ts';
import { verifyToolsRequest } from '../../src/receiver/index.ts';
import type { ToolCallRequestBody } from '../../src/receiver/index.ts';
import { sendJson, startHttpsServer } from '../helpers/https-server.ts';
import type { TestHttpsServer } from '../helpers/https-server.ts';

const key = 'tools-test-key-0123456789abcdefghijklmnop';
/** `printf '%s' '1700000000.' | openssl dgst -sha256 -hmac 'tools-test-key-0123456789abcdefghijklmnop'` */
const OPENSSL_MANIFEST_SIGNATURE = '872c662968281b442863717442d5c2f2f5da172950856d06b2f9badb0d2cd33b';
const START = 1_700_000_000_000;

const manifestBody = {
  tools: [
    {
      name: 'order_status',
      description: 'The status of an order, by order number and postcode.',
      parameters: {
        type: 'object',
        properties: { order_number: { type: 'string', pattern: '^[0-9]{6}$' }, postcode: { type: 'string' } },
        required: ['order_number'],
      },
    },
    ...['echo', 'text', 'long', 'long_json', 'broken', 'long_error'].map((name) => ({
      name,
      description: `The ${name} tool.`,
      parameters: { type: 'object', properties: {} },
    })),
  ],
};
/** A manifest lists at most eight tools (protocol §2.3): these behaviours get a manifest of their own. */
const extraTools = ['slow', 'wait150', 'crash', 'garbage', 'no_ok'];

/** The `wait150` tool's calls being answered at the integrator now, and the most there were at once. */
const wait150 = { inFlight: 0, most: 0 };

/** Polls `ok` every 10 ms for up to 2 s. */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await sleep(10);
  expect(ok()).toBe(true);
}

function header(req: { headers: IncomingMessage['headers'] }, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

describe('the tools client (protocol §2.3–§2.5, §4.2–§4.4, §5.4)', () => {
  let integrator: TestHttpsServer;
  let http: GuardedClient;
  let clock = START;
  const now = () => clock;
  let manifestStatus = 200;
  let manifest: unknown = manifestBody;
  let manifestDelayMs = 0;
  let workspace = 0;
  /** A workspace of its own for every test, so no test sees another's cache. */
  const ws = () => `ws-${workspace}`;

  const endpointUrl = () => `${integrator.origin}/channel?token=abc`;
  const credentials = () => ({ endpointUrl: endpointUrl(), key });
  const client = (options: Partial<ToolsClientOptions> = {}) => createToolsClient({ http, now, ...options });
  const manifestRequests = () => integrator.requests.filter((r) => new URL(r.url, 'https://integrator.test').pathname.endsWith('/tools/manifest')).length;
  const toolCalls = () => integrator.requests.filter((r) => r.method === 'POST');
  const invoke = (name: string, args: unknown = {}) => ({ id: 'call_1', name, args, language: 'nl-NL', conversationId: 'CA123' });

  async function answerTool(call: ToolCallRequestBody, res: ServerResponse): Promise<void> {
    switch (call.tool) {
      case 'order_status':
      case 'echo':
        return sendJson(res, 200, { ok: true, result: { status: 'shipped', args: call.args } });
      case 'text':
        return sendJson(res, 200, { ok: true, result: 'Your order ships tomorrow.' });
      case 'long':
        return sendJson(res, 200, { ok: true, result: 'x'.repeat(10_000) });
      case 'long_json':
        return sendJson(res, 200, { ok: true, result: { items: 'y'.repeat(10_000) } });
      case 'broken':
        return sendJson(res, 200, { ok: false, error: 'The order system is down.' });
      case 'long_error':
        return sendJson(res, 200, { ok: false, error: 'e'.repeat(2_000) });
      case 'slow':
        await sleep(1_000);
        return sendJson(res, 200, { ok: true, result: 'too late' });
      case 'wait150':
        wait150.inFlight++;
        wait150.most = Math.max(wait150.most, wait150.inFlight);
        await sleep(150);
        wait150.inFlight--;
        return sendJson(res, 200, { ok: true, result: 'done' });
      case 'crash':
        return sendJson(res, 500, { ok: true, result: 'ignored' });
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{"ok": tru');
      case 'no_ok':
        return sendJson(res, 200, { result: 1 });
      default:
        return sendJson(res, 200, { ok: false, error: `Unknown tool ${call.tool}.` });
    }
  }

  beforeAll(async () => {
    integrator = await startHttpsServer();
    http = new GuardedClient({ allow: ['127.0.0.1/32'] });
  });
  afterAll(async () => {
    await http.close();
    await integrator.close();
  });
  beforeEach(() => {
    clock = START;
    integrator.requests.length = 0;
    workspace += 1;
    manifestStatus = 200;
    manifest = manifestBody;
    manifestDelayMs = 0;
    // The integrator, played with the receiver kit: every request must verify, against the same (fake) clock.
    integrator.handle(async (req, res, body) => {
      const verdict = verifyToolsRequest(key, body, header(req, 'x-service-sent-at'), header(req, 'x-service-signature'), { now });
      if (!verdict.ok) {
        res.writeHead(401);
        return void res.end();
      }
      const path = new URL(req.url ?? '/', 'https://integrator.test').pathname;
      if (req.method === 'GET' && path === '/tools/manifest') {
        if (manifestDelayMs > 0) await sleep(manifestDelayMs);
        if (typeof manifest === 'string') return void res.end(manifest);
        return sendJson(res, manifestStatus, manifest);
      }
      if (req.method === 'POST' && path === '/tools') return answerTool(JSON.parse(body.toString('utf8')) as ToolCallRequestBody, res);
      res.writeHead(404);
      res.end();
    });
  });

  describe('the manifest request (protocol §4.3, §5.4)', () => {
    it('is a GET of {tools_base}/manifest with an empty body, signed over sent_at + "."', async () => {
      const result = await client().manifest(ws(), credentials());
      expect(result.status).toBe('ok');
      expect(result.tools.map((t) => t.name)).toEqual(manifestBody.tools.map((t) => t.name));
      const received = integrator.requests.at(-1)!;
      expect(received.method).toBe('GET');
      expect(received.url).toBe('/tools/manifest?token=abc'); // protocol §4.2, the endpoint's query string kept
      expect(received.body.length).toBe(0);
      expect(received.headers['user-agent']).toBe('Service-BotLink/1.0');
      expect(received.headers['x-service-sent-at']).toBe('1700000000');
      expect(received.headers['x-service-signature']).toBe(OPENSSL_MANIFEST_SIGNATURE);
      expect(verifyToolsRequest(key, received.body, header(received, 'x-service-sent-at'), header(received, 'x-service-signature'), { now }).ok).toBe(true);
    });

    it('keeps the good tools of a manifest with a bad one, and records the problem', async () => {
      manifest = { tools: [manifestBody.tools[0], { name: 'bad name', description: 'x', parameters: { type: 'object', properties: {} } }] };
      const result = await client().manifest(ws(), credentials());
      expect(result.tools.map((t) => t.name)).toEqual(['order_status']);
      expect(result.problems).toEqual([{ index: 1, tool: 'bad name', field: 'name', message: expect.any(String) }]);
    });

    it.each([
      ['a status other than 200', (): void => void (manifestStatus = 503), /HTTP 503/],
      ['invalid JSON', (): void => void (manifest = '{"tools": ['), /not valid JSON/],
      ['tools that is not an array', (): void => void (manifest = { tools: 'all of them' }), /"tools" must be an array/],
    ] as const)('a manifest with %s is unavailable, with no tools and a sentence', async (_what, arrange, error) => {
      arrange();
      const result = await client().manifest(ws(), credentials());
      expect(result).toMatchObject({ status: 'unavailable', tools: [], fetchedAt: START });
      expect(result.error).toMatch(error);
    });

    it('a wrong key is refused by the integrator (401): unavailable, with a hint', async () => {
      const result = await client().manifest(ws(), { endpointUrl: endpointUrl(), key: 'another-key-of-at-least-32-characters!!' });
      expect(result.status).toBe('unavailable');
      expect(result.error).toMatch(/HTTP 401.*same key/);
    });

    it('an unreachable endpoint is unavailable, never an exception', async () => {
      const closed = await startHttpsServer();
      await closed.close();
      const result = await client().manifest(ws(), { endpointUrl: `${closed.origin}/channel`, key });
      expect(result).toMatchObject({ status: 'unavailable', tools: [] });
      expect(result.error).toMatch(/connection/i);
    });
  });

  describe('the manifest cache (protocol §4.3: 10 minutes)', () => {
    it('answers from the cache for 10 minutes; then offers it while a new fetch runs, and the new one after', async () => {
      const tools = client();
      const first = await tools.manifest(ws(), credentials());
      expect(manifestRequests()).toBe(1);
      clock = START + 60_000;
      expect(await tools.manifest(ws(), credentials())).toBe(first);
      clock = START + MANIFEST_CACHE_MS;
      expect(await tools.manifest(ws(), credentials())).toBe(first);
      expect(manifestRequests()).toBe(1);
      // 1 ms past the 10 minutes: the turn gets the manifest it had at once (stale while refreshing)…
      manifestDelayMs = 100;
      clock = START + MANIFEST_CACHE_MS + 1;
      expect(await tools.manifest(ws(), credentials())).toBe(first);
      // …while one new request runs, shared by every caller meanwhile.
      expect(await tools.manifest(ws(), credentials())).toBe(first);
      await until(() => manifestRequests() === 2);
      await sleep(manifestDelayMs + 50);
      const second = await tools.manifest(ws(), credentials());
      expect(second).not.toBe(first);
      expect(second.fetchedAt).toBe(START + MANIFEST_CACHE_MS + 1);
      expect(manifestRequests()).toBe(2);
    });

    it(`offers a stale manifest at most ${MANIFEST_STALE_MS / 60_000} minutes past its 10; then the turn waits for the fetch`, async () => {
      const tools = client();
      const first = await tools.manifest(ws(), credentials());
      clock = START + MANIFEST_CACHE_MS + MANIFEST_STALE_MS + 1;
      const second = await tools.manifest(ws(), credentials());
      expect(second).not.toBe(first);
      expect(second.fetchedAt).toBe(clock);
      expect(manifestRequests()).toBe(2);
    });

    it('a refresh that fails replaces the stale manifest: a broken endpoint\'s tools are not offered on', async () => {
      const tools = client();
      await tools.manifest(ws(), credentials());
      manifestStatus = 500;
      clock = START + MANIFEST_CACHE_MS + 1;
      expect((await tools.manifest(ws(), credentials())).status).toBe('ok'); // stale, while the refresh runs
      await until(() => manifestRequests() === 2);
      await sleep(50);
      expect((await tools.manifest(ws(), credentials())).status).toBe('unavailable');
    });

    it('a failed fetch is never offered stale', async () => {
      const tools = client();
      manifestStatus = 500;
      expect((await tools.manifest(ws(), credentials())).status).toBe('unavailable');
      manifestStatus = 200;
      clock = START + MANIFEST_FAILURE_CACHE_MS + 1;
      expect((await tools.manifest(ws(), credentials())).status).toBe('ok');
    });

    it('prefetch() starts the fetch and returns at once; the next turn finds the manifest in the cache', async () => {
      manifestDelayMs = 100;
      const tools = client();
      tools.prefetch(ws(), credentials());
      await until(() => manifestRequests() === 1);
      await sleep(manifestDelayMs + 50);
      expect((await tools.manifest(ws(), credentials(), undefined, 0)).status).toBe('ok'); // waits 0 ms: from the cache
      tools.prefetch(ws(), credentials()); // fresh: nothing is asked
      expect(manifestRequests()).toBe(1);
    });

    it('a new key or a new endpoint URL misses the cache', async () => {
      const tools = client();
      await tools.manifest(ws(), credentials());
      // The integrator now signs-checks with `key`, so a new key is refused (401), which is also a fresh fetch.
      await tools.manifest(ws(), { endpointUrl: endpointUrl(), key: `${key}-rotated` });
      expect(manifestRequests()).toBe(2);
      await tools.manifest(ws(), { endpointUrl: `${integrator.origin}/v2/channel`, key });
      expect(manifestRequests()).toBe(3);
      expect(integrator.requests.at(-1)!.url).toBe('/v2/tools/manifest');
    });

    it('keeps workspaces apart', async () => {
      const tools = client();
      await tools.manifest(ws(), credentials());
      await tools.manifest(`${ws()}-other`, credentials());
      expect(manifestRequests()).toBe(2);
    });

    it('invalidate() forgets the manifest', async () => {
      const tools = client();
      await tools.manifest(ws(), credentials());
      tools.invalidate(ws());
      await tools.manifest(ws(), credentials());
      expect(manifestRequests()).toBe(2);
    });

    it('the manifest GET has its own deadline, the phone channel\'s, never the tool call\'s longer one', async () => {
      expect(MANIFEST_TIMEOUT_MS).toBe(PHONE_CHANNEL_TIMEOUT_MS);
      expect(MANIFEST_TIMEOUT_MS).toBeLessThan(TOOL_CALL_TIMEOUT_MS);
      manifestDelayMs = 1_000;
      const result = await client({ manifestTimeoutMs: 150 }).manifest(ws(), credentials());
      expect(result).toMatchObject({ status: 'unavailable', tools: [] });
      expect(result.error).toMatch(/150 ms|time/i);
    });

    it(`remembers a failed fetch for ${MANIFEST_FAILURE_CACHE_MS / 1000} s, then asks again`, async () => {
      const tools = client();
      manifestStatus = 500;
      expect((await tools.manifest(ws(), credentials())).status).toBe('unavailable');
      manifestStatus = 200;
      clock = START + MANIFEST_FAILURE_CACHE_MS;
      expect((await tools.manifest(ws(), credentials())).status).toBe('unavailable');
      expect(manifestRequests()).toBe(1);
      clock = START + MANIFEST_FAILURE_CACHE_MS + 1;
      expect((await tools.manifest(ws(), credentials())).status).toBe('ok');
      expect(manifestRequests()).toBe(2);
    });

    it('20 concurrent callers share one request', async () => {
      manifestDelayMs = 100;
      const tools = client();
      const results = await Promise.all(Array.from({ length: 20 }, () => tools.manifest(ws(), credentials())));
      expect(manifestRequests()).toBe(1);
      expect(new Set(results).size).toBe(1);
      expect(results[0]!.status).toBe('ok');
    });

    it('a caller that stops waiting does not cancel the shared request for the others', async () => {
      manifestDelayMs = 150;
      const tools = client();
      const controller = new AbortController();
      const leaving = tools.manifest(ws(), credentials(), controller.signal);
      const staying = tools.manifest(ws(), credentials());
      setTimeout(() => controller.abort(), 20);
      expect(await leaving).toMatchObject({ status: 'unavailable', error: expect.stringMatching(/cancelled/) });
      expect((await staying).status).toBe('ok');
      expect(manifestRequests()).toBe(1);
      expect((await tools.manifest(ws(), credentials())).status).toBe('ok'); // and it filled the cache
      expect(manifestRequests()).toBe(1);
    });

    it('a fetch in flight when invalidate() is called reaches its callers but is not stored', async () => {
      manifestDelayMs = 100;
      const tools = client();
      const pending = tools.manifest(ws(), credentials());
      await sleep(20);
      tools.invalidate(ws());
      expect((await pending).status).toBe('ok');
      await tools.manifest(ws(), credentials());
      expect(manifestRequests()).toBe(2);
    });

    it('fetchManifestNow() always asks, and leaves the cache alone', async () => {
      const tools = client();
      expect((await tools.fetchManifestNow(credentials())).status).toBe('ok');
      expect((await tools.fetchManifestNow(credentials())).status).toBe('ok');
      expect(manifestRequests()).toBe(2);
      await tools.manifest(ws(), credentials());
      expect(manifestRequests()).toBe(3);
    });
  });

  describe('a tool call (protocol §2.4, §2.5, §4.4)', () => {
    it('POSTs {tools_base} with the body of §2.4, signed over sent_at + "." + the raw body', async () => {
      const tools = client();
      await tools.manifest(ws(), credentials());
      clock = START + 5_000;
      const outcome = await tools.call(ws(), credentials(), invoke('order_status', { order_number: '123456', postcode: '1234AB' }));
      expect(outcome).toMatchObject({ id: 'call_1', name: 'order_status', ok: true, httpStatus: 200 });
      const [received] = toolCalls();
      expect(received!.url).toBe('/tools?token=abc');
      expect(received!.headers['content-type']).toBe('application/json');
      expect(received!.headers['user-agent']).toBe('Service-BotLink/1.0');
      const sentAt = header(received!, 'x-service-sent-at');
      expect(verifyToolsRequest(key, received!.body, sentAt, header(received!, 'x-service-signature'), { now })).toEqual({ ok: true, sentAt: 1_700_000_005 });
      const body = JSON.parse(received!.body.toString('utf8')) as ToolCallRequestBody;
      expect(body).toEqual({
        tool: 'order_status',
        args: { order_number: '123456', postcode: '1234AB' },
        language: 'nl',
        session_id: 'CA123',
        sent_at: 1_700_000_005,
      });
      expect(String(body.sent_at)).toBe(sentAt);
      expect(Object.keys(body)).toEqual(['tool', 'args', 'language', 'session_id', 'sent_at']);
    });

    it('ok true: the result as JSON text is what the AI reads', async () => {
      const outcome = await client().call(ws(), credentials(), invoke('echo', {}));
      expect(outcome).toMatchObject({ ok: true, content: '{"status":"shipped","args":{}}', httpStatus: 200 });
      expect(outcome.failure).toBeUndefined();
      expect(outcome.latencyMs).toBeGreaterThan(0);
    });

    it('a string result is passed as the string itself, not JSON-quoted', async () => {
      expect((await client().call(ws(), credentials(), invoke('text'))).content).toBe('Your order ships tomorrow.');
    });

    it(`passes exactly the first ${MAX_TOOL_RESULT_CHARS} characters of a long result`, async () => {
      const tools = client();
      const text = await tools.call(ws(), credentials(), invoke('long'));
      expect(text.content).toBe('x'.repeat(MAX_TOOL_RESULT_CHARS));
      const json = await tools.call(ws(), credentials(), invoke('long_json'));
      expect(json.content).toBe(JSON.stringify({ items: 'y'.repeat(10_000) }).slice(0, MAX_TOOL_RESULT_CHARS));
    });

    it('ok false: failure tool_error, and the AI reads the error text', async () => {
      const tools = client();
      expect(await tools.call(ws(), credentials(), invoke('broken'))).toMatchObject({
        ok: false,
        failure: 'tool_error',
        content: 'The order system is down.',
        httpStatus: 200,
      });
      expect((await tools.call(ws(), credentials(), invoke('long_error'))).content).toBe('e'.repeat(MAX_TOOL_ERROR_CHARS));
    });

    it('a tool the manifest does not list: unknown_tool, and nothing is sent', async () => {
      const outcome = await client().call(ws(), credentials(), invoke('nope'));
      expect(outcome).toMatchObject({ ok: false, failure: 'unknown_tool', content: 'There is no tool named nope.', httpStatus: null });
      expect(toolCalls()).toHaveLength(0);
    });

    it('arguments the schema refuses: invalid_args with a message the AI can fix its call by, and nothing is sent', async () => {
      const outcome = await client().call(ws(), credentials(), invoke('order_status', { order_number: 'AB-12', colour: 'red' }));
      expect(outcome).toMatchObject({ ok: false, failure: 'invalid_args', httpStatus: null });
      expect(outcome.content).toBe(
        'The arguments for order_status are not valid: order_number must match pattern "^[0-9]{6}$". Correct them and call order_status again.',
      );
      const missing = await client().call(ws(), credentials(), invoke('order_status', { postcode: '1234AB' }));
      expect(missing.content).toMatch(/order_number is required/);
      expect(toolCalls()).toHaveLength(0);
    });

    it('a manifest that is unavailable means no tools: unknown_tool, and nothing is sent', async () => {
      manifestStatus = 500;
      const outcome = await client().call(ws(), credentials(), invoke('order_status', { order_number: '123456' }));
      expect(outcome).toMatchObject({ failure: 'unknown_tool', content: 'There is no tool named order_status. The tools cannot be used right now.' });
      expect(outcome.detail).toMatch(/HTTP 500/);
      expect(toolCalls()).toHaveLength(0);
    });

    describe('with the other behaviours in the manifest', () => {
      beforeEach(() => {
        manifest = { tools: extraTools.map((name) => ({ name, description: name, parameters: { type: 'object', properties: {} } })) };
      });

      it('a tool slower than the deadline: failure timeout, at the deadline', async () => {
        const tools = client({ toolTimeoutMs: 200 });
        await tools.manifest(ws(), credentials());
        const started = performance.now();
        const outcome = await tools.call(ws(), credentials(), invoke('slow'));
        expect(outcome).toMatchObject({ ok: false, failure: 'timeout', content: 'The tool slow did not answer within 0.2 seconds.', httpStatus: null });
        expect(performance.now() - started).toBeLessThan(800);
      });

      it('a status other than 200: failure status', async () => {
        expect(await client().call(ws(), credentials(), invoke('crash'))).toMatchObject({ ok: false, failure: 'status', httpStatus: 500 });
      });

      it.each(['garbage', 'no_ok'])('an answer without a readable ok (%s): failure invalid_response', async (name) => {
        const outcome = await client().call(ws(), credentials(), invoke(name));
        expect(outcome).toMatchObject({ ok: false, failure: 'invalid_response', httpStatus: 200 });
        expect(outcome.content).toBe(`The tool ${name} gave an answer that could not be read.`);
      });

      it('runs concurrent calls in parallel: three calls of 150 ms are at the integrator at once', async () => {
        const tools = client();
        await tools.call(ws(), credentials(), invoke('wait150')); // manifest cached, a connection open
        wait150.most = 0;
        const outcomes = await Promise.all([1, 2, 3].map(() => tools.call(ws(), credentials(), invoke('wait150'))));
        expect(wait150.most).toBe(3);
        expect(outcomes.every((o) => o.ok && o.content === 'done')).toBe(true);
      });

      it('a cancelled call: failure aborted', async () => {
        const tools = client();
        await tools.manifest(ws(), credentials());
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 50);
        expect(await tools.call(ws(), credentials(), invoke('slow'), controller.signal)).toMatchObject({ ok: false, failure: 'aborted' });
      });
    });

    it('never throws, even when something unforeseen does', async () => {
      const exploding = { request: () => Promise.reject(new TypeError('boom')) } as unknown as GuardedClient;
      const tools = createToolsClient({ http: exploding, now });
      const result = await tools.manifest(ws(), credentials());
      expect(result).toMatchObject({ status: 'unavailable', error: expect.stringContaining('boom') });
      expect(await tools.call(ws(), credentials(), invoke('echo'))).toMatchObject({ ok: false, failure: 'unknown_tool' });
      expect(await tools.call(ws(), { endpointUrl: 'not a url', key }, invoke('echo'))).toMatchObject({ ok: false, failure: 'unknown_tool' });

      const postExplodes = {
        request: (req: Parameters<GuardedClient['request']>[0]) => (req.method === 'GET' ? http.request(req) : Promise.reject(new TypeError('boom'))),
      } as unknown as GuardedClient;
      const outcome = await createToolsClient({ http: postExplodes, now }).call(`${ws()}-2`, credentials(), invoke('echo'));
      expect(outcome).toMatchObject({ ok: false, failure: 'invalid_response', content: 'The tool echo could not be used because of an internal error.' });
      expect(outcome.detail).toMatch(/boom/);
    });
  });
});
