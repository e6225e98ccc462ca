/**
 * A plain load balancer on loopback for the tests that run several engines behind one address (docs/operations.md,
 * "Behind a load balancer"): each request goes to the next engine in turn (round robin, no stickiness), so a page's
 * consecutive requests, its live streams and the widget's long polls land on different engines, as they may behind
 * any balancer. Bodies stream both ways as they come (Server-Sent Events and long polls pass through unbuffered),
 * `X-Forwarded-For` gets the client's address appended (the engines trust it with TRUST_PROXY=loopback), and `Host` is
 * passed on as the client sent it. WebSocket upgrades are not forwarded (no test needs them through it yet).
 */
import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ClientRequest, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoadBalancer {
  /** `http://127.0.0.1:<port>`: the one address in front of the engines (their PUBLIC_URL). */
  url: string;
  /** Every request forwarded, in order: its method, path and the index of the upstream it went to. */
  forwarded: { method: string; path: string; upstream: number }[];
  /** The engines' base URLs (`http://127.0.0.1:<port>`), taken in turn; until set, requests are answered 503. */
  setUpstreams(urls: readonly string[]): void;
  /** Stops listening, ends every open request and stream both ways, and resolves once the server is closed. */
  close(): Promise<void>;
}

/** RFC 9110 §7.6.1: these describe one connection, never the message, so a proxy does not pass them on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.includes(name)) out[name] = value;
  }
  return out;
}

export async function startLoadBalancer(upstreams: readonly string[] = []): Promise<LoadBalancer> {
  let targets = upstreams.map((u) => new URL(u));
  let next = 0;
  const forwarded: LoadBalancer['forwarded'] = [];
  const inFlight = new Set<ClientRequest>();
  // Idle connections to the engines are kept 4 s (as undici does), well under the engines' own 125 s, so the balancer
  // never sends a request on a socket the engine is closing.
  const agent = new Agent({ keepAlive: true, timeout: 4_000 });

  const server = createServer((req, res) => {
    if (targets.length === 0) {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end('No engine behind the balancer yet.\n');
      return;
    }
    const index = next;
    next = (next + 1) % targets.length;
    const target = targets[index]!;
    forwarded.push({ method: req.method ?? 'GET', path: req.url ?? '/', upstream: index });

    const headers = endToEnd(req.headers);
    const client = req.socket.remoteAddress ?? '';
    headers['x-forwarded-for'] = req.headers['x-forwarded-for'] ? `${String(req.headers['x-forwarded-for'])}, ${client}` : client;
    headers['x-forwarded-proto'] = 'http';
    if (req.headers.host) headers['x-forwarded-host'] = req.headers.host;

    const upstream = request({ agent, host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer: IncomingMessage) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
      // The head goes out at once: an event stream's client sees it open before the first event.
      res.flushHeaders();
      answer.pipe(res);
      answer.on('error', () => res.destroy());
      answer.on('aborted', () => res.destroy());
    });
    inFlight.add(upstream);
    upstream.on('close', () => inFlight.delete(upstream));
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' }).end('The engine could not be reached.\n');
      else res.destroy();
    });
    // The client went away (a closed tab, an aborted poll): the engine's side of the request ends too.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
  // Long polls and event streams stay open as long as they like; the engines bound them.
  server.requestTimeout = 0;

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forwarded,
    setUpstreams(urls) {
      targets = urls.map((u) => new URL(u));
      next = 0;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const upstream of inFlight) upstream.destroy();
      agent.destroy();
      await closed;
    },
  };
}
