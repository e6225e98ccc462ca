/**
 * The integrator's endpoint for the benchmarks: a loopback HTTPS server with the test certificate that answers every
 * POST with one small fixed channel response once it has read the whole body. It runs in a child process of its own
 * (bench/lib/integrator.ts forks it) so the server does not compete with the client for one event loop.
 *
 * IPC: sends `{ type: 'listening', port }` once listening; answers `{ type: 'cpu' }` with `{ type: 'cpu', usage }`
 * (process.cpuUsage in microseconds) so the parent can tell whether the server was the bottleneck. It exits when the
 * parent goes away.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

const tlsDir = new URL('../../test/fixtures/tls/', import.meta.url);
const cert = readFileSync(new URL('server.pem', tlsDir), 'utf8');
const key = readFileSync(new URL('server-key.pem', tlsDir), 'utf8');

/** How long the integrator takes to answer (INTEGRATOR_DELAY_MS, default 0): the sessions benchmark uses 50 ms. */
const delayMs = Number(process.env.INTEGRATOR_DELAY_MS ?? 0);
const reply = Buffer.from(JSON.stringify({ reply: 'Your order ships tomorrow.', handled: true }));
const replyHeaders = { 'content-type': 'application/json', 'content-length': String(reply.length) };
/**
 * INTEGRATOR_ECHO_REF=1: the answer repeats the prompt's reference (`ref p<call>x<n>`, bench/processes/phone-callers.ts), so
 * the callers match every answer to its prompt by id.
 */
const echoRef = process.env.INTEGRATOR_ECHO_REF === '1';
const REF = /ref p\d+x\d+/;

function replyFor(body: string): Buffer {
  if (!echoRef) return reply;
  const ref = REF.exec(body)?.[0] ?? 'ref none';
  return Buffer.from(JSON.stringify({ reply: `Your order ships tomorrow. (${ref})`, handled: true }));
}

const server = createServer({ cert, key }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => {
    if (echoRef) chunks.push(chunk);
  });
  req.on('end', () => {
    if (req.method !== 'POST') {
      res.writeHead(405, { 'content-length': '0' });
      res.end();
      return;
    }
    const body = replyFor(echoRef ? Buffer.concat(chunks).toString('utf8') : '');
    const headers = echoRef ? { 'content-type': 'application/json', 'content-length': String(body.length) } : replyHeaders;
    if (delayMs > 0) {
      setTimeout(() => {
        res.writeHead(200, headers);
        res.end(body);
      }, delayMs);
      return;
    }
    res.writeHead(200, headers);
    res.end(body);
  });
});
// Rounds alternate between two clients, so one client's sockets sit idle for a whole round; a long keep-alive
// (announced to undici in the Keep-Alive header) keeps every round on warm connections, with no TLS handshakes.
let tlsHandshakes = 0;
server.on('secureConnection', () => tlsHandshakes++);
server.keepAliveTimeout = 120_000;
server.headersTimeout = 130_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: 'listening', port });
});

process.on('message', (message: { type?: string }) => {
  if (message.type === 'cpu') process.send?.({ type: 'cpu', usage: process.cpuUsage(), tlsHandshakes });
});
process.on('disconnect', () => process.exit(0));
