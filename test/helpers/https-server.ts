import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { verifyChannelRequest } from '../../src/receiver/index.ts';

const tlsDir = new URL('../fixtures/tls/', import.meta.url);
/** The test CA (trusted by the test processes through NODE_EXTRA_CA_CERTS, see vitest.config.ts). */
export const testCa = readFileSync(new URL('ca.pem', tlsDir), 'utf8');
const cert = readFileSync(new URL('server.pem', tlsDir), 'utf8');
const key = readFileSync(new URL('server-key.pem', tlsDir), 'utf8');

export type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void | Promise<void>;

export interface TestHttpsServer {
  /** `https://127.0.0.1:<port>` (the certificate also names localhost, ::1 and *.integrator.test). */
  origin: string;
  port: number;
  server: Server;
  /** Every request received, with its raw body bytes. */
  requests: { method: string; url: string; headers: IncomingMessage['headers']; body: Buffer }[];
  /** Replace the handler between tests. */
  handle(handler: Handler): void;
  close(): Promise<void>;
}

/** A real HTTPS server on loopback, signed by the test CA, that records each request and its raw body. */
export async function startHttpsServer(handler: Handler = (_req, res) => void res.end()): Promise<TestHttpsServer> {
  let current = handler;
  const requests: TestHttpsServer['requests'] = [];
  const sockets = new Set<Socket>();
  const server = createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      Promise.resolve(current(req, res, body)).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    });
  });
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://127.0.0.1:${port}`,
    port,
    server,
    requests,
    handle(h) {
      current = h;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answer with a JSON body. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** An integrator's first check: a request without `key`'s valid X-Service-Signature is answered 401 (true: refused). */
export function refuseUnsigned(key: string, req: IncomingMessage, res: ServerResponse, body: Buffer): boolean {
  if (verifyChannelRequest(key, body, req.headers['x-service-signature'] as string | undefined).ok) return false;
  res.statusCode = 401;
  res.end();
  return true;
}
