/**
 * The endpoint doctor (docs/integrators.md "Check your endpoint: doctor") against two reference integrators
 * on loopback HTTPS: a good one built with the receiver kit, and a broken one that accepts any signature, answers past
 * the phone's 3.5 s and serves a manifest whose tools the engine drops.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { doctorLines, runDoctor, type DoctorReport } from '../../src/integration/doctor.ts';
import { GuardedClient } from '../../src/net/guarded-client.ts';
import { verifyChannelRequest, verifyToolsRequest } from '../../src/receiver/index.ts';
import { runCli } from '../helpers/cli.ts';
import { sendJson, startHttpsServer, testCa, type TestHttpsServer } from '../helpers/https-server.ts';

const KEY = 'doctor-test-key-0123456789-abcdefghijklmnop';
const orderStatus = {
  name: 'order_status',
  description: 'The status of an order by its number.',
  parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
};

function refuse(res: ServerResponse): void {
  res.statusCode = 401;
  res.end();
}

/** The integrator of docs/integrators.md: verifies every request, answers the channel, lists one tool and runs it. */
function goodIntegrator(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const signature = req.headers['x-service-signature'] as string | undefined;
  if (req.url === '/botlink/channel') {
    if (!verifyChannelRequest(KEY, body, signature).ok) return refuse(res);
    return sendJson(res, 200, { reply: 'Order 1234 ships tomorrow.', handled: true });
  }
  if (!verifyToolsRequest(KEY, body, req.headers['x-service-sent-at'] as string | undefined, signature).ok) return refuse(res);
  if (req.url === '/botlink/tools/manifest') return sendJson(res, 200, { tools: [orderStatus] });
  const call = JSON.parse(body.toString('utf8')) as { tool: string; args: { order: string } };
  sendJson(res, 200, { ok: true, result: { order: call.args.order, status: 'shipped' } });
}

/** Verifies nothing, answers the channel after `delay.ms` with two wrong fields, and lists two tools the engine drops. */
function brokenIntegrator(delay: { ms: number }) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.url === '/botlink/channel') {
      await new Promise((resolve) => setTimeout(resolve, delay.ms));
      return sendJson(res, 200, { reply: 'Order 1234 ships tomorrow.', handled: 'yes', customer: { email: 'not-an-address' } });
    }
    sendJson(res, 200, {
      tools: [
        { ...orderStatus, name: 'order status' },
        { name: 'lookup', description: 'Looks something up.', parameters: { type: 'array', properties: {} } },
      ],
    });
  };
}

describe('the endpoint doctor', () => {
  let good: TestHttpsServer;
  let broken: TestHttpsServer;
  const delay = { ms: 3_700 };
  const http = new GuardedClient({ allow: ['127.0.0.1/32'], ca: testCa });

  beforeAll(async () => {
    good = await startHttpsServer(goodIntegrator);
    broken = await startHttpsServer(brokenIntegrator(delay));
  });
  afterAll(async () => {
    await http.close();
    await good.close();
    await broken.close();
  });

  const statuses = (report: DoctorReport) => report.checks.map((c) => `${c.status} ${c.check}`);

  describe('a good endpoint', () => {
    it('passes every check, the named tool call included', async () => {
      const report = await runDoctor({ http }, { endpointUrl: `${good.origin}/botlink/channel`, key: KEY, tool: { name: 'order_status', args: { order: '1234' } } });
      const lines = doctorLines(report);
      expect(lines.slice(0, 6)).toEqual([
        'PASS  url              https, and 127.0.0.1 is an address the engine may call.',
        'PASS  tls              The certificate of 127.0.0.1 is valid and trusted.',
        'PASS  signature        A correctly signed request was answered HTTP 200.',
        'PASS  response         The answer follows protocol §2.2: a reply of 26 characters, handled true, handoff null.',
        'PASS  wrong_signature  A request with a wrong signature was refused with HTTP 401.',
        'PASS  stale_time       A correctly signed request with a sent_at 10 minutes old was refused with HTTP 401.',
      ]);
      expect(lines[6]).toMatch(/^PASS {2}latency {10}3 requests answered in \d+–\d+ ms \(median \d+ ms\), within the 3 s target\.$/);
      expect(lines.slice(7, 10)).toEqual([
        `PASS  manifest         ${good.origin}/botlink/tools/manifest lists 1 usable tool: order_status.`,
        'PASS  tool             order_status: the description and the parameters schema are accepted.',
        'PASS  tools_signature  A manifest request with a wrong signature was refused with HTTP 401.',
      ]);
      expect(lines[10]).toMatch(/^PASS {2}tool_call {8}order_status answered ok in \d+ ms: \{"order":"1234","status":"shipped"\}$/);
      expect(lines[11]).toBe('11 passed, 0 warnings, 0 failed');
      expect(report.ok).toBe(true);
    });

    it('sends the tool call with the arguments given, signed', async () => {
      const call = good.requests.findLast((r) => r.url === '/botlink/tools');
      expect(JSON.parse(call!.body.toString('utf8'))).toMatchObject({ tool: 'order_status', args: { order: '1234' }, language: 'en' });
    });

    it('fails the signature when the key is not the endpoint\'s, and says what to check', async () => {
      const report = await runDoctor({ http }, { endpointUrl: `${good.origin}/botlink/channel`, key: `${KEY}-other`, requests: 1 });
      expect(report.checks.find((c) => c.check === 'signature')).toEqual({
        check: 'signature',
        status: 'fail',
        message: 'A correctly signed request was refused with HTTP 401: check that the endpoint verifies with this key, used as text (protocol §5.2), over the raw body (protocol §5.5).',
      });
      expect(report.ok).toBe(false);
    });
  });

  describe('a broken endpoint', () => {
    it('names every problem: a wrong signature accepted, slow past 3.5 s, an invalid manifest', { timeout: 40_000 }, async () => {
      delay.ms = 3_700;
      const report = await runDoctor({ http }, { endpointUrl: `${broken.origin}/botlink/channel`, key: KEY, requests: 1 });
      const lines = doctorLines(report);
      expect(lines.slice(0, 7)).toEqual([
        'PASS  url              https, and 127.0.0.1 is an address the engine may call.',
        'PASS  tls              The certificate of 127.0.0.1 is valid and trusted.',
        'PASS  signature        A correctly signed request was answered HTTP 200.',
        'WARN  response         handled must be a boolean, not the string "yes"; treated as true.',
        'WARN  response         customer.email is not a valid email address; ignored.',
        'FAIL  wrong_signature  A request with a wrong signature was answered HTTP 200: verify X-Service-Signature over the raw body and answer 401 when it does not match (protocol §5.5).',
        'WARN  stale_time       A correctly signed request with a sent_at 10 minutes old was answered HTTP 200: refuse a sent_at more than 300 s from your clock (protocol §5.5.3), or a recorded request can be sent again.',
      ]);
      expect(lines[7]).toMatch(
        /^WARN {2}latency {10}The slowest of 1 request took 3\d{3} ms \(median 3\d{3} ms\), past the phone's 3\.5 s deadline: callers get the built-in AI's answer; WhatsApp waits 6 s\.$/,
      );
      expect(lines.slice(8)).toEqual([
        `FAIL  manifest         ${broken.origin}/botlink/tools/manifest lists 0 usable tools; 2 problems below.`,
        'FAIL  tool             tool 1 (order status): name must be 1 to 64 letters (A-Z, a-z), digits, _ or - (protocol §2.3); the tool is ignored.',
        'FAIL  tool             tool 2 (lookup): parameters.type must be "object", not "array"; the tool is ignored.',
        'FAIL  tools_signature  A manifest request with a wrong signature was answered HTTP 200: verify X-Service-Sent-At and X-Service-Signature and answer 401 (protocol §5.4, §5.5).',
        '3 passed, 4 warnings, 5 failed',
      ]);
      expect(report.ok).toBe(false);
    });

    it('fails the latency when no answer arrives within the 6 s WhatsApp deadline', { timeout: 40_000 }, async () => {
      delay.ms = 6_500;
      const report = await runDoctor({ http }, { endpointUrl: `${broken.origin}/botlink/channel`, key: KEY, requests: 1 });
      delay.ms = 3_700;
      expect(doctorLines(report)).toEqual([
        'PASS  url              https, and 127.0.0.1 is an address the engine may call.',
        'FAIL  latency          A correctly signed request got no answer within 6 s, the longest any conversation waits: the built-in AI answers every customer.',
        '1 passed, 0 warnings, 1 failed',
      ]);
    });
  });

  describe('from the command line', () => {
    const loopback = { OUTBOUND_ALLOW: '127.0.0.1/32' };

    it('prints the lines and exits 0 for a good endpoint', { timeout: 30_000 }, async () => {
      const run = await runCli(['doctor', `${good.origin}/botlink/channel`, '--key', KEY, '--requests', '1'], loopback);
      expect(run.code).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines[0]).toBe('PASS  url              https, and 127.0.0.1 is an address the engine may call.');
      expect(lines.at(-1)).toBe('10 passed, 0 warnings, 0 failed');
    });

    it('--json prints the report, and a fail exits 1 for a CI pipeline', { timeout: 30_000 }, async () => {
      delay.ms = 0;
      const run = await runCli(['doctor', `${broken.origin}/botlink/channel`, '--json', '--requests', '1'], { ...loopback, BOTLINK_KEY: KEY });
      delay.ms = 3_700;
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as DoctorReport;
      expect(report).toMatchObject({ endpoint_url: `${broken.origin}/botlink/channel`, ok: false, failed: 5 });
      expect(report.checks).toContainEqual({
        check: 'wrong_signature',
        status: 'fail',
        message: 'A request with a wrong signature was answered HTTP 200: verify X-Service-Signature over the raw body and answer 401 when it does not match (protocol §5.5).',
      });
    });

    it('refuses a loopback endpoint without OUTBOUND_ALLOW, as the engine does', { timeout: 30_000 }, async () => {
      const run = await runCli(['doctor', `${good.origin}/botlink/channel`, '--key', KEY]);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain('FAIL  url              The engine refuses this URL: 127.0.0.1 is a loopback address.');
    });

    it('without a key exits 2 with the usage', { timeout: 30_000 }, async () => {
      const run = await runCli(['doctor', `${good.origin}/botlink/channel`], { BOTLINK_KEY: '' });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--key (or BOTLINK_KEY) is required');
      expect(run.stderr).toContain('npm run cli -- doctor <endpoint_url> --key <key>');
    });
  });

  describe('an address the engine refuses', () => {
    it('is a fail, and nothing is sent', async () => {
      const report = await runDoctor({ http }, { endpointUrl: 'https://10.0.0.8/botlink/channel', key: KEY });
      expect(statuses(report)).toEqual(['fail url']);
      expect(report.checks[0]!.message).toBe('The engine refuses this URL: 10.0.0.8 is a private address.');
    });
  });
});
