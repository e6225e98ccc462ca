import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAddressPolicy } from '../../src/net/address-policy.ts';
import {
  createGuardedLookup,
  GuardedClient,
  OutboundError,
  type GuardedClientOptions,
  type OutboundFailureReason,
  type ResolveHost,
} from '../../src/net/guarded-client.ts';
import { sendJson, startHttpsServer, testCa, type TestHttpsServer } from '../helpers/https-server.ts';

let server: TestHttpsServer;
/** TCP connections the server accepted since the last reset: proves a refused address was never connected to. */
let connections = 0;
const clients: GuardedClient[] = [];

/**
 * The test CA is passed as `ca`: vitest.config.ts sets NODE_EXTRA_CA_CERTS with `??=`, which keeps a value already in
 * the environment (this machine has one), and then the forks do not trust the test CA.
 */
function client(options: GuardedClientOptions = { allow: ['127.0.0.1/32'] }): GuardedClient {
  const c = new GuardedClient({ ca: testCa, ...options });
  clients.push(c);
  return c;
}

/** A lookup that answers from a table, like DNS under the test's control. */
function fakeDns(table: Record<string, string[]>): ResolveHost & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (addresses === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    }
    return addresses.map((address) => ({ address, family: (address.includes(':') ? 6 : 4) as 4 | 6 }));
  };
  return Object.assign(resolve, { calls });
}

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboundError);
  return err as OutboundError;
}

async function expectFailure(promise: Promise<unknown>, reason: OutboundFailureReason): Promise<OutboundError> {
  const err = await failure(promise);
  expect({ reason: err.reason, message: err.message }).toMatchObject({ reason });
  return err;
}

const get = (url: string, extra: { timeoutMs?: number; maxBytes?: number; signal?: AbortSignal } = {}) => ({
  method: 'GET' as const,
  url,
  timeoutMs: extra.timeoutMs ?? 2_000,
  maxBytes: extra.maxBytes ?? 64 * 1024,
  signal: extra.signal,
});

beforeAll(async () => {
  server = await startHttpsServer();
  server.server.on('connection', () => connections++);
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  server.requests.length = 0;
  connections = 0;
  server.handle((_req, res) => void res.end());
});

afterAll(async () => {
  await server.close();
});

describe('a public answer comes back whole', () => {
  it('returns a 200 JSON answer with status, headers, body and timings', async () => {
    server.handle((_req, res) => sendJson(res, 200, { reply: 'hello' }));
    const res = await client().request(get(`${server.origin}/channel?x=1`));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(JSON.parse(res.body.toString('utf8'))).toEqual({ reply: 'hello' });
    expect(res.truncated).toBe(false);
    expect(res.timings.firstByteMs).toBeGreaterThan(0);
    expect(res.timings.totalMs).toBeGreaterThanOrEqual(res.timings.firstByteMs);
    expect(server.requests.map((r) => r.url)).toEqual(['/channel?x=1']);
  });

  it('sends the method, headers and body it is given', async () => {
    server.handle((_req, res) => sendJson(res, 201, {}));
    const res = await client().request({
      method: 'POST',
      url: `${server.origin}/channel`,
      headers: { 'content-type': 'application/json', 'x-service-signature': 'abc' },
      body: '{"message":"hi"}',
      timeoutMs: 2_000,
      maxBytes: 1024,
    });
    expect(res.status).toBe(201);
    const [received] = server.requests;
    expect(received?.method).toBe('POST');
    expect(received?.headers['x-service-signature']).toBe('abc');
    expect(received?.body.toString('utf8')).toBe('{"message":"hi"}');
  });

  it('returns a non-2xx status as a response, not an error', async () => {
    server.handle((_req, res) => sendJson(res, 503, { error: 'down' }));
    const res = await client().request(get(`${server.origin}/`));
    expect(res.status).toBe(503);
  });

  it('connects to a host name through the guarded lookup when it resolves to an allowed address', async () => {
    const dns = fakeDns({ 'api.integrator.test': ['127.0.0.1'] });
    server.handle((_req, res) => sendJson(res, 200, { ok: true }));
    const res = await client({ allow: ['127.0.0.1/32'], lookup: dns }).request(
      get(`https://api.integrator.test:${server.port}/channel`),
    );
    expect(res.status).toBe(200);
    expect(dns.calls).toEqual(['api.integrator.test']);
    expect(server.requests[0]?.headers.host).toBe(`api.integrator.test:${server.port}`);
  });

  it('exempts an allowed host name whatever it resolves to', async () => {
    const dns = fakeDns({ 'integrator.test': ['127.0.0.1'] });
    const res = await client({ allow: ['integrator.test'], lookup: dns }).request(
      get(`https://integrator.test:${server.port}/`),
    );
    expect(res.status).toBe(200);
  });
});

describe('redirects are never followed', () => {
  it('returns a 302 as a 302 and never requests the Location target', async () => {
    server.handle((req, res) => {
      if (req.url === '/start') {
        res.writeHead(302, { location: '/target' });
        res.end();
      } else sendJson(res, 200, { reached: true });
    });
    const res = await client().request(get(`${server.origin}/start`));
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/target');
    expect(server.requests.map((r) => r.url)).toEqual(['/start']);
  });
});

describe('a response beyond maxBytes is cut off at that size (protocol §7.2)', () => {
  it('returns exactly maxBytes of a 200 KB body with truncated: true', async () => {
    const big = Buffer.alloc(200 * 1024, 'a');
    big.write('START', 0);
    server.handle((_req, res) => void res.end(big));
    const res = await client().request(get(`${server.origin}/`, { maxBytes: 64 * 1024 }));
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(64 * 1024);
    expect(res.body.subarray(0, 5).toString()).toBe('START');
    expect(res.truncated).toBe(true);
  });

  it('keeps a body of exactly maxBytes whole', async () => {
    server.handle((_req, res) => void res.end(Buffer.alloc(1000, 'b')));
    const res = await client().request(get(`${server.origin}/`, { maxBytes: 1000 }));
    expect(res.body.length).toBe(1000);
    expect(res.truncated).toBe(false);
  });

  it('stops reading an endless body at maxBytes and closes that connection', async () => {
    let serverSocketClosed: Promise<void> = Promise.resolve();
    server.handle((req, res) => {
      serverSocketClosed = new Promise((resolve) => req.socket.once('close', () => resolve()));
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(16 * 1024, 'c');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', pump);
      pump();
    });
    const started = performance.now();
    const res = await client().request(get(`${server.origin}/`, { maxBytes: 100_000, timeoutMs: 5_000 }));
    expect(res.body.length).toBe(100_000);
    expect(res.truncated).toBe(true);
    await serverSocketClosed;
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('one deadline covers connect, headers and body', () => {
  it('fails a slow-drip body (a byte every 100 ms, forever) with timeout within the deadline', async () => {
    server.handle((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('x');
      const drip = setInterval(() => res.write('x'), 100);
      req.socket.once('close', () => clearInterval(drip));
    });
    const started = performance.now();
    const err = await expectFailure(client().request(get(`${server.origin}/`, { timeoutMs: 300 })), 'timeout');
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(2_000);
    expect(err.message).toMatch(/300 ms \(while reading the body\)/);
  });

  it('fails with timeout when connecting never finishes (a DNS lookup that never answers)', async () => {
    const hanging: ResolveHost = () => new Promise(() => {});
    const c = client({ lookup: hanging });
    const started = performance.now();
    const err = await expectFailure(
      c.request(get(`https://slow-dns.example:${server.port}/`, { timeoutMs: 200 })),
      'timeout',
    );
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(err.message).toMatch(/before the status line/);
    // The abandoned connect attempt does not hold close() up either.
    const closing = performance.now();
    await c.close();
    expect(performance.now() - closing).toBeLessThan(1_000);
  });

  it('a request given up while its connection opens is never sent once the connection is there', async () => {
    // DNS answers only after the deadline: the socket opens for a request that no longer waits.
    const slow: ResolveHost = () => new Promise((r) => setTimeout(() => r([{ address: '127.0.0.1', family: 4 }]), 300));
    const c = client({ lookup: slow, allow: ['127.0.0.1/32'] });
    await expectFailure(c.request(get(`https://api.integrator.test:${server.port}/late`, { timeoutMs: 100 })), 'timeout');
    await new Promise((r) => setTimeout(r, 600));
    expect(server.requests.filter((r) => r.url === '/late')).toEqual([]);
    // The client works on for the next request.
    expect((await c.request(get(`https://api.integrator.test:${server.port}/next`))).status).toBe(200);
  });

  it('fails with timeout when the headers never come', async () => {
    server.handle(() => {});
    const started = performance.now();
    const err = await expectFailure(client().request(get(`${server.origin}/`, { timeoutMs: 300 })), 'timeout');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(err.message).toMatch(/before the status line/);
    expect(server.requests).toHaveLength(1);
  });

  it('ends with aborted when the caller cancels, before the deadline', async () => {
    server.handle(() => {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    const err = await expectFailure(
      client().request(get(`${server.origin}/`, { timeoutMs: 5_000, signal: controller.signal })),
      'aborted',
    );
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(err.message).toMatch(/cancelled by the caller/);
  });

  it('ends with aborted without connecting when the caller signal is already aborted', async () => {
    await expectFailure(client().request(get(`${server.origin}/`, { signal: AbortSignal.abort() })), 'aborted');
    expect(connections).toBe(0);
  });
});

describe('requests wait for a free connection in line, and one given up there costs no connection', () => {
  it('a request whose deadline passes while every connection is busy is never sent, and the busy connection is kept for the next', async () => {
    const ports = new Map<string, number>();
    server.handle((req, res) => {
      ports.set(req.url ?? '', req.socket.remotePort ?? 0);
      setTimeout(() => sendJson(res, 200, { url: req.url }), req.url === '/slow' ? 300 : 0);
    });
    const c = client({ allow: ['127.0.0.1/32'], connectionsPerOrigin: 1 });
    const slow = c.request(get(`${server.origin}/slow`));
    await new Promise((r) => setTimeout(r, 50));
    const started = performance.now();
    const err = await expectFailure(c.request(get(`${server.origin}/queued`, { timeoutMs: 100 })), 'timeout');
    expect(performance.now() - started).toBeLessThan(250);
    expect(err.neverSent).toBe(true);
    expect(err.message).toMatch(/waited 100 ms for a free connection while all 1 connections to 127\.0\.0\.1:\d+ were busy, so it was never sent/);
    expect((await slow).status).toBe(200);
    expect((await c.request(get(`${server.origin}/after`))).status).toBe(200);
    // Given up in undici's own queue, the request was aborted when the socket freed, which destroyed that socket: the
    // next request then needed a connection (and a TLS handshake) of its own.
    expect(server.requests.map((r) => r.url)).toEqual(['/slow', '/after']);
    expect(ports.get('/after')).toBe(ports.get('/slow'));
  });

  it('a caller that cancels while its request waits in line ends it at once, never sent', async () => {
    server.handle((_req, res) => void setTimeout(() => res.end(), 300));
    const c = client({ allow: ['127.0.0.1/32'], connectionsPerOrigin: 1 });
    const first = c.request(get(`${server.origin}/first`));
    const controller = new AbortController();
    const waiting = c.request(get(`${server.origin}/waiting`, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 30);
    const err = await expectFailure(waiting, 'aborted');
    expect(err.neverSent).toBe(true);
    await first;
    expect(server.requests.map((r) => r.url)).toEqual(['/first']);
  });

  it('the next in line is sent once the request before it is done with its connection, even when that one was cancelled on the wire', async () => {
    server.handle((req, res) => void setTimeout(() => sendJson(res, 200, { url: req.url }), req.url === '/cancelled' ? 1_000 : 10));
    const c = client({ allow: ['127.0.0.1/32'], connectionsPerOrigin: 1 });
    const controller = new AbortController();
    const cancelled = c.request(get(`${server.origin}/cancelled`, { signal: controller.signal }));
    const next = c.request(get(`${server.origin}/next`));
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    await expectFailure(cancelled, 'aborted');
    // Its cancel destroyed the connection: the next one is sent on a new connection, not on the one being destroyed.
    expect((await next).status).toBe(200);
    expect(server.requests.map((r) => r.url)).toEqual(['/cancelled', '/next']);
  });

  it('serves the line first come, first served, each on the connection the one before it freed', async () => {
    const ports = new Set<number>();
    server.handle((req, res) => {
      ports.add(req.socket.remotePort ?? 0);
      setTimeout(() => sendJson(res, 200, { url: req.url }), 20);
    });
    const c = client({ allow: ['127.0.0.1/32'], connectionsPerOrigin: 2 });
    const urls = Array.from({ length: 8 }, (_, i) => `/n${i}`);
    const answers = await Promise.all(urls.map((u) => c.request(get(`${server.origin}${u}`))));
    expect(answers.map((a) => JSON.parse(a.body.toString()).url)).toEqual(urls);
    // Two at a time, in the order asked: n0 and n1 first, then n2 and n3, and so on.
    const arrived = server.requests.map((r) => r.url);
    for (let i = 0; i < urls.length; i += 2) expect(new Set(arrived.slice(i, i + 2))).toEqual(new Set(urls.slice(i, i + 2)));
    expect(ports.size).toBe(2);
    // Every failure that was sent says so: a timeout on the wire is the host's.
    server.handle(() => {});
    const onWire = await expectFailure(c.request(get(`${server.origin}/silent`, { timeoutMs: 100 })), 'timeout');
    expect(onWire.neverSent).toBe(false);
  });
});

describe('TLS and connection failures are told apart', () => {
  it('fails with tls when the certificate does not name the host', async () => {
    const dns = fakeDns({ 'wrong-name.example': ['127.0.0.1'] });
    const err = await expectFailure(
      client({ allow: ['127.0.0.1/32'], lookup: dns }).request(get(`https://wrong-name.example:${server.port}/`)),
      'tls',
    );
    expect(err.message).toMatch(/wrong-name\.example/);
    expect(server.requests).toHaveLength(0);
  });

  it('fails with tls when the server does not speak TLS', async () => {
    const plain = createTcpServer((socket: Socket) => {
      socket.on('error', () => {});
      socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n'));
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const { port } = plain.address() as AddressInfo;
    try {
      const err = await expectFailure(client().request(get(`https://127.0.0.1:${port}/`)), 'tls');
      expect(err.message).toBe(`The TLS connection to 127.0.0.1:${port} failed: wrong version number.`);
    } finally {
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });

  it('fails with connection when nothing listens on the port', async () => {
    const probe = createTcpServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const err = await expectFailure(client().request(get(`https://127.0.0.1:${port}/`)), 'connection');
    expect(err.message).toMatch(/ECONNREFUSED/);
  });

  it('fails with connection when the host name does not resolve', async () => {
    const err = await expectFailure(
      client({ lookup: fakeDns({}) }).request(get('https://nowhere.example/')),
      'connection',
    );
    expect(err.message).toMatch(/ENOTFOUND/);
  });

  it('fails with invalid_url for http, credentials and garbage, before any connection', async () => {
    const c = client();
    await expectFailure(c.request(get(`http://127.0.0.1:${server.port}/`)), 'invalid_url');
    await expectFailure(c.request(get(`https://u:p@127.0.0.1:${server.port}/`)), 'invalid_url');
    const err = await expectFailure(c.request(get('not a url')), 'invalid_url');
    expect(err.message).toBe('The URL cannot be called: the URL is not a valid absolute URL.');
    expect(connections).toBe(0);
  });
});

describe('internal or local addresses are refused (protocol §4)', () => {
  it('refuses a literal loopback URL without an allow list before any connection', async () => {
    const err = await expectFailure(client({}).request(get(`${server.origin}/`)), 'refused_address');
    expect(err.message).toBe('Refused to connect: 127.0.0.1 is a loopback address.');
    expect(connections).toBe(0);
  });

  it('refuses a host name that resolves to loopback, and the server sees no connection', async () => {
    const dns = fakeDns({ 'rebind.example': ['127.0.0.1'] });
    const err = await expectFailure(
      client({ lookup: dns }).request(get(`https://rebind.example:${server.port}/`)),
      'refused_address',
    );
    expect(err.message).toBe(
      `Refused to connect to rebind.example:${server.port}: ` +
        'rebind.example resolves to a loopback address, which is refused.',
    );
    expect(err.cause).toBeInstanceOf(Error);
    expect(dns.calls).toEqual(['rebind.example']);
    expect(connections).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a host name with a public and a private address: the private one is never connected to', async () => {
    const dns = fakeDns({ 'mixed.example': ['93.184.215.14', '127.0.0.1'] });
    const c = client({ lookup: dns });
    await expectFailure(c.request(get(`https://mixed.example:${server.port}/`)), 'refused_address');
    expect(connections).toBe(0);
  });

  it('closes the DNS rebinding window: validateUrl passes, then the request is refused at connect time', async () => {
    let answer = '93.184.215.14';
    const dns: ResolveHost = async () => [{ address: answer, family: 4 }];
    const c = client({ lookup: dns });
    const url = `https://rebind.example:${server.port}/channel`;
    expect(await c.validateUrl(url)).toMatchObject({ ok: true });
    answer = '127.0.0.1';
    const err = await expectFailure(c.request(get(url)), 'refused_address');
    expect(err.message).toMatch(/rebind\.example resolves to a loopback address, which is refused/);
    expect(connections).toBe(0);
  });
});

describe('validateUrl resolves the host now and gives the reason (dashboard 422)', () => {
  const dns = fakeDns({
    'public.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    'internal.example': ['10.1.2.3'],
    'half.example': ['93.184.215.14', 'fd00::1'],
  });

  it.each([
    ['https://public.example/channel', { ok: true }],
    ['https://8.8.8.8/channel', { ok: true }],
    ['http://public.example/', { ok: false, reason: 'the URL must use https, not http' }],
    ['https://user:pw@public.example/', { ok: false, reason: 'the URL must not contain a user name or password' }],
    ['https://0x7f.1/', { ok: false, reason: '127.0.0.1 is a loopback address' }],
    ['https://localhost/', { ok: false, reason: 'localhost is a loopback host name' }],
    [
      'https://internal.example/',
      { ok: false, reason: 'internal.example resolves to a private address, which is refused' },
    ],
    [
      'https://half.example/',
      { ok: false, reason: 'half.example resolves to a unique-local address, which is refused' },
    ],
    ['https://missing.example/', { ok: false, reason: 'missing.example could not be resolved (ENOTFOUND)' }],
  ] as const)('%s', async (url, expected) => {
    const result = await client({ lookup: dns }).validateUrl(url);
    expect(result).toMatchObject(expected);
    if (result.ok) expect(result.url).toBeInstanceOf(URL);
  });

  it('gives up on a DNS server that never answers, with the reason', async () => {
    const c = client({ lookup: () => new Promise(() => {}), validateDnsTimeoutMs: 100 });
    const started = performance.now();
    expect(await c.validateUrl('https://hung.example/')).toEqual({ ok: false, reason: 'hung.example did not resolve within 100 ms' });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('accepts what the allow list exempts', async () => {
    const c = client({ allow: ['internal.example'], lookup: dns });
    expect(await c.validateUrl('https://internal.example/')).toMatchObject({ ok: true });
  });
});

describe('the lookup given to the connector answers both ways Node asks', () => {
  const policy = createAddressPolicy([]);
  const dns = fakeDns({
    'two.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    'bad.example': ['8.8.8.8', '10.0.0.1'],
  });
  const lookup = createGuardedLookup(dns, policy);
  const ask = (hostname: string, options: Parameters<typeof lookup>[1]) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>((resolve) =>
      lookup(hostname, options, (err, address, family) => resolve({ err, address, family })),
    );

  it('gives every address with all: true (autoSelectFamily)', async () => {
    const { err, address } = await ask('two.example', { all: true });
    expect(err).toBeNull();
    expect(address).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
  });

  it('gives one address and its family without all, honouring a family hint', async () => {
    expect(await ask('two.example', {})).toMatchObject({ err: null, address: '93.184.215.14', family: 4 });
    expect(await ask('two.example', { family: 6 })).toMatchObject({
      err: null,
      address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c',
      family: 6,
    });
  });

  it('fails both ways when any address is refused', async () => {
    expect((await ask('bad.example', { all: true })).err?.message).toMatch(/^bad\.example resolves to a private address, which is refused$/);
    expect((await ask('bad.example', {})).err?.message).toMatch(/^bad\.example resolves to a private address, which is refused$/);
  });
});

describe('close', () => {
  it('lets a request in flight finish, then refuses new ones', async () => {
    server.handle((_req, res) => {
      setTimeout(() => sendJson(res, 200, { late: true }), 100);
    });
    const c = client();
    const inFlight = c.request(get(`${server.origin}/`));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await c.close();
    expect((await inFlight).status).toBe(200);
    const err = await expectFailure(c.request(get(`${server.origin}/`)), 'connection');
    expect(err.message).toBe('The outbound client is closed.');
  });

  it('has every close() wait for the requests in flight', async () => {
    server.handle((_req, res) => {
      setTimeout(() => sendJson(res, 200, { late: true }), 100);
    });
    const c = client();
    let answered = false;
    const inFlight = c.request(get(`${server.origin}/`)).then((r) => {
      answered = true;
      return r;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const closed = await Promise.all([c.close().then(() => answered), c.close().then(() => answered)]);
    expect(closed).toEqual([true, true]);
    expect((await inFlight).status).toBe(200);
  });
});
