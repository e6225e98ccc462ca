/**
 * The tests' load balancer (test/helpers/load-balancer.ts) against two real HTTP servers on loopback: requests go to
 * each in turn; a request body reaches the upstream and its answer comes back whole, with X-Forwarded-For naming the
 * client; an event stream arrives event by event (the upstream sends its second event only once the client has read
 * the first, so a balancer that held the body back would never deliver either); a client that leaves ends the
 * upstream's request; close() ends open streams.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoadBalancer, type LoadBalancer } from './load-balancer.ts';

interface Upstream {
  url: string;
  server: Server;
  /** The X-Forwarded-For and body of each request it got. */
  seen: { forwardedFor: string | undefined; body: string }[];
  /** Set by the event-stream route: lets it send its next event. */
  release?: () => void;
  /** Resolves when an event stream's request closed on this side. */
  streamClosed?: Promise<void>;
}

async function startUpstream(name: string): Promise<Upstream> {
  const upstream = { seen: [] } as unknown as Upstream;
  upstream.server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', async () => {
      upstream.seen.push({ forwardedFor: req.headers['x-forwarded-for'] as string | undefined, body });
      if (req.url === '/events') {
        upstream.streamClosed = new Promise((resolve) => res.on('close', () => resolve()));
        res.writeHead(200, { 'content-type': 'text/event-stream', connection: 'keep-alive' });
        for (const n of [1, 2, 3]) {
          res.write(`event: tick\ndata: ${n}\n\n`);
          await new Promise<void>((resolve) => (upstream.release = resolve));
        }
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name, body }));
    });
  });
  await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
  upstream.url = `http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}`;
  return upstream;
}

/** Reads an event stream's `data:` lines as they arrive. */
function events(body: ReadableStream<Uint8Array>): () => Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return async () => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        return /^data: (.*)$/m.exec(block)?.[1] ?? '';
      }
      const { value, done } = await reader.read();
      if (done) return 'end';
      buffer += decoder.decode(value, { stream: true });
    }
  };
}

describe('the load balancer in front of two engines', () => {
  let a: Upstream;
  let b: Upstream;
  let balancer: LoadBalancer;

  beforeAll(async () => {
    [a, b] = await Promise.all([startUpstream('a'), startUpstream('b')]);
    balancer = await startLoadBalancer();
  });
  afterAll(async () => {
    await balancer?.close();
    for (const u of [a, b]) {
      u?.server.closeAllConnections();
      await new Promise((resolve) => u?.server.close(resolve));
    }
  });

  it('answers 503 until it has engines, then sends the requests to each in turn, bodies both ways, with X-Forwarded-For', async () => {
    expect((await fetch(`${balancer.url}/`)).status).toBe(503);
    balancer.setUpstreams([a.url, b.url]);
    const names: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${balancer.url}/echo`, { method: 'POST', body: `message ${i}` });
      const answer = (await res.json()) as { name: string; body: string };
      expect(answer.body).toBe(`message ${i}`);
      names.push(answer.name);
    }
    expect(names).toEqual(['a', 'b', 'a', 'b']);
    expect(balancer.forwarded.map((f) => f.upstream)).toEqual([0, 1, 0, 1]);
    expect(a.seen.map((s) => s.forwardedFor)).toEqual(['127.0.0.1', '127.0.0.1']);
  });

  it('passes an event stream through event by event, and ends the upstream request when the client leaves', async () => {
    // The next request goes to a (four went before it).
    const controller = new AbortController();
    const res = await fetch(`${balancer.url}/events`, { signal: controller.signal });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const next = events(res.body!);
    expect(await next()).toBe('1');
    a.release!();
    expect(await next()).toBe('2');
    controller.abort();
    await a.streamClosed;
  });

  it('close() ends an open stream and stops listening', async () => {
    // The next request goes to b.
    const res = await fetch(`${balancer.url}/events`);
    const next = events(res.body!);
    expect(await next()).toBe('1');
    await balancer.close();
    await b.streamClosed;
    await expect(next()).rejects.toThrow();
    await expect(fetch(`${balancer.url}/echo`)).rejects.toThrow();
  });
});
