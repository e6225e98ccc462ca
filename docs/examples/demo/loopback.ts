/**
 * The demo's own servers on 127.0.0.1 (the Graph API recorder, the webhook receiver) and the certificate they share
 * with the order desk: the test CA's in test/fixtures/tls, which no one trusts but this demo process.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';

const TLS_DIR = new URL('../../../test/fixtures/tls/', import.meta.url);
export const DEMO_TLS = { cert: readFileSync(new URL('server.pem', TLS_DIR)), key: readFileSync(new URL('server-key.pem', TLS_DIR)) };

/**
 * Trust the test CA in this process, for every HTTPS client in it (Botlink's outbound client included). It is what
 * NODE_EXTRA_CA_CERTS does at process start (docs/interfaces.md, configuration), done at run time with Node 24's
 * `tls.setDefaultCACertificates`, so `npm run demo` needs neither a second process nor a variable.
 */
export function trustDemoCa(): void {
  const ca = readFileSync(new URL('ca.pem', TLS_DIR), 'utf8');
  const current = getCACertificates('default');
  if (!current.some((pem) => pem.trim() === ca.trim())) setDefaultCACertificates([...current, ca]);
}

export interface LoopbackServer {
  /** https://127.0.0.1:<port> */
  origin: string;
  close(): Promise<void>;
}

/** An HTTPS server on a free loopback port, with the request body read whole. */
export async function startLoopbackServer(handle: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  const server = createServer(DEMO_TLS, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  server.on('secureConnection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}
